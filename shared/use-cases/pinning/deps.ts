/**
 * The pinning use-cases' dependencies for one hint invocation: the cluster's client and
 * OME namespace, the stores, the configuration, an Event recorder shared per client (so
 * repeated events aggregate) and the engine workload writer the function chose.
 */
import { recordEvent } from '../record-event';
import type { HintInvocation } from '../../app/hint-handler';
import type { ClusterClient } from '../../ports/cluster';
import type { EngineWorkloadWriter } from '../../ports/workloads';
import type { DriftCheckDeps } from './check-runtime-drift';

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
    ...(remainingTimeMs ? { remainingTimeMs } : {}),
  };
}
