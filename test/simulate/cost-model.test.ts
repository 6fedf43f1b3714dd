import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { billedMsOf, computeCost, DYNAMODB_ROUND_TRIP_MS, HOURS_PER_MONTH, SQS_REQUESTS_PER_INVOCATION } from '../../scripts/cost/cost-model';
import type { Deployment, MeasuredCounts, Prices } from '../../scripts/cost/cost-model';
import { deploymentOf } from '../../scripts/cost';

const prices: Prices = {
  asOf: '2026-12-01',
  region: 'test-1',
  lambda: { arm64PerGbSecond: 0.00001, x86_64PerGbSecond: 0.00002, perMillionRequests: 0.2 },
  eventBridge: { perMillionPutEventsEntries: 1 },
  sqs: { perMillionStandardRequests: 0.4 },
  dynamoDb: { perMillionWriteRequestUnits: 0.625, perMillionReadRequestUnits: 0.125 },
  cloudWatchLogs: { perGbIngested: 0.5 },
  ec2: { instanceType: 'm7i.large', perHour: 0.1, vcpus: 2, memoryGiB: 8 },
  inClusterController: { replicas: 3, cpuRequest: 2, memoryRequestGiB: 4 },
};

const deployment: Deployment = { architecture: 'arm64', memoryMb: { pin: 1024 }, defaultMemoryMb: 512, forwarderShards: 2, forwarderMemoryMb: 1024, forwarderDutyCycle: 1 };

/** 10 changes: pin 10 × 1 s at 1 GB, 20 entries, 30 RRU, 40 WRU, 1 GiB of logs. */
const counts: MeasuredCounts = {
  changes: 10,
  clusters: 4,
  functions: { pin: { invocations: 10, durationMs: 10_000 } },
  hintEntries: 20,
  readUnits: 30,
  writeUnits: 40,
  logBytes: 1024 ** 3,
};

const line = (table: ReturnType<typeof computeCost>, prefix: string): number => table.lines.find((entry) => entry.item.startsWith(prefix))?.perMillionChanges ?? Number.NaN;

describe('Function: computeCost', () => {
  it.each([
    // [line item, expected $ per million changes]
    ['Lambda compute', 1 * 0.00001 * 1e6], // 1 GB-s per change
    ['Lambda requests', 1 * 0.2], // 1 invocation per change
    ['EventBridge', 2 * 1], // 2 entries per change
    ['SQS', SQS_REQUESTS_PER_INVOCATION * 0.4],
    ['DynamoDB read', 3 * 0.125],
    ['DynamoDB write', 4 * 0.625],
    ['CloudWatch Logs', 0.1 * 0.5 * 1e6], // 0.1 GiB per change
  ])('prices %s per change, per million changes', (item, expected) => {
    // Act
    const table = computeCost(counts, deployment, prices, 1_000);

    // Assess
    expect(line(table, item)).toBeCloseTo(expected, 6);
  });

  it('totals the lines, and adds the forwarder spread over the clusters to each cluster-month', () => {
    // Act
    const table = computeCost(counts, deployment, prices, 1_000);

    // Assess
    const total = table.lines.reduce((sum, entry) => sum + entry.perMillionChanges, 0);
    expect(table.perMillionChanges).toBeCloseTo(total, 9);
    const forwarderMonth = 2 * HOURS_PER_MONTH * 3600 * 1 * 0.00001; // 2 shards × 1 GB always on
    expect(table.forwarderPerClusterMonth).toBeCloseTo(forwarderMonth / 4, 6);
    expect(table.perClusterMonth).toBeCloseTo((1_000 / 1e6) * total + forwarderMonth / 4, 6);
  });

  it('prices x86_64 compute at its own rate', () => {
    const arm = computeCost(counts, deployment, prices, 0);
    const x86 = computeCost(counts, { ...deployment, architecture: 'x86_64' }, prices, 0);
    expect(line(x86, 'Lambda compute')).toBeCloseTo(2 * line(arm, 'Lambda compute'), 9);
  });

  it.each([
    // [cpu, memory GiB, instances per replica]: the tighter resource decides
    [2, 4, 1],
    [1, 8, 1],
    [1, 2, 0.5],
    [0.5, 1, 0.25],
  ])('an in-cluster replica requesting %s CPU and %s GiB takes %s of an instance', (cpuRequest, memoryRequestGiB, share) => {
    const table = computeCost(counts, deployment, { ...prices, inClusterController: { replicas: 3, cpuRequest, memoryRequestGiB } }, 0);
    expect(table.inCluster.instancesPerReplica).toBe(share);
    expect(table.inCluster.perClusterMonth).toBeCloseTo(3 * share * 0.1 * HOURS_PER_MONTH, 9);
  });

  it('prices compute from CPU time plus round trips when the report has CPU time, and gives both bounds', () => {
    // Prepare: 10 pin invocations, 10 s of wall time, 2 s of CPU, 100 requests at 5 ms, 40 DynamoDB calls.
    const measured: MeasuredCounts = { ...counts, kubernetesLatencyMs: 5, functions: { pin: { invocations: 10, durationMs: 10_000, cpuMs: 2_000, kubernetesRequests: 100, dynamoDbCalls: 40 } } };

    // Act
    const table = computeCost(measured, deployment, prices, 1_000);

    // Assess: (2 s + 0.5 s + 40 × 5 ms) at 1 GB over 10 changes.
    const billedSeconds = 2 + 0.5 + (40 * DYNAMODB_ROUND_TRIP_MS) / 1000;
    expect(line(table, 'Lambda compute (arm64 GB-s: CPU time + round trips)')).toBeCloseTo((billedSeconds / 10) * 0.00001 * 1e6, 6);
    expect(table.compute.basis).toBe('cpu and round trips');
    expect(table.compute.cpuOnlyPerMillionChanges).toBeCloseTo(0.2 * 0.00001 * 1e6, 6);
    expect(table.compute.wallTimePerMillionChanges).toBeCloseTo(1 * 0.00001 * 1e6, 6);
  });

  it('prices compute from wall time for a report without CPU time', () => {
    const table = computeCost(counts, deployment, prices, 1_000);
    expect(table.compute.basis).toBe('wall time');
    expect(table.compute.cpuOnlyPerMillionChanges).toBeNull();
    expect(line(table, 'Lambda compute (arm64 GB-s: measured wall time)')).toBeCloseTo(10, 6);
  });

  it.each<[string, Parameters<typeof billedMsOf>[0], number | undefined, { ms: number; basis: string }]>([
    ['no CPU time: the wall time', { invocations: 1, durationMs: 900 }, 5, { ms: 900, basis: 'wall time' }],
    ['CPU and requests', { invocations: 1, durationMs: 900, cpuMs: 20, kubernetesRequests: 4, dynamoDbCalls: 2 }, 5, { ms: 20 + 20 + 2 * DYNAMODB_ROUND_TRIP_MS, basis: 'cpu and round trips' }],
    ['CPU without calls', { invocations: 1, durationMs: 900, cpuMs: 20 }, 5, { ms: 20, basis: 'cpu and round trips' }],
    ['no latency known: the wall time', { invocations: 1, durationMs: 900, cpuMs: 20 }, undefined, { ms: 900, basis: 'wall time' }],
  ])('billedMsOf: %s', (_, entry, latencyMs, expected) => {
    expect(billedMsOf(entry, latencyMs)).toEqual(expected);
  });

  it('a run with no change written costs nothing per change', () => {
    const table = computeCost({ ...counts, changes: 0 }, deployment, prices, 1_000);
    expect(table.perMillionChanges).toBe(0);
  });
});

describe('Function: deploymentOf', () => {
  it('reads serverless.yml: the architecture, each memory size, the forwarder shards', () => {
    const deployed = deploymentOf(readFileSync(new URL('../../serverless.yml', import.meta.url), 'utf8'), undefined);
    expect(deployed.architecture).toBe('arm64');
    expect(deployed.forwarderShards).toBe(4);
    expect(deployed.memoryMb['revision-gc']).toBe(1024);
    expect(deployed.memoryMb.pin).toBe(deployed.defaultMemoryMb);
    expect(deploymentOf('provider: {}\nfunctions: {}\n', 8).forwarderShards).toBe(8);
  });
});
