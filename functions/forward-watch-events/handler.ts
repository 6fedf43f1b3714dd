/**
 * Scheduled forwarder: for each registered cluster (or the one the event names), forward
 * watch events for as long as this invocation may run, then checkpoint and let the next
 * scheduled run resume. Clients live as long as the container (see `getAppContext`: one
 * per cluster, renewed inside the 15-minute life of EKS tokens; secret and EKS
 * credentials plug in there as its credential resolver).
 */
import middy from '@middy/core';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { lazyEventPublisher } from '../../shared/adapters/eventbridge/publisher';
import { getAppContext } from '../../shared/app/context';
import type { AppContext } from '../../shared/app/context';
import { recordingLogger, runForwarderFor } from '../../shared/forwarder';
import type { ForwarderStats } from '../../shared/forwarder';
import { publishMetrics } from '../../shared/app/publish-metrics';

const SERVICE = 'forward-watch-events';
/** Left for Lambda after the run: logs, metrics and the response. */
const SAFETY_MARGIN_MS = 3_000;

const logger = new Logger({ serviceName: SERVICE });
const metrics = new Metrics({ serviceName: SERVICE, namespace: 'OmePinning' });
const publisherOf = lazyEventPublisher(logger);

async function forwardCluster(app: AppContext, clusterId: string, budgetMs: number, context: Context): Promise<ForwarderStats | undefined> {
  const clusterLogger = recordingLogger(logger.createChild({ persistentKeys: { cluster: clusterId } }), (message) =>
    app.stores.checkpoints.recordForwarderError(clusterId, message),
  );
  try {
    const cluster = await app.cluster(clusterId);
    const stats = await runForwarderFor({
      clusterId,
      cluster: cluster.client,
      omeNamespace: cluster.omeNamespace,
      publisher: publisherOf(app.config),
      leases: app.stores.leases,
      checkpoints: app.stores.checkpoints,
      clock: app.clock,
      logger: clusterLogger,
      leaseTtlMs: app.config.leaseTtlMs,
      holderId: `${context.functionName}/${context.awsRequestId}`,
      budgetMs,
    });
    const metric = metrics.singleMetric();
    metric.addDimension('cluster', clusterId);
    metric.addMetric('HintsForwarded', MetricUnit.Count, stats.forwarded);
    clusterLogger.info('forwarder run done', { ...stats });
    return stats;
  } catch (error) {
    clusterLogger.error('forwarder run failed', { error: error as Error });
    metrics.addMetric('ForwarderRunsFailed', MetricUnit.Count, 1);
    return undefined;
  }
}

async function forward(event: { detail?: { clusterId?: string } } | undefined, context: Context): Promise<{ clusters: ForwarderStats[] }> {
  const app = getAppContext();
  const named = event?.detail?.clusterId;
  const clusterIds = named ? [named] : (await app.stores.clusters.listClusters()).map((record) => record.id);
  const remaining = context.getRemainingTimeInMillis() - SAFETY_MARGIN_MS;
  const budgetMs = Math.max(0, Math.min(remaining, app.config.forwarderMaxRuntimeMs ?? remaining));
  const stats = await Promise.all(clusterIds.map((clusterId) => forwardCluster(app, clusterId, budgetMs, context)));
  return { clusters: stats.filter((entry): entry is ForwarderStats => entry !== undefined) };
}

export const handler = middy(forward).use(injectLambdaContext(logger)).use(publishMetrics(metrics));
