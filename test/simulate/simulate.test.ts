/**
 * A small fleet simulation through the real local services: every figure is in the report,
 * each per-change figure is at least its floor, and the drift fan-out and GC sweeps ran
 * under the injected latency and the functions' rate limit.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { dynamoDbCallOf, forwarderDynamoDbOf, forwarderEventOf, runSimulation, warningOf } from '../../scripts/simulate/run-simulation';
import type { SimulationReport } from '../../scripts/simulate/run-simulation';
import type { SweepReport } from '../../scripts/simulate/sweeps';
import { formatSimulationReport } from '../../scripts/simulate';

const FAN_OUT = 8;
const GC_REVISIONS = 14;

let report: SimulationReport;
const progress: string[] = [];

beforeAll(async () => {
  report = await runSimulation({
    clusters: 3,
    latencyMs: 5,
    durationMs: 5_000,
    rate: 5,
    seed: 1,
    fanOut: FAN_OUT,
    gcRevisions: GC_REVISIONS,
    serverProcesses: 2,
    // Bounded: a window is started only if it and the waits around it (up to 3 min) fit the
    // budget, so here only in the first ~13 s.
    findRate: { windowMs: 2_000, budgetMs: 200_000, max: 10 },
    progress: (line) => progress.push(line),
  });
}, 360_000);

const printedReport = (): string => formatSimulationReport(report);

describe('Rule: dynamoDbCallOf names a call by command and item kind', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['UpdateItemCommand', { Key: { pk: 'LEASE#object#c1#InferenceService#ns#a', sk: 'LEASE' } }, 'UpdateItem LEASE'],
    ['GetItemCommand', { Key: { pk: { S: 'CHECKPOINT#c1' }, sk: { S: 'inferenceservices' } } }, 'GetItem CHECKPOINT'],
    ['GetItemCommand', { Key: { pk: 'REGISTRY', sk: 'CLUSTER#c1' } }, 'GetItem REGISTRY/CLUSTER'],
    ['PutItemCommand', { Item: { pk: 'IDEMPOTENCY#sync#c1', sk: 'IDEMPOTENCY', status: 'done' } }, 'PutItem IDEMPOTENCY'],
    ['QueryCommand', { KeyConditionExpression: 'pk = :pk' }, 'Query'],
    ['QueryCommand', { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'CHECKPOINT#c1' } }, 'Query CHECKPOINT'],
    ['QueryCommand', { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: 'REGISTRY' } } }, 'Query REGISTRY'],
    ['BatchGetItemCommand', { RequestItems: { t: { Keys: [{ pk: { S: 'CHECKPOINT#c1' }, sk: { S: '#checkpoints' } }] } } }, 'BatchGetItem CHECKPOINT'],
    ['BatchWriteItemCommand', { RequestItems: { t: [{ PutRequest: { Item: { pk: { S: 'CHECKPOINT#c1' }, sk: { S: '#checkpoints' } } } }] } }, 'BatchWriteItem CHECKPOINT'],
  ])('%s %j: %s', (command, input, call) => {
    expect(dynamoDbCallOf(command, input)).toBe(call);
  });

  it('splits the forwarders\' calls into lease, registry reads, checkpoint loads and saves, per shard-minute', () => {
    const split = forwarderDynamoDbOf({ 'UpdateItem LEASE': 12, 'PutItem CHECKPOINT': 10, 'BatchWriteItem CHECKPOINT': 20, 'Query CHECKPOINT': 6, 'BatchGetItem CHECKPOINT': 4, 'Query REGISTRY': 8 }, 2, 60);
    expect(split).toEqual({ operations: 60, lease: 12, checkpointSaves: 30, checkpointLoads: 10, registryReads: 8, shardMinutes: 2, perShardMinute: 30, checkpointSavesPerChange: 0.5 });
    expect(forwarderDynamoDbOf({}, 0, 0)).toMatchObject({ operations: 0, perShardMinute: 0, checkpointSavesPerChange: 0 });
  });

  it.each<[string, string | undefined]>([
    ['{"level":"WARN","message":"lease held","timestamp":"t"}', 'WARN lease held'],
    ['{"level":"ERROR","message":"review failed","error":{"name":"UnavailableError","message":"timed out"}}', 'ERROR review failed: timed out'],
    ['{"level":"INFO","message":"pinned"}', undefined],
    ['{"level":"ERROR", not json', undefined],
  ])('reads a function log line %s as the warning %s', (line, warning) => {
    expect(warningOf(line)).toBe(warning);
  });

  it('reads a forwarder log line as its event, without cluster or details', () => {
    expect(forwarderEventOf('forwarder    local-7: warning: forwarder lease lost; stopping at once {"lease":"forwarder#local-7"}')).toBe('warning: forwarder lease lost; stopping at once');
    expect(forwarderEventOf('forwarder    shard 2: forwarder shard lease acquired {"lease":"forwarder-shard#4/2","fencingToken":3}')).toBe('forwarder shard lease acquired');
    expect(forwarderEventOf('forwarder    shard 1/4: local-2 (long-running)')).toBeUndefined();
  });
});

describe('Fleet simulation: 3 clusters for 5 s, then the sweeps', () => {
  it('reports every figure, each per-change figure at or above its floor (invocations may batch below theirs)', () => {
    expect(report.changes.completed).toBeGreaterThan(0);
    expect(report.changes.started).toBe(report.changes.completed + report.changes.lost);
    expect(report.changes.perSecond).toBeGreaterThan(0);
    expect(report.latencyMs.p50).not.toBeNull();
    expect(report.latencyMs.p99 ?? 0).toBeGreaterThanOrEqual(report.latencyMs.p50 ?? Infinity);
    expect(report.latencyMs.p50 ?? 0).toBeGreaterThanOrEqual(report.latencyMs.floor);
    expect(report.latencyMs.floor).toBeGreaterThan(0);
    expect(report.forwarderLagMs.p50).not.toBeNull();
    expect(report.kubernetes.perChange).toBeGreaterThanOrEqual(report.kubernetes.floorPerChange);
    expect(report.kubernetes.floorPerChange).toBeGreaterThanOrEqual(2);
    expect(report.dynamoDb.perChange).toBeGreaterThanOrEqual(report.dynamoDb.floorPerChange);
    expect(report.dynamoDb.writeUnits).toBeGreaterThan(0);
    // Batches of hints may carry several changes in one invocation: below the one-at-a-time floor is no error.
    expect(report.invocations.perChange).toBeGreaterThan(0);
    expect(report.invocations.floorPerChange).toBe(1);
    expect(report.invocations.byFunction.pin?.invocations ?? 0).toBeGreaterThan(0);
    expect(report.events.hintEntries).toBeGreaterThanOrEqual(report.changes.completed);
    expect(report.logs.bytes).toBeGreaterThan(0);
    expect(report.memory.perClusterBytes).toBeGreaterThan(0);
  });

  it('attributes every DynamoDB call of the window to its caller, and accounts for every change not written in time', () => {
    const { byCaller, operations } = report.dynamoDb;
    const attributed = Object.values(byCaller).reduce((sum, calls) => sum + Object.values(calls).reduce((a, b) => a + b, 0), 0);
    expect(attributed).toBe(operations);
    // Every function that ran takes the object's lease (the forwarders renew theirs every 10 s,
    // maybe not within 5 s), but drift-check, which writes its conditions without one
    // (docs/decisions.md, 21) and takes one only through pin.
    const ran = Object.keys(report.invocations.byFunction);
    expect(ran.length).toBeGreaterThan(0);
    for (const name of ran.filter((name) => name !== 'drift-check')) expect(byCaller[name]?.['UpdateItem LEASE'] ?? 0, name).toBeGreaterThan(0);
    // The forwarders' share, split by what it is for, and the functions' share per change.
    const forwarder = report.dynamoDb.forwarder;
    expect(forwarder?.operations).toBe(Object.values(byCaller.forwarder ?? {}).reduce((a, b) => a + b, 0));
    expect(report.dynamoDb.functionsPerChange).toBeCloseTo((operations - (forwarder?.operations ?? 0)) / report.changes.completed, 9);
    expect(printedReport()).toContain('of the forwarders / shard-minute');
    // The functions that ran reached the clusters as themselves (their ServiceAccounts).
    // (pin reads and writes for every change it pins; another function may answer a hint without a request.)
    expect(ran).toContain('pin');
    expect(Object.values(report.kubernetes.byCaller.pin ?? {}).reduce((sum, count) => sum + count, 0)).toBeGreaterThan(0);
    expect(printedReport()).toMatch(/Kubernetes (pin|rollout-run|drift-check)/);
    const { lost, lateWritten, unwrittenAtEnd, failedToStart } = report.changes;
    expect(lateWritten + unwrittenAtEnd + failedToStart).toBe(lost);
    expect(printedReport()).toMatch(/DynamoDB [a-z-]+: UpdateItem LEASE/);
  });

  it('shows progress while it runs and prints each figure beside its floor', () => {
    expect(progress.some((line) => line.includes('clusters set up'))).toBe(true);
    expect(progress.some((line) => line.includes('drift fan-out in'))).toBe(true);
    const printed = formatSimulationReport(report);
    for (const figure of ['changes/s sustained', 'p50', 'p99', 'forwarder lag', 'Kubernetes requests / change', 'DynamoDB operations / change', 'invocations / change', 'memory / watched cluster']) {
      expect(printed).toContain(figure);
    }
    for (const figure of [`drift fan-out, ${FAN_OUT} InferenceServices`, 'drift-check requests', `revision GC, 4 of ${GC_REVISIONS}`, 'revision-gc requests']) expect(printed).toContain(figure);
    expect(printed.match(/floor/g)?.length ?? 0).toBeGreaterThanOrEqual(12);
  });

  it('runs the drift fan-out in a cluster of its own: every InferenceService drifts, at no fewer requests than its floor', () => {
    const sweeps = report.sweeps as SweepReport;
    expect(sweeps).not.toBeNull();
    expect(sweeps.qps).toBe(20);
    expect(sweeps.latencyMs).toBe(5);
    const fan = sweeps.driftFanOut;
    expect(fan.items).toBe(FAN_OUT);
    expect(fan.seconds).not.toBeNull();
    expect(fan.floorRequests).toBe(FAN_OUT + 2);
    expect(fan.requests).toBeGreaterThanOrEqual(fan.floorRequests);
    expect((fan.byVerb.patch ?? 0) + (fan.byVerb.update ?? 0)).toBeGreaterThanOrEqual(FAN_OUT);
    expect(fan.invocations).toBeGreaterThan(0);
  });

  it("measures the plane's CPU time per invocation and event-loop delay apart from the API servers' processes", () => {
    expect(report.options.serverProcesses).toBe(2);
    const cpu = report.cpu!;
    expect(cpu.planeMs).toBeGreaterThan(0);
    expect(cpu.functionsMs).toBeGreaterThan(0);
    // The functions' slices are part of the plane's process time.
    expect(cpu.functionsMs).toBeLessThanOrEqual(cpu.planeMs);
    expect(cpu.serversMs).toBeGreaterThan(0);
    const pin = report.invocations.byFunction.pin!;
    expect(pin.cpuMs).toBeGreaterThan(0);
    // An invocation's own CPU is part of its wall time.
    expect(pin.cpuMs!).toBeLessThanOrEqual(pin.durationMs + 1);
    expect(pin.cpuMsPerInvocation?.p50).not.toBeNull();
    const delays = report.loopDelayMs!;
    expect(delays.plane.p99).toBeGreaterThanOrEqual(delays.plane.p50);
    expect(delays.servers).toHaveLength(2);
    expect(delays.serversWorst).not.toBeNull();
    expect(report.memory.serversRssBytes).toBeGreaterThan(0);
    const printed = printedReport();
    for (const figure of ['CPU / change, plane process', 'CPU / change, API servers', 'pin CPU / invocation', 'event-loop delay, plane', 'event-loop delay, API servers', 'in 2 processes of their own']) expect(printed).toContain(figure);
  });

  it('searches for the highest rate with none late, within its bounds', () => {
    const search = report.rateSearch!;
    expect(search.windows.length).toBeGreaterThan(0);
    expect(search.windows[0]?.rate).toBe(5);
    for (const window of search.windows) {
      expect(window.rate).toBeLessThanOrEqual(10);
      expect(window.written + window.late + window.refused).toBe(window.started);
      expect(window.passed).toBe(window.late === 0 && window.refused === 0 && window.started >= 0.95 * window.offered);
    }
    if (search.highestPassed !== null && search.lowestFailed !== null) expect(search.highestPassed).toBeLessThan(search.lowestFailed);
    expect(search.seconds).toBeLessThan(200);
    expect(printedReport()).toContain('highest rate with none late or refused');
  });

  it('runs the GC sweep there: every revision past the retention is marked, at no fewer requests than its floor', () => {
    const gc = (report.sweeps as SweepReport).revisionGc;
    // 14 new revisions past the 10 kept: 4 to mark (the pinned one is referenced).
    expect(gc.expectedMarks).toBe(GC_REVISIONS - 10);
    expect(gc.items).toBe(gc.expectedMarks);
    expect(gc.seconds).not.toBeNull();
    expect(gc.floorRequests).toBe(2 + gc.expectedMarks);
    expect(gc.requests).toBeGreaterThanOrEqual(gc.floorRequests);
    expect(gc.invocations).toBeGreaterThan(0);
  });
});
