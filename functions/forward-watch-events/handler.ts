/**
 * Scheduled forwarder, one invocation per shard and minute: each schedule rule passes its
 * shard index (`{"shard": i}`); the run takes the shard's lease, lists the registry, keeps
 * the clusters that `assignShard` gives to that shard (of FORWARDER_SHARDS) and forwards
 * their watch events for as long as the invocation may run, then checkpoints and releases
 * the shard's lease. The run works a little longer than the schedule's period, so the next
 * one is already waiting for the lease when this one hands it over (docs/events.md). An
 * event naming one cluster (`detail.clusterId`) forwards only that cluster, under its
 * shard's lease. Clients live as long as the container (see `getAppContext`).
 */
import middy from '@middy/core';
import { createLogger, injectLambdaContext } from '../../shared/app/logger';
import { Metrics, MetricUnit } from '../../shared/app/metrics';
import type { Context } from 'aws-lambda';
import { lazyEventPublisher } from '../../shared/app/event-publisher';
import { getAppContext, runWithinInvocation } from '../../shared/app/context';
import type { AppContext } from '../../shared/app/context';
import { assignShard, recordingLogger, runForwarderFor, runForwarderShardOnce } from '../../shared/use-cases/forwarder';
import type { ForwarderStats, SharedLease } from '../../shared/use-cases/forwarder';
import { publishMetrics } from '../../shared/app/publish-metrics';
import { forwarderShardOf } from '../../shared/app/forwarder-shard';

const SERVICE = 'forward-watch-events';
/** Left for Lambda after the run: logs, metrics and the response. */
const SAFETY_MARGIN_MS = 3_000;

const logger = createLogger(SERVICE);
const metrics = new Metrics({ serviceName: SERVICE, namespace: 'OmePinning' });
const publisherOf = lazyEventPublisher(logger);

interface ForwarderEvent {
  /** The schedule rule's input: which shard this invocation forwards. */
  shard?: unknown;
  detail?: { clusterId?: string };
}

export interface ForwarderResult {
  shard?: number;
  shardCount?: number;
  clusters: ForwarderStats[];
}

async function forwardCluster(app: AppContext, clusterId: string, lease: SharedLease, deadline: number): Promise<ForwarderStats | undefined> {
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
      sharedLease: lease,
      checkpoints: app.stores.checkpoints,
      clock: app.clock,
      logger: clusterLogger,
      leaseTtlMs: app.config.leaseTtlMs,
      // Whatever the wait for the shard's lease left of the budget.
      budgetMs: Math.max(0, deadline - Date.now()),
    });
    // Per cluster in the log (Logs Insights), per shard in metrics: see docs/operations.md.
    clusterLogger.info('forwarder run done', { ...stats, lagSeconds: stats.maxLagMs / 1000 });
    return stats;
  } catch (error) {
    clusterLogger.error('forwarder run failed', { error: error as Error });
    metrics.addMetric('ForwarderRunsFailed', MetricUnit.Count, 1);
    return undefined;
  }
}

/** One line per metric: a single metric is published as soon as its value is added. */
function addShardMetric(shard: number | undefined, name: string, unit: (typeof MetricUnit)[keyof typeof MetricUnit], value: number): void {
  const metric = metrics.singleMetric();
  if (shard !== undefined) metric.addDimension('Shard', String(shard));
  metric.addMetric(name, unit, value);
}

/**
 * Per shard, not per cluster: a `Cluster` dimension would be a custom metric per cluster
 * (1,000 at fleet size, each billed); the per-cluster lag is in the run's log line. The lag
 * also goes out without the shard, so one alarm (its Maximum) covers the whole fleet.
 */
function recordShardMetrics(shard: number, stats: ForwarderStats[]): void {
  const lagSeconds = Math.max(0, ...stats.map((entry) => entry.maxLagMs)) / 1000;
  addShardMetric(shard, 'ForwarderLagSeconds', MetricUnit.Seconds, lagSeconds);
  addShardMetric(undefined, 'ForwarderLagSeconds', MetricUnit.Seconds, lagSeconds);
  addShardMetric(shard, 'HintsForwarded', MetricUnit.Count, stats.reduce((sum, entry) => sum + entry.forwarded, 0));
  addShardMetric(shard, 'ForwarderClusters', MetricUnit.Count, stats.length);
}

async function forward(event: ForwarderEvent | undefined, context: Context): Promise<ForwarderResult> {
  const app = getAppContext();
  const remaining = context.getRemainingTimeInMillis() - SAFETY_MARGIN_MS;
  const budgetMs = Math.max(0, Math.min(remaining, app.config.forwarderMaxRuntimeMs ?? remaining));
  const deadline = Date.now() + budgetMs;
  const shardCount = app.config.forwarderShards ?? 1;
  const named = event?.detail?.clusterId;
  const shard = named ? assignShard(named, shardCount) : forwarderShardOf(event, shardCount);
  // The wait for the shard's lease ends with the work budget's last fifth, kept for the final flush.
  const stopWaiting = AbortSignal.timeout(Math.max(0, budgetMs * 0.8));
  const run = await runForwarderShardOnce({
    shard,
    shardCount,
    // A named cluster is forwarded whether or not the registry lists it: if it is not
    // registered, its run fails and says so.
    listClusterIds: named ? async () => [named] : async () => (await app.stores.clusters.listClusters()).map((record) => record.id),
    forwardCluster: (clusterId, lease) => forwardCluster(app, clusterId, lease, deadline),
    leases: app.stores.leases,
    holderId: `${context.functionName}/${context.awsRequestId}`,
    leaseTtlMs: app.config.leaseTtlMs,
    leasePollMs: app.config.forwarderLeasePollMs ?? 1_000,
    clock: app.clock,
    signal: stopWaiting,
    logger,
  });
  const clusters = run.results.filter((entry): entry is ForwarderStats => entry !== undefined);
  if (named) return { clusters };
  recordShardMetrics(shard, clusters);
  logger.info('forwarder shard run done', { shard, shardCount, leaseAcquired: run.leaseAcquired, clusters: run.clusterIds.length, failed: run.clusterIds.length - clusters.length });
  return { shard, shardCount, clusters };
}

// Cluster requests cap their waits (rate limit, Retry-After) by the invocation's remaining time.
export const handler = middy((event: ForwarderEvent | undefined, context: Context) => runWithinInvocation(context, () => forward(event, context)))
  .use(injectLambdaContext(logger))
  .use(publishMetrics(metrics));
