/**
 * The pinning use-cases' dependencies for one hint invocation: the cluster's client and
 * OME namespace, the stores, the configuration, an Event recorder shared per client (so
 * repeated events aggregate) and the engine workload writer the function chose.
 */
import { UnavailableError } from '../domain/errors';
import { HINT_EVENT_SOURCE, HintDetailType } from '../domain/hint-event';
import { recordEvent } from '../use-cases/record-event';
import { metricsBindingReader } from './metrics-binding';
import { rolloutAwareWorkloadWriter } from './engine-workload-writer';
import type { HintInvocation } from './hint-handler';
import type { ClusterClient } from '../ports/cluster';
import type { EngineWorkloadWriter } from '../ports/workloads';
import type { EventPublisher } from '../ports/event-publisher';
import type { DriftCheckDeps } from '../use-cases/pinning/check-runtime-drift';

export function createPinningDeps(invocation: HintInvocation, createWriter: (client: ClusterClient) => EngineWorkloadWriter): DriftCheckDeps {
  const { app, cluster, requestId, remainingTimeMs } = invocation;
  return {
    clusterId: cluster.id,
    client: cluster.client,
    omeNamespace: cluster.omeNamespace,
    leases: app.stores.leases,
    idempotency: app.stores.idempotency,
    clock: app.clock,
    config: app.config,
    holder: requestId,
    events: { record: (object, event) => recordEvent(cluster.client, object, event) },
    workloads: createWriter(cluster.client),
    transitions: invocation.notifications,
    ...(remainingTimeMs ? { remainingTimeMs } : {}),
  };
}

/**
 * What pin and drift-check reconcile with in a standalone cluster: the engine workload
 * writer the functions use, reading the cluster's analysis binding (its default
 * Prometheus from the configuration) so a run opens as rollout-run resolves its plan.
 */
export function pinningDepsOf(invocation: HintInvocation): DriftCheckDeps {
  const { app, cluster } = invocation;
  return createPinningDeps(invocation, rolloutAwareWorkloadWriter(app.clock, metricsBindingReader(cluster, app.config.prometheusAddress), invocation.notifications));
}

/**
 * How a drift fan-out out of time continues: the same hint published again, carrying its
 * continuation's version; a hint that is not published fails the delivery.
 */
export function republishHint(invocation: HintInvocation, publisher: () => EventPublisher): (next: { continuation?: number }) => Promise<void> {
  const { hint } = invocation;
  return async (next) => {
    const result = await publisher().publish([
      { source: HINT_EVENT_SOURCE, detailType: HintDetailType.objectChanged, detail: { ...hint, ...(next.continuation === undefined ? {} : { continuation: next.continuation }) } },
    ]);
    if (result.published !== 1) throw new UnavailableError(`drift check: the continuation hint of ${hint.kind} ${hint.name} was not published`);
  };
}
