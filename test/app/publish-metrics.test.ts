/**
 * The functions' EMF metrics (shared/app/metrics.ts) and the middleware that publishes them
 * after each invocation (shared/app/publish-metrics.ts), read from what is written to stdout:
 * the documents as Powertools' Metrics wrote them, and nothing for an invocation that
 * recorded nothing.
 */
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Metrics, MetricUnit } from '../../shared/app/metrics';
import { publishMetrics } from '../../shared/app/publish-metrics';

const context = { awsRequestId: 'r-1', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

/** One EMF document as written to stdout. */
interface EmfDocument {
  _aws: { Timestamp: number; CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }> };
  [metric: string]: unknown;
}

let stdout: string[] = [];
let stderr: string[] = [];
let saved: Record<string, string | undefined> = {};
const VARIABLES = ['POWERTOOLS_METRICS_DISABLED', 'POWERTOOLS_DEV', 'POWERTOOLS_METRICS_NAMESPACE', 'POWERTOOLS_SERVICE_NAME'];

beforeEach(() => {
  saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));
  for (const name of VARIABLES) delete process.env[name];
  stdout = [];
  stderr = [];
  const keep = (lines: string[]) => (chunk: string | Uint8Array): boolean => lines.push(...String(chunk).split('\n').filter((line) => line !== '')) >= 0;
  vi.spyOn(process.stdout, 'write').mockImplementation(keep(stdout));
  vi.spyOn(process.stderr, 'write').mockImplementation(keep(stderr));
});

afterEach(() => {
  vi.restoreAllMocks();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

const published = (): EmfDocument[] => stdout.map((line) => JSON.parse(line) as EmfDocument);

/** A handler that records with `body` and publishes with the middleware. */
function prepare(body: (metrics: Metrics) => Promise<void>) {
  const metrics = new Metrics({ namespace: 'Test', serviceName: 'test' });
  return { handler: middy(async () => body(metrics)).use(publishMetrics(metrics)), metrics };
}

describe('Middleware: publishMetrics', () => {
  it('publishes nothing (and warns nothing) for an invocation that recorded no metric', async () => {
    const { handler } = prepare(async () => undefined);
    await handler({}, context);
    expect(published()).toEqual([]);
    expect(stderr).toEqual([]);
  });

  it('publishes what the invocation recorded', async () => {
    const { handler, metrics } = prepare(async (recorder) => {
      recorder.addMetric('Pinned', MetricUnit.Count, 1);
      recorder.addMetric('Pinned', MetricUnit.Count, 1);
    });
    await handler({}, context);
    const [document, ...rest] = published();
    expect(rest).toEqual([]);
    expect(document?._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'Test', Metrics: [{ Name: 'Pinned', Unit: 'Count' }] });
    expect(document?.Pinned).toEqual([1, 1]);
    expect(stderr).toEqual([]);
    // Flushed: nothing is left to leak into the next invocation.
    expect(metrics.hasStoredMetrics()).toBe(false);
  });

  it('publishes what was recorded before a failure, and lets the failure through', async () => {
    const { handler, metrics } = prepare(async (recorder) => {
      recorder.addMetric('Rejected', MetricUnit.Count, 1);
      throw new Error('boom');
    });
    await expect(handler({}, context)).rejects.toThrow('boom');
    const [document, ...rest] = published();
    expect(rest).toEqual([]);
    expect(document?._aws.CloudWatchMetrics[0]?.Metrics).toEqual([{ Name: 'Rejected', Unit: 'Count' }]);
    expect(document?.Rejected).toBe(1);
    expect(metrics.hasStoredMetrics()).toBe(false);
  });
});

describe('Class: Metrics', () => {
  it('writes one EMF document with the service dimension, dimensions before values', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-12-05T06:00:00.000Z'));
    try {
      const metrics = new Metrics({ serviceName: 'pin', namespace: 'OmePinning' });
      metrics.addMetric('PinStatusWrites', MetricUnit.Count, 1);
      metrics.addMetric('ForwarderLagSeconds', MetricUnit.Seconds, 2.5);
      metrics.publishStoredMetrics();
    } finally {
      vi.useRealTimers();
    }
    expect(stdout).toEqual([
      JSON.stringify({
        _aws: {
          Timestamp: Date.parse('2026-12-05T06:00:00.000Z'),
          CloudWatchMetrics: [{ Namespace: 'OmePinning', Dimensions: [['service']], Metrics: [{ Name: 'PinStatusWrites', Unit: 'Count' }, { Name: 'ForwarderLagSeconds', Unit: 'Seconds' }] }],
        },
        service: 'pin',
        PinStatusWrites: 1,
        ForwarderLagSeconds: 2.5,
      }),
    ]);
  });

  it('publishes a single metric at once, with its own dimensions and the service, and keeps them out of the stored ones', () => {
    const metrics = new Metrics({ serviceName: 'forward-watch-events', namespace: 'OmePinning' });
    metrics.addMetric('ForwarderRunsFailed', MetricUnit.Count, 1);
    const single = metrics.singleMetric();
    single.addDimension('Shard', '3');
    single.addMetric('HintsForwarded', MetricUnit.Count, 7);
    expect(published()).toMatchObject([{ _aws: { CloudWatchMetrics: [{ Namespace: 'OmePinning', Dimensions: [['service', 'Shard']] }] }, service: 'forward-watch-events', Shard: '3', HintsForwarded: 7 }]);
    metrics.publishStoredMetrics();
    expect(published()[1]).toMatchObject({ _aws: { CloudWatchMetrics: [{ Dimensions: [['service']] }] }, ForwarderRunsFailed: 1 });
    expect(published()[1]).not.toHaveProperty('Shard');
  });

  it.each<[string, Record<string, string>, boolean]>([
    ['POWERTOOLS_METRICS_DISABLED=true', { POWERTOOLS_METRICS_DISABLED: 'true' }, false],
    ['POWERTOOLS_DEV=true', { POWERTOOLS_DEV: 'true' }, false],
    ['POWERTOOLS_DEV=true and POWERTOOLS_METRICS_DISABLED=false', { POWERTOOLS_DEV: 'true', POWERTOOLS_METRICS_DISABLED: 'false' }, true],
    ['neither', {}, true],
  ])('with %s, writes documents: %s', (_name, variables, writes) => {
    Object.assign(process.env, variables);
    const metrics = new Metrics({ serviceName: 'pin', namespace: 'OmePinning' });
    metrics.addMetric('PinStatusWrites', MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
    expect(published()).toHaveLength(writes ? 1 : 0);
    expect(metrics.hasStoredMetrics()).toBe(false);
  });

  it('takes the namespace and service from the environment when it is given none', () => {
    Object.assign(process.env, { POWERTOOLS_METRICS_NAMESPACE: 'FromEnv', POWERTOOLS_SERVICE_NAME: 'pin' });
    new Metrics().addMetric('X', MetricUnit.Count, 1).publishStoredMetrics();
    expect(published()).toMatchObject([{ _aws: { CloudWatchMetrics: [{ Namespace: 'FromEnv' }] }, service: 'pin' }]);
  });

  it.each<[string, (metrics: Metrics) => void, string]>([
    ['an empty name', (metrics) => metrics.addMetric('', MetricUnit.Count, 1), 'The metric name should be between 1 and 255 characters'],
    ['a value that is not a number', (metrics) => metrics.addMetric('X', MetricUnit.Count, '1' as unknown as number), 'is not a valid number'],
    ['an unknown unit', (metrics) => metrics.addMetric('X', 'Parsecs' as never, 1), "Invalid metric unit 'Parsecs'"],
    ['a metric with two units', (metrics) => metrics.addMetric('X', MetricUnit.Count, 1).addMetric('X', MetricUnit.Seconds, 1), 'Metric "X" has already been added with unit "Count"'],
    ['a metric named as a dimension', (metrics) => metrics.addMetric('service', MetricUnit.Count, 1).publishStoredMetrics(), 'EMF key collision on "service"'],
  ])('refuses %s', (_name, misuse, message) => {
    expect(() => misuse(new Metrics({ serviceName: 'pin', namespace: 'OmePinning' }))).toThrow(message);
  });

  it('flushes at 100 metrics and at 100 values of one metric, as CloudWatch takes no more in a document', () => {
    const metrics = new Metrics({ serviceName: 'pin', namespace: 'OmePinning' });
    for (let index = 0; index < 101; index += 1) metrics.addMetric(`M${index}`, MetricUnit.Count, 1);
    expect(published()).toHaveLength(1);
    for (let index = 0; index < 100; index += 1) metrics.addMetric('Repeated', MetricUnit.Count, index);
    expect(published()).toHaveLength(2);
    expect((published()[1]?.Repeated as number[]).length).toBe(100);
  });
});
