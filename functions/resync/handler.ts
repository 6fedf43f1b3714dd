/**
 * resync: every ten minutes (EventBridge schedule) relists every registered cluster's
 * watched objects and publishes them as `relisted` hints, so a hint lost anyway is
 * replaced within one interval. An event whose detail names `clusterId` (a manual invoke)
 * resyncs that cluster only.
 */
import middy from '@middy/core';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { lazyEventPublisher } from '../../shared/adapters/eventbridge/publisher';
import type { AppContext } from '../../shared/app/context';
import { getAppContext } from '../../shared/app/context';
import { publishMetrics } from '../../shared/app/publish-metrics';
import type { EventPublisher } from '../../shared/ports/event-publisher';
import { resyncClusters, type ClusterResyncOutcome } from '../../shared/resync/resync-clusters';

const SERVICE = 'resync';
const logger = new Logger({ serviceName: SERVICE });
const metrics = new Metrics({ serviceName: SERVICE, namespace: 'OmePinning' });
const publisherOf = lazyEventPublisher(logger);

function report(outcome: ClusterResyncOutcome): void {
  const clusterLogger = logger.createChild({ persistentKeys: { cluster: outcome.clusterId } });
  if (outcome.outcome === 'failed') {
    clusterLogger.error('resync failed', { error: outcome.error, ...outcome.stats });
    metrics.addMetric('ResyncClustersFailed', MetricUnit.Count, 1);
  } else {
    clusterLogger.info('resync done', { ...outcome.stats });
  }
  metrics.addMetric('ResyncHintsPublished', MetricUnit.Count, outcome.stats.published);
}

/** Wiring, exported for tests and the local control plane, which pass their own context and publisher. */
export async function runResync(
  event: { detail?: { clusterId?: unknown } } | undefined,
  app: AppContext = getAppContext(),
  eventPublisher: EventPublisher = publisherOf(app.config),
): Promise<ClusterResyncOutcome[]> {
  const clusterId = typeof event?.detail?.clusterId === 'string' && event.detail.clusterId !== '' ? event.detail.clusterId : undefined;
  return resyncClusters({ app, publisher: eventPublisher, onOutcome: report, ...(clusterId ? { clusterId } : {}) });
}

async function handle(event: { detail?: { clusterId?: unknown } } | undefined): Promise<{ clusters: number; failed: number; published: number }> {
  const outcomes = await runResync(event);
  return {
    clusters: outcomes.length,
    failed: outcomes.filter((outcome) => outcome.outcome === 'failed').length,
    published: outcomes.reduce((sum, outcome) => sum + outcome.stats.published, 0),
  };
}

export const handler = middy(handle).use(injectLambdaContext(logger)).use(publishMetrics(metrics));
