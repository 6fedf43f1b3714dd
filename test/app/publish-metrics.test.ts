import { Console } from 'node:console';
import { Writable } from 'node:stream';
import middy from '@middy/core';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { publishMetrics } from '../../shared/app/publish-metrics';

const context = { awsRequestId: 'r-1', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

/** One EMF document as Powertools writes it to stdout. */
interface EmfDocument {
  _aws: { CloudWatchMetrics: Array<{ Namespace: string; Metrics: Array<{ Name: string; Unit: string }> }> };
  [metric: string]: unknown;
}

/**
 * A real Metrics instance whose stdout is captured: what the middleware publishes is
 * what lands in `published`, and every warning Powertools logs lands in `warnings`.
 */
function prepare(body: (metrics: Metrics) => Promise<void>) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter((line) => line !== ''));
      done();
    },
  });
  const warnings: unknown[] = [];
  const logger = { warn: (...args: unknown[]) => warnings.push(args), debug: () => undefined, error: () => undefined, info: () => undefined };
  const metrics = new Metrics({ namespace: 'Test', serviceName: 'test', logger });
  // Powertools writes EMF through its own Console; point it at the sink.
  (metrics as unknown as { console: Console }).console = new Console({ stdout: sink, stderr: sink });
  const handler = middy(async () => body(metrics)).use(publishMetrics(metrics));
  const published = (): EmfDocument[] => lines.map((line) => JSON.parse(line) as EmfDocument);
  return { handler, published, warnings, metrics };
}

describe('Middleware: publishMetrics', () => {
  it('publishes nothing (and warns nothing) for an invocation that recorded no metric', async () => {
    const { handler, published, warnings } = prepare(async () => undefined);
    await handler({}, context);
    expect(published()).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it('publishes what the invocation recorded', async () => {
    const { handler, published, warnings, metrics } = prepare(async (recorder) => {
      recorder.addMetric('Pinned', MetricUnit.Count, 1);
      recorder.addMetric('Pinned', MetricUnit.Count, 1);
    });
    await handler({}, context);
    const [document, ...rest] = published();
    expect(rest).toEqual([]);
    expect(document?._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'Test', Metrics: [{ Name: 'Pinned', Unit: 'Count' }] });
    expect(document?.Pinned).toEqual([1, 1]);
    expect(warnings).toEqual([]);
    // Flushed: nothing is left to leak into the next invocation.
    expect(metrics.hasStoredMetrics()).toBe(false);
  });

  it('publishes what was recorded before a failure, and lets the failure through', async () => {
    const { handler, published, metrics } = prepare(async (recorder) => {
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
