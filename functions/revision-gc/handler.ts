/**
 * revision-gc: every five minutes (EventBridge schedule) sweeps every registered cluster.
 * No hint wakes it: a revision becomes collectable only after the retention count and the
 * grace period, which the next sweep finds. An event whose detail has `"dryRun": true`
 * (a manual invoke) plans and writes nothing; one whose detail names a `clusterId` sweeps
 * that cluster alone. What the sweeps deleted is announced once the run is over: one
 * `RevisionCollected` notification per runtime (docs/events.md, "Notifications").
 */
import middy from '@middy/core';
import { createLogger, injectLambdaContext } from '../../shared/app/logger';
import { Metrics, MetricUnit } from '../../shared/app/metrics';
import type { Context } from 'aws-lambda';
import type { AppContext } from '../../shared/app/context';
import { getAppContext, runWithinInvocation } from '../../shared/app/context';
import { sweepClusters, type ClusterSweepOutcome } from '../../shared/use-cases/revision-gc/sweep-clusters';
import { publishMetrics } from '../../shared/app/publish-metrics';
import { createRevisionNotifications, notificationBus, type NotificationEvent } from '../../shared/app/notifications';
import type { EventPublisher } from '../../shared/app/event-publisher';

const SERVICE = 'revision-gc';
const logger = createLogger(SERVICE);
const metrics = new Metrics({ serviceName: SERVICE, namespace: 'OmePinning' });
const notificationsOf = notificationBus(logger);

/** A scheduled event has an empty detail; a manual invoke may name a cluster. */
interface GcEvent {
  'detail-type'?: string;
  detail?: { clusterId?: unknown; dryRun?: unknown };
}

function report(outcome: ClusterSweepOutcome): void {
  const clusterLogger = logger.createChild({ persistentKeys: { cluster: outcome.clusterId } });
  if (outcome.outcome === 'delegated') {
    clusterLogger.info("upstream OME's GC collects this cluster's revisions (mode delegate); skipped");
    return;
  }
  if (outcome.outcome === 'busy') {
    clusterLogger.info('another sweep holds this cluster; skipped');
    return;
  }
  if (outcome.outcome === 'failed') {
    clusterLogger.error('revision sweep failed', { error: outcome.error });
    metrics.addMetric('RevisionGcSweepsFailed', MetricUnit.Count, 1);
    return;
  }
  const { stats, dryRun, planned, firstError } = outcome.result;
  clusterLogger.info(dryRun ? 'revision sweep planned (dry run)' : outcome.continued ? 'revision sweep out of time; the next sweep continues it' : 'revision sweep done', {
    ...stats,
    ...(planned ? { wouldDelete: planned.delete, wouldMark: planned.mark } : {}),
    ...(firstError ? { firstError } : {}),
  });
  if (dryRun) return;
  const metric = metrics.singleMetric();
  metric.addDimension('cluster', outcome.clusterId);
  metric.addMetric('RevisionsDeleted', MetricUnit.Count, stats.deleted);
  metric.addMetric('RevisionsMarked', MetricUnit.Count, stats.marked);
  metric.addMetric('RevisionGcConflicts', MetricUnit.Count, stats.skippedConflicts);
}

/** Wiring, exported for tests and the simulation, which pass their own context (and publisher). */
export async function runRevisionGc(
  event: GcEvent | undefined,
  holder: string,
  app: AppContext = getAppContext(),
  remainingTimeMs?: () => number,
  notificationPublisher: EventPublisher<NotificationEvent> | undefined = notificationsOf(app),
): Promise<ClusterSweepOutcome[]> {
  const clusterId = typeof event?.detail?.clusterId === 'string' && event.detail.clusterId !== '' ? event.detail.clusterId : undefined;
  const notifications = createRevisionNotifications(app.clock, logger);
  const outcomes = await sweepClusters({
    app,
    holder,
    dryRun: event?.detail?.dryRun === true,
    onOutcome: (outcome) => {
      report(outcome);
      if (outcome.outcome === 'swept' && outcome.result.collected) notifications.swept(outcome.clusterId, outcome.result.collected);
    },
    ...(clusterId ? { clusterId } : {}),
    ...(remainingTimeMs ? { remainingTimeMs } : {}),
  });
  await notifications.flush(notificationPublisher);
  return outcomes;
}

async function handle(event: GcEvent | undefined, context: Context): Promise<{ clusters: number; failed: number }> {
  const remaining = typeof context.getRemainingTimeInMillis === 'function' ? () => context.getRemainingTimeInMillis() : undefined;
  const outcomes = await runRevisionGc(event, `${context.functionName}/${context.awsRequestId}`, getAppContext(), remaining);
  return { clusters: outcomes.length, failed: outcomes.filter((o) => o.outcome === 'failed').length };
}

/** The schedule, or a manual invoke, with an EventBridge-shaped event. */
export const handler = middy((event: GcEvent | undefined, context: Context) => runWithinInvocation(context, () => handle(event, context)))
  .use(injectLambdaContext(logger))
  .use(publishMetrics(metrics));
