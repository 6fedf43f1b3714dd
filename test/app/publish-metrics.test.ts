import middy from '@middy/core';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { publishMetrics } from '../../shared/app/publish-metrics';

const context = { awsRequestId: 'r-1', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

function prepare(body: (metrics: Metrics) => Promise<void>) {
  const metrics = new Metrics({ namespace: 'Test', serviceName: 'test' });
  const publish = vi.spyOn(metrics, 'publishStoredMetrics').mockReturnThis();
  const handler = middy(async () => body(metrics)).use(publishMetrics(metrics));
  return { handler, publish };
}

describe('Middleware: publishMetrics', () => {
  it('publishes nothing (and warns nothing) for an invocation that recorded no metric', async () => {
    const { handler, publish } = prepare(async () => undefined);
    await handler({}, context);
    expect(publish).not.toHaveBeenCalled();
  });

  it('publishes what the invocation recorded', async () => {
    const { handler, publish } = prepare(async (metrics) => {
      metrics.addMetric('Pinned', MetricUnit.Count, 1);
    });
    await handler({}, context);
    expect(publish).toHaveBeenCalledTimes(1);
  });

  it('publishes what was recorded before a failure, and lets the failure through', async () => {
    const { handler, publish } = prepare(async (metrics) => {
      metrics.addMetric('Rejected', MetricUnit.Count, 1);
      throw new Error('boom');
    });
    await expect(handler({}, context)).rejects.toThrow('boom');
    expect(publish).toHaveBeenCalledTimes(1);
  });
});
