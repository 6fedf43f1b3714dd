/**
 * resync: every ten minutes (EventBridge schedule) relists every registered cluster's
 * watched objects and publishes them as `relisted` hints, so a hint lost anyway is
 * replaced within one interval. An event whose detail names `clusterId` (a manual invoke)
 * resyncs that cluster only. Each run also stores every cluster's drift report and then
 * advances the running fleet sync waves (docs/operations.md, "Fleet-wide sync"); an event
 * whose detail names `waveId` advances that wave only, without relisting.
 */
import middy from '@middy/core';
import { createLogger, injectLambdaContext } from '../../shared/app/logger';
import { Metrics, MetricUnit } from '../../shared/app/metrics';
import type { Context } from 'aws-lambda';
import { lazyEventPublisher } from '../../shared/app/event-publisher';
import type { AppContext } from '../../shared/app/context';
import { getAppContext, runWithinInvocation } from '../../shared/app/context';
import { publishMetrics } from '../../shared/app/publish-metrics';
import { advanceSyncWave, advanceSyncWaves } from '../../shared/use-cases/fleet/advance-sync-wave';
import type { AdvanceOutcome, FleetDeps } from '../../shared/use-cases/fleet/advance-sync-wave';
import type { EventPublisher } from '../../shared/app/event-publisher';
import { resyncClusters, type ClusterResyncOutcome } from '../../shared/use-cases/resync/resync-clusters';
import { createWaveNotifications, notificationBus, type NotificationEvent } from '../../shared/app/notifications';

const SERVICE = 'resync';
const logger = createLogger(SERVICE);
const metrics = new Metrics({ serviceName: SERVICE, namespace: 'OmePinning' });
const publisherOf = lazyEventPublisher(logger);
const notificationsOf = notificationBus(logger);

function report(outcome: ClusterResyncOutcome): void {
  const clusterLogger = logger.createChild({ persistentKeys: { cluster: outcome.clusterId } });
  if (outcome.outcome === 'failed') {
    clusterLogger.error('resync failed', { error: outcome.error, ...outcome.stats });
    metrics.addMetric('ResyncClustersFailed', MetricUnit.Count, 1);
  } else {
    clusterLogger.info('resync done', { ...outcome.stats });
  }
  if (outcome.driftReportError) clusterLogger.warn('drift report not stored', { error: outcome.driftReportError });
  metrics.addMetric('ResyncHintsPublished', MetricUnit.Count, outcome.stats.published);
}

type ResyncEvent = { detail?: { clusterId?: unknown; waveId?: unknown } } | undefined;
type WaveOutcome = AdvanceOutcome | { waveId: string; outcome: 'failed'; error: Error };

const textOf = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** Wiring, exported for tests and the local control plane, which pass their own context and publisher. */
export async function runResync(event: ResyncEvent, app: AppContext = getAppContext(), eventPublisher: EventPublisher = publisherOf(app.config)): Promise<ClusterResyncOutcome[]> {
  const clusterId = textOf(event?.detail?.clusterId);
  return resyncClusters({ app, publisher: eventPublisher, onOutcome: report, ...(clusterId ? { clusterId } : {}) });
}

function fleetDepsOf(app: AppContext): FleetDeps {
  return { fleet: app.stores.fleet, clusters: app.stores.clusters, cluster: (id) => app.cluster(id), clock: app.clock };
}

function reportWave(outcome: WaveOutcome): void {
  const waveLogger = logger.createChild({ persistentKeys: { wave: outcome.waveId } });
  if (outcome.outcome === 'failed') {
    waveLogger.warn('sync wave not advanced; the next run tries again', { error: outcome.error });
    return;
  }
  if (outcome.outcome === 'halted') waveLogger.error('sync wave halted', { failure: outcome.wave.failure });
  else if (outcome.outcome === 'frozen') waveLogger.info('sync wave frozen', { frozen: outcome.wave.frozen });
  else if (outcome.outcome === 'soaking') waveLogger.info('sync wave soaking', { until: new Date(outcome.until).toISOString() });
  else waveLogger.info(`sync wave ${outcome.outcome}`);
}

/**
 * Advances the running sync waves, or only `waveId`; each outcome is logged, and what the
 * saved steps announced (a cluster acknowledged, the wave halted) is published once the
 * waves are done (docs/events.md, "Notifications").
 */
export async function runFleetWaves(
  event: ResyncEvent,
  app: AppContext = getAppContext(),
  notificationPublisher: EventPublisher<NotificationEvent> | undefined = notificationsOf(app),
): Promise<WaveOutcome[]> {
  const waveId = textOf(event?.detail?.waveId);
  const notifications = createWaveNotifications(app.clock, logger);
  const deps: FleetDeps = { ...fleetDepsOf(app), saved: notifications.saved };
  let outcomes: WaveOutcome[];
  // A wave the table cannot be read for waits for the next run; it never holds the relist back.
  try {
    outcomes = waveId === undefined ? await advanceSyncWaves(deps) : [await advanceSyncWave(deps, waveId)];
  } catch (error) {
    outcomes = [{ waveId: waveId ?? '*', outcome: 'failed', error: error instanceof Error ? error : new Error(String(error)) }];
  }
  outcomes.forEach(reportWave);
  await notifications.flush(notificationPublisher);
  return outcomes;
}

async function handle(event: ResyncEvent): Promise<{ clusters: number; failed: number; published: number; waves: number; wavesFailed: number }> {
  const outcomes = textOf(event?.detail?.waveId) === undefined ? await runResync(event) : [];
  const waves = await runFleetWaves(event);
  return {
    clusters: outcomes.length,
    failed: outcomes.filter((outcome) => outcome.outcome === 'failed').length,
    published: outcomes.reduce((sum, outcome) => sum + outcome.stats.published, 0),
    waves: waves.filter((wave) => wave.outcome !== 'failed').length,
    wavesFailed: waves.filter((wave) => wave.outcome === 'failed').length,
  };
}

export const handler = middy((event: ResyncEvent, context: Context) => runWithinInvocation(context, () => handle(event))).use(injectLambdaContext(logger)).use(publishMetrics(metrics));
