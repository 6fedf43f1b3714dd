/**
 * The notifications of one unit of work (a hint, a sweep): collected as the use-cases
 * commit status writes, published once the work is over, whether it succeeded or not (a
 * write that was committed happened, even if a later step failed and the hint is
 * retried: the retry re-reads, finds the change made, and announces nothing again).
 *
 * At most once: a process that dies between the write and the publish loses the
 * notification, and a publish still failing after the publisher's retries is logged, not
 * retried by redelivering the hint (that would repeat work, not the announcement).
 */
import type { Logger } from './logger';
import type { KubeObject } from '../domain/model/kube-object';
import {
  revisionNotificationsOf,
  statusTransitionsOf,
  toNotificationEvent,
  waveNotificationsOf,
  type CollectedRevisions,
  type NotificationEvent,
  type RolloutStatusView,
} from '../domain/notification';
import type { SyncWave } from '../domain/fleet/sync-wave';
import type { StatusCondition } from '../domain/rollout/types';
import type { Clock } from '../ports/clock';
import type { EventPublisher } from '../ports/event-publisher';
import type { StatusTransitions } from '../ports/notifications';
import { lazyEventPublisher, type PublisherLogger } from '../adapters/eventbridge/publisher';
import type { AppContext } from './context';

export type { NotificationEvent } from '../domain/notification';

export interface NotificationOutbox extends StatusTransitions {
  readonly pending: readonly NotificationEvent[];
  /** Collects events made elsewhere (a fleet wave's saved steps). */
  add(events: readonly NotificationEvent[]): void;
  /** Publishes and forgets what was collected; never throws. Without a publisher the events are only logged. */
  flush(publisher: EventPublisher<NotificationEvent> | undefined): Promise<void>;
}

const INFERENCE_SERVICE = 'InferenceService';

/**
 * A resync run's wave notifications: each saved wave write tells `saved` what it was
 * derived from and what was stored; `flush` publishes what those writes announced.
 */
export function createWaveNotifications(clock: Clock, logger?: Pick<Logger, 'info' | 'warn'>): Pick<NotificationOutbox, 'flush'> & { saved(before: SyncWave, after: SyncWave): void } {
  const outbox = createNotificationOutbox('', clock, logger);
  return {
    saved: (before, after) => outbox.add(waveNotificationsOf(before, after, new Date(clock.now()).toISOString())),
    flush: (publisher) => outbox.flush(publisher),
  };
}

/**
 * A GC run's notifications: each cluster's sweep tells `swept` what its own deletes
 * removed; `flush` publishes one `RevisionCollected` per runtime once the run is over.
 */
export function createRevisionNotifications(clock: Clock, logger?: Pick<Logger, 'info' | 'warn'>): Pick<NotificationOutbox, 'flush'> & { swept(clusterId: string, collected: readonly CollectedRevisions[]): void } {
  const outbox = createNotificationOutbox('', clock, logger);
  return {
    swept: (clusterId, collected) => outbox.add(revisionNotificationsOf(clusterId, collected, new Date(clock.now()).toISOString())),
    flush: (publisher) => outbox.flush(publisher),
  };
}

/**
 * The bus notifications go to: EventBridge in AWS, or the local bus where the
 * configuration names its endpoint; none for a local process without one (then they are
 * only logged). Its client is made on first use and kept for the process.
 */
export function notificationBus(logger: PublisherLogger): (app: AppContext) => EventPublisher<NotificationEvent> | undefined {
  const publisherOf = lazyEventPublisher(logger);
  return (app) => (app.config.eventBridgeEndpoint === undefined && app.config.mode !== 'deployed' ? undefined : publisherOf(app.config));
}

export function createNotificationOutbox(clusterId: string, clock: Clock, logger?: Pick<Logger, 'info' | 'warn'>): NotificationOutbox {
  let pending: NotificationEvent[] = [];
  return {
    get pending() {
      return pending;
    },
    add(events) {
      pending.push(...events);
    },
    committed(before: KubeObject, after: KubeObject) {
      const kind = after.kind || before.kind;
      if (kind !== INFERENCE_SERVICE) return;
      const object = { ...after, apiVersion: after.apiVersion || before.apiVersion, kind };
      type Status = (RolloutStatusView & { conditions?: StatusCondition[] }) | undefined;
      const transitions = statusTransitionsOf(before.status as Status, after.status as Status);
      const at = new Date(clock.now()).toISOString();
      pending.push(...transitions.map((transition) => toNotificationEvent(clusterId, object, transition, at)));
    },
    async flush(publisher) {
      const events = pending;
      pending = [];
      if (events.length === 0) return;
      const summary = events.map((event) => ({ type: event.detailType, name: event.detail.name, reason: event.detail.reason, runID: event.detail.runID }));
      if (!publisher) {
        logger?.info('notifications (no bus to publish them on)', { notifications: summary });
        return;
      }
      try {
        const result = await publisher.publish(events);
        const lost = [...result.failed.map((entry) => ({ event: entry.event, why: entry.errorCode })), ...result.skipped.map((entry) => ({ event: entry.event, why: entry.reason }))];
        for (const { event, why } of lost) logger?.warn('notification not published', { type: event.detailType, name: event.detail.name, runID: event.detail.runID, why });
      } catch (error) {
        logger?.warn('notifications not published', { notifications: summary, error: error as Error });
      }
    },
  };
}
