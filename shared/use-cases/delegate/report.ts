/**
 * The delegate-mode use-cases of the event-driven functions. Upstream's controller pins,
 * reports drift, runs rollouts and consumes the request annotations in a delegate cluster,
 * so here a hint only makes the plane re-read what upstream wrote and report it: nothing
 * is written to the cluster, and no annotation is consumed.
 */
import { NotFoundError } from '../../domain/errors';
import type { InferenceService } from '../../domain/model/inference-service';
import { Resources } from '../../domain/model/resources';
import type { ClusterClient } from '../../ports/cluster';
import { normalizeRuntimeKind } from '../../domain/runtime/revision';
import { RuntimeKind } from '../../domain/vocabulary';
import { readUpstreamState, type UpstreamState } from './upstream-state';

/** Why nothing was written: the result every delegate use-case carries. */
export const DELEGATED = 'upstream OME controls this cluster (mode delegate): reported only';

export type DelegatedReport =
  | { delegated: typeof DELEGATED; outcome: 'gone' }
  | { delegated: typeof DELEGATED; outcome: 'reported'; namespace: string; name: string; state: UpstreamState };

export interface DelegatedFanOut {
  delegated: typeof DELEGATED;
  reports: Array<{ namespace: string; name: string; state: UpstreamState }>;
}

/** Re-reads one InferenceService and reports upstream's view of it (pin, drift, run, hold, pending requests). */
export async function reportDelegatedInferenceService(client: ClusterClient, target: { namespace: string; name: string; uid?: string }): Promise<DelegatedReport> {
  let isvc: InferenceService;
  try {
    isvc = await client.get<InferenceService>(Resources.inferenceServices, target.namespace, target.name);
  } catch (error) {
    if (error instanceof NotFoundError) return { delegated: DELEGATED, outcome: 'gone' };
    throw error;
  }
  if (target.uid && isvc.metadata.uid !== target.uid) return { delegated: DELEGATED, outcome: 'gone' };
  return { delegated: DELEGATED, outcome: 'reported', namespace: target.namespace, name: target.name, state: readUpstreamState(isvc) };
}

/** Whether `isvc` uses the runtime or revision a hint names. */
function concerns(isvc: InferenceService, trigger: { kind: string; namespace?: string; name: string }): boolean {
  if (trigger.kind === Resources.controllerRevisions.kind) return isvc.status?.pinnedRevisionName === trigger.name || isvc.spec?.runtime?.revision === trigger.name;
  const runtime = isvc.spec?.runtime;
  if (runtime?.name !== trigger.name) return false;
  const kind = normalizeRuntimeKind(runtime.kind);
  if (trigger.kind === RuntimeKind.namespaced) return kind === RuntimeKind.namespaced && isvc.metadata.namespace === trigger.namespace;
  // A ClusterServingRuntime serves `kind: ClusterServingRuntime` everywhere.
  return kind === RuntimeKind.cluster;
}

/** A runtime or revision changed: reports upstream's view of every InferenceService that uses it. */
export async function reportDelegatedRuntimeChange(client: ClusterClient, trigger: { kind: string; namespace?: string; name: string }, pageSize = 500): Promise<DelegatedFanOut> {
  const reports: DelegatedFanOut['reports'] = [];
  let continueToken: string | undefined;
  do {
    const page = await client.list<InferenceService>(Resources.inferenceServices, { limit: pageSize, ...(continueToken ? { continue: continueToken } : {}) });
    for (const isvc of page.items) {
      if (concerns(isvc, trigger)) reports.push({ namespace: isvc.metadata.namespace ?? '', name: isvc.metadata.name, state: readUpstreamState(isvc) });
    }
    continueToken = page.continue;
  } while (continueToken);
  return { delegated: DELEGATED, reports };
}
