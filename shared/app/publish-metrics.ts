import type { Metrics } from './metrics';
import type { MiddlewareObj } from '@middy/core';

/**
 * Flushes the invocation's EMF metrics, like Powertools' `logMetrics`, but stays quiet
 * when the invocation recorded none: most hints change nothing, and a warning line per
 * such invocation would drown the logs.
 */
export function publishMetrics(metrics: Metrics): MiddlewareObj {
  const flush = async (): Promise<void> => {
    if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  };
  return { after: flush, onError: flush };
}
