/**
 * What upstream OME's controller says about an InferenceService, read from the status it
 * writes. In a delegate cluster this is all the plane knows of pins, drift, runs and holds:
 * it reports these (logs, metrics) and coordinates across clusters on them, and never
 * writes them.
 */
import type { InferenceService } from '../../domain/model/inference-service';
import { Annotation, ConditionType, ROLLOUT_PAUSED_ANNOTATION } from '../../domain/vocabulary';

/** The request annotations upstream consumes, as the plane may find them still set. */
export const UPSTREAM_REQUEST_ANNOTATIONS = [Annotation.rolloutRepin, Annotation.rolloutPromote, Annotation.rolloutRollback, ROLLOUT_PAUSED_ANNOTATION] as const;

export interface UpstreamState {
  pinnedRevisionName?: string;
  /** `spec.runtime.revision`: an explicit pin (with autoSync false). */
  explicitRevision?: string;
  /** `ome.io/runtime-sync` as set now, and the value upstream last acted on. */
  syncToken: string;
  lastRuntimeSyncToken: string;
  /** A token set that upstream has not acted on yet. */
  syncPending: boolean;
  drift?: { reason: string; message: string };
  run?: { runID: string; phase?: string; hold?: string };
  /** Request annotations still present (upstream consumes repin, promote and rollback). */
  requests: string[];
}

/** Reads the state from one InferenceService as upstream's controller last wrote it. */
export function readUpstreamState(isvc: InferenceService): UpstreamState {
  const annotations = isvc.metadata.annotations ?? {};
  const status = isvc.status ?? {};
  const syncToken = annotations[Annotation.runtimeSync] ?? '';
  const lastRuntimeSyncToken = status.lastRuntimeSyncToken ?? '';
  const drifted = status.conditions?.find((condition) => condition.type === ConditionType.runtimeDrifted && condition.status === 'True');
  const activeRun = status.rollout?.activeRun;
  const engine = status.components?.engine as { rolloutPhase?: string } | undefined;
  // The holds the plane can tell from status and annotations alone (kubectl ome rollout explain shows all).
  const paused = annotations[ROLLOUT_PAUSED_ANNOTATION];
  const hold = paused === 'true' || paused === 'freeze' ? 'GlobalPause' : status.canary?.preStepHold ? 'CanaryPreStep' : undefined;
  return {
    ...(status.pinnedRevisionName ? { pinnedRevisionName: status.pinnedRevisionName } : {}),
    ...(isvc.spec?.runtime?.revision ? { explicitRevision: isvc.spec.runtime.revision } : {}),
    syncToken,
    lastRuntimeSyncToken,
    syncPending: syncToken !== '' && syncToken !== lastRuntimeSyncToken,
    ...(drifted ? { drift: { reason: drifted.reason ?? '', message: drifted.message ?? '' } } : {}),
    ...(activeRun?.runID ? { run: { runID: activeRun.runID, ...(engine?.rolloutPhase ? { phase: engine.rolloutPhase } : {}), ...(hold ? { hold } : {}) } } : {}),
    requests: UPSTREAM_REQUEST_ANNOTATIONS.filter((name) => annotations[name] !== undefined),
  };
}

/**
 * Whether upstream acknowledged `token`, as `kubectl ome wait --for=runtime-sync=acknowledged`
 * decides it: the annotation and `status.lastRuntimeSyncToken` both hold it, nothing is
 * drifted, and the pin is managed (autoSync false, no explicit revision, a pinned revision).
 */
export function isSyncAcknowledged(isvc: InferenceService, token: string): boolean {
  const state = readUpstreamState(isvc);
  const runtime = isvc.spec?.runtime;
  const managed = runtime?.name !== undefined && runtime.autoSync === false && !runtime.revision && state.pinnedRevisionName !== undefined;
  const drifted = isvc.status?.conditions?.some((condition) => condition.type === ConditionType.runtimeDrifted) ?? false;
  return token !== '' && state.syncToken === token && state.lastRuntimeSyncToken === token && !drifted && managed;
}
