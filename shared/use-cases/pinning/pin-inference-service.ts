/**
 * The pin use-case for one InferenceService: under the object's lease, re-read it,
 * resolve its live runtime, look its revisions up, decide in upstream's order
 * (`decidePin`), create the revision it needs, write status only when it changes, and
 * render its engine workload unless drift pauses updates.
 *
 * `ome.io/runtime-sync` is at most once per value, stronger than upstream: before a new
 * value rolls the InferenceService forward it is claimed in the idempotency store under
 * (cluster, uid, token). The claim is completed after the status write and abandoned when
 * anything fails before it, so a token that took effect never takes effect again, even
 * when a user sets it again after another one.
 */
import { previewAnnotationValue } from '../../domain/annotation-value';
import type { EventRecorder } from '../record-event';
import { objectLeaseKey, reconcileUnderLease, workloadFenceOf, type AttemptContext, type ReconcileDeps } from '../reconcile-under-lease';
import type { ControlPlaneConfig } from '../../ports/config';
import { ControlPlaneError, NotFoundError, UnownedDeploymentError } from '../../domain/errors';
import type { InferenceService } from '../../domain/model/inference-service';
import { Resources } from '../../domain/model/resources';
import type { Clock } from '../../ports/clock';
import type { ClusterClient, KubeObject } from '../../ports/cluster';
import type { StatusTransitions } from '../../ports/notifications';
import { idempotencyKey, type IdempotencyStore, type LeaseStore } from '../../ports/store';
import type { EngineWorkloadOutcome, EngineWorkloadRequest, EngineWorkloadWriter, WorkloadFence } from '../../ports/workloads';
import { hashIdempotencyPayload } from '../../domain/idempotency-rules';
import {
  buildControllerRevision,
  computeComponentDeploymentName,
  decidePin,
  findCondition,
  normalizeRuntimeKind,
  renderComponentDeployment,
  renderEngineDeployment,
  runtimeConfigures,
  type JsonValue,
  type LiveRuntimeResolution,
  type PinDecision,
  type PinningSubject,
  type StatusCondition,
} from '../../domain/runtime';
import { Annotation, ConditionType, EventReason, RuntimeReadyReason, FIELD_MANAGER, RENDERED_FROM_LIVE, SyncTokenMessage, WorkloadAnnotation, WorkloadMessage, type DriftReasonName } from '../../domain/vocabulary';
import { WorkloadSupersededError } from '../direct-workload-writer';
import { computeNextStatus, toPinningSubject } from './pin-status';
import { createRevision, RevisionCache, takeRevisionFromCollector } from '../revisions';
import { fetchLiveRuntime, toLiveRuntime, type RuntimeRef } from './runtime-source';

/** The component named as the source of our Events. */
export const PIN_REPORTING_CONTROLLER = 'ome-pinning-control-plane';

/**
 * Token records outlive any realistic InferenceService: a value that rolled one forward
 * must not roll it forward again years later. The uid in the key scopes them to one object.
 */
export const SYNC_TOKEN_RECORD_TTL_SECONDS = 10 * 366 * 24 * 3600;

export interface PinningDeps {
  clusterId: string;
  client: ClusterClient;
  /** OME's namespace in this cluster, where revisions live. */
  omeNamespace: string;
  leases: LeaseStore;
  idempotency: IdempotencyStore;
  clock: Clock;
  config: Pick<ControlPlaneConfig, 'renderWorkloads' | 'leaseTtlMs' | 'maxConflictRetries'>;
  /** Identifies this worker in lease records (the request id). */
  holder: string;
  events: EventRecorder;
  workloads: EngineWorkloadWriter;
  /** How long to wait for a lease another worker holds (default: the reconcile helper's). */
  leaseWaitMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /** The invocation's remaining time (Lambda's context), bounding how long a token claim stays in progress. */
  remainingTimeMs?: () => number;
  /** Hears of each status write committed, for the plane's notifications (drift reported or cleared). */
  transitions?: StatusTransitions;
}

export interface PinTarget {
  namespace: string;
  name: string;
  /** The uid the hint saw; an object of another uid is a new one, and the hint is stale. */
  uid?: string;
}

/**
 * `superseded`: a newer reconcile of the object (a newer lease) already wrote the Deployment; this one left it alone.
 * `not-owned`: a same-named Deployment is someone else's; it was left alone and a Warning says so.
 */
export type PinWorkloadOutcome = EngineWorkloadOutcome | 'paused' | 'disabled' | 'runtime-unavailable' | 'none' | 'superseded' | 'not-owned';

export interface PinResult {
  outcome: 'gone' | 'no-runtime' | PinDecision['outcome'];
  pinnedRevisionName?: string;
  drift?: DriftReasonName;
  revisionCreated: boolean;
  statusWritten: boolean;
  /** The `ome.io/runtime-sync` value this call rolled forward on. */
  tokenApplied?: string;
  /** A value that had already rolled this InferenceService forward once, so did nothing. */
  tokenAlreadyUsed?: string;
  workload: PinWorkloadOutcome;
}

/** Pinning is impossible for now (missing runtime at the first pin, broken chain): retry later. */
export class RuntimePinError extends ControlPlaneError {
  constructor(message: string) {
    super(message, { retryable: true });
    this.name = 'RuntimePinError';
  }
}

/** Another worker claimed this token and has not finished (or died; its claim expires). */
export class RuntimeSyncInProgressError extends ControlPlaneError {
  constructor(token: string) {
    super(`${Annotation.runtimeSync} ${previewAnnotationValue(token)} is being applied by another worker`, { retryable: true });
    this.name = 'RuntimeSyncInProgressError';
  }
}

/** The message of the event for a value that already rolled the InferenceService forward. */
export function formatTokenReusedMessage(token: string): string {
  return SyncTokenMessage.reused(previewAnnotationValue(token));
}

const NOTHING_DONE = { revisionCreated: false, statusWritten: false, workload: 'none' } as const;

/** What reconciling one object under its lease needs, from the pinning dependencies. */
export function reconcileDepsOf(deps: PinningDeps): ReconcileDeps {
  return {
    leases: deps.leases,
    clock: deps.clock,
    holder: deps.holder,
    leaseTtlMs: deps.config.leaseTtlMs,
    maxConflictRetries: deps.config.maxConflictRetries,
    ...(deps.leaseWaitMs === undefined ? {} : { leaseWaitMs: deps.leaseWaitMs }),
    ...(deps.sleep === undefined ? {} : { sleep: deps.sleep }),
  };
}

/** Pins one InferenceService; see the module comment. Safe to call again with the same target. */
export async function pinInferenceService(deps: PinningDeps, target: PinTarget): Promise<PinResult> {
  const reconcileDeps = reconcileDepsOf(deps);
  const key = objectLeaseKey(deps.clusterId, Resources.inferenceServices.kind, target.namespace, target.name);
  return reconcileUnderLease(reconcileDeps, key, (context) => attemptPin(deps, target, context));
}

async function readInferenceService(client: ClusterClient, target: PinTarget): Promise<InferenceService | undefined> {
  try {
    const isvc = await client.get<InferenceService>(Resources.inferenceServices, target.namespace, target.name);
    return target.uid !== undefined && target.uid !== '' && isvc.metadata.uid !== target.uid ? undefined : isvc;
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

interface Evaluation {
  isvc: InferenceService;
  ref: RuntimeRef;
  subject: PinningSubject;
  live: LiveRuntimeResolution;
  revisions: RevisionCache;
  decision: PinDecision;
}

/** The name a revision of the live spec would have, when it can have one. */
function liveRevisionName(ref: RuntimeRef, live: LiveRuntimeResolution, omeNamespace: string): string | undefined {
  if (live.status !== 'found') return undefined;
  try {
    return buildControllerRevision({ kind: ref.kind, namespace: ref.namespace, runtimeName: ref.name, mergedSpec: live.spec, omeNamespace }).metadata.name;
  } catch {
    return undefined; // decidePin reports the same problem as a RuntimePinError.
  }
}

async function evaluate(deps: PinningDeps, isvc: InferenceService, ref: RuntimeRef): Promise<Evaluation> {
  const subject = toPinningSubject(isvc);
  const live = await fetchLiveRuntime(deps.client, ref);
  const revisions = new RevisionCache(deps.client, deps.omeNamespace);
  if (subject.runtime?.autoSync === false) {
    await revisions.load([subject.runtime.revision ?? '', subject.pinnedRevisionName ?? '', liveRevisionName(ref, live, deps.omeNamespace) ?? '']);
  }
  const decision = decidePin({ isvc: subject, live: toLiveRuntime(live), lookupRevision: revisions.lookup, omeNamespace: deps.omeNamespace });
  return { isvc, ref, subject, live, revisions, decision };
}

function claimOwner(holder: string, context: AttemptContext): string {
  return `${holder}#${context.lease.fencingToken}`;
}

async function attemptPin(deps: PinningDeps, target: PinTarget, context: AttemptContext): Promise<PinResult> {
  const isvc = await readInferenceService(deps.client, target);
  if (!isvc) return { outcome: 'gone', ...NOTHING_DONE };
  const runtimeName = isvc.spec?.runtime?.name ?? '';
  if (runtimeName === '') return { outcome: 'no-runtime', ...NOTHING_DONE };
  const ref: RuntimeRef = { kind: normalizeRuntimeKind(isvc.spec.runtime?.kind), name: runtimeName, namespace: target.namespace };

  let evaluation = await evaluate(deps, isvc, ref);
  if (evaluation.decision.event) await failPin(deps, evaluation);
  if (evaluation.decision.unusableToken !== undefined) await warnUnusableTokenOnce(deps, evaluation, evaluation.decision.unusableToken);

  const token = evaluation.subject.syncToken ?? '';
  const claimed = evaluation.decision.tokenConsumed ? await claimSyncToken(deps, evaluation, token, context) : { evaluation };
  evaluation = claimed.evaluation;
  const { claimKey, tokenAlreadyUsed } = claimed;

  let written: { isvc: InferenceService; revisionCreated: boolean; statusWritten: boolean };
  try {
    written = await writePin(deps, evaluation, context);
    if (claimKey !== undefined) {
      await deps.idempotency.complete(claimKey, { pinnedRevisionName: evaluation.decision.status?.pinnedRevisionName ?? '', at: deps.clock.now() });
    }
  } catch (error) {
    if (claimKey !== undefined) await deps.idempotency.abandon(claimKey, claimOwner(deps.holder, context)).catch(() => undefined);
    throw error;
  }

  if (written.statusWritten) await warnRuntimeNotFound(deps, evaluation.isvc, written.isvc);
  const { decision } = evaluation;
  const pinned = written.isvc.status?.pinnedRevisionName;
  return {
    outcome: decision.outcome,
    ...(pinned ? { pinnedRevisionName: pinned } : {}),
    ...(decision.drift.action === 'set' ? { drift: decision.drift.reason } : {}),
    revisionCreated: written.revisionCreated,
    statusWritten: written.statusWritten,
    ...(claimKey !== undefined ? { tokenApplied: token } : {}),
    ...(tokenAlreadyUsed !== undefined ? { tokenAlreadyUsed } : {}),
    workload: await applyWorkload(deps, { ...evaluation, isvc: written.isvc }, workloadFenceOf(context)).catch(async (error: unknown) => {
      if (!(error instanceof UnownedDeploymentError)) throw error;
      // The pin stands (revision and status are written); only the workload is not ours to render.
      await warnUnownedDeploymentOnce(deps, written.isvc, error);
      return 'not-owned' as const;
    }),
  };
}

/**
 * Claims the sync token the decision consumes. A token that rolled this object forward
 * before is not applied again: the decision is taken anew as if it had not changed, and a
 * Warning names the reused value.
 */
async function claimSyncToken(
  deps: PinningDeps,
  evaluation: Evaluation,
  token: string,
  context: AttemptContext,
): Promise<{ evaluation: Evaluation; claimKey?: string; tokenAlreadyUsed?: string }> {
  const { isvc } = evaluation;
  const key = idempotencyKey(deps.clusterId, isvc.metadata.uid ?? '', 'runtime-sync', token);
  const claim = await deps.idempotency.claim(key, {
    inProgressTtlMs: deps.config.leaseTtlMs,
    recordTtlSeconds: SYNC_TOKEN_RECORD_TTL_SECONDS,
    payloadHash: hashIdempotencyPayload({ scope: 'runtime-sync', token }),
    // One owner per acquisition of the lease: the token is never reused, even by the same holder.
    owner: claimOwner(deps.holder, context),
    ...(deps.remainingTimeMs === undefined ? {} : { remainingTimeMs: deps.remainingTimeMs() }),
  });
  if (claim.state === 'in-progress') throw new RuntimeSyncInProgressError(token);
  if (claim.state === 'claimed') return { evaluation, claimKey: key };
  const subject = { ...evaluation.subject, syncToken: evaluation.subject.lastRuntimeSyncToken ?? '' };
  const decision = decidePin({ isvc: subject, live: toLiveRuntime(evaluation.live), lookupRevision: evaluation.revisions.lookup, omeNamespace: deps.omeNamespace });
  await recordWarning(deps, isvc, formatTokenReusedMessage(token));
  return { evaluation: { ...evaluation, subject, decision }, tokenAlreadyUsed: token };
}

/** Records the decision's RuntimePinError event and fails the attempt, to be retried. */
async function failPin(deps: PinningDeps, evaluation: Evaluation): Promise<never> {
  const message = evaluation.decision.event?.message ?? 'runtime pin failed';
  await recordWarning(deps, evaluation.isvc, message);
  throw new RuntimePinError(message);
}

/**
 * The Warning upstream records beside RuntimeReady False/RuntimeNotFound, once per time the
 * condition turns so: the status write that turned it, which only one worker's write can
 * be, decides. A failed record does not fail the pin (the condition says the same).
 */
async function warnRuntimeNotFound(deps: PinningDeps, before: InferenceService, after: InferenceService): Promise<void> {
  const readiness = (isvc: InferenceService) => findCondition(isvc.status?.conditions as StatusCondition[] | undefined, ConditionType.runtimeReady);
  const now = readiness(after);
  const was = readiness(before);
  if (now?.status !== 'False' || now.reason !== RuntimeReadyReason.runtimeNotFound) return;
  if (was?.status === now.status && was.reason === now.reason && was.message === now.message) return;
  await deps.events
    .record(after, { type: 'Warning', reason: EventReason.runtimeNotFound, message: now.message ?? '', reportingController: PIN_REPORTING_CONTROLLER })
    .catch(() => undefined);
}

/**
 * An `ome.io/runtime-sync` value that cannot be used gets one Warning event, however many
 * times the object is evaluated and by however many workers: the warning is claimed in the
 * idempotency store under the value's key (a value that is never usable never rolls
 * forward, so the key is free for it). The pin itself goes on as if the annotation were
 * absent, so nothing is retried because of the value; a claim that cannot be made fails
 * the attempt like any other store outage (no write without the store).
 */
async function warnUnusableTokenOnce(deps: PinningDeps, evaluation: Evaluation, message: string): Promise<void> {
  const { isvc } = evaluation;
  const key = idempotencyKey(deps.clusterId, isvc.metadata.uid ?? '', 'runtime-sync', evaluation.subject.syncToken ?? '');
  const claim = await deps.idempotency.claim(key, { inProgressTtlMs: deps.config.leaseTtlMs, recordTtlSeconds: SYNC_TOKEN_RECORD_TTL_SECONDS });
  if (claim.state !== 'claimed') return;
  try {
    await recordWarning(deps, isvc, message);
  } catch {
    // The warning must not hold the pin back: give the claim back so a later delivery warns.
    await deps.idempotency.abandon(key).catch(() => undefined);
    return;
  }
  await deps.idempotency.complete(key, { unusable: true });
}

/**
 * One Warning per Deployment object the plane refuses to write, however many hints and
 * workers evaluate the InferenceService: claimed in the idempotency store under the
 * InferenceService's and the Deployment's uids, like the unusable-token warning. A new
 * Deployment in its place (another uid) is reported again.
 */
async function warnUnownedDeploymentOnce(deps: PinningDeps, isvc: KubeObject, error: UnownedDeploymentError): Promise<void> {
  const key = idempotencyKey(deps.clusterId, isvc.metadata.uid ?? '', 'unowned-deployment', error.deploymentUid);
  const claim = await deps.idempotency.claim(key, { inProgressTtlMs: deps.config.leaseTtlMs, recordTtlSeconds: SYNC_TOKEN_RECORD_TTL_SECONDS });
  if (claim.state !== 'claimed') return;
  try {
    await deps.events.record(isvc, {
      type: 'Warning',
      reason: EventReason.deploymentNotOwned,
      message: WorkloadMessage.notOwned(error.namespace, error.deploymentName, error.problem),
      reportingController: PIN_REPORTING_CONTROLLER,
    });
  } catch {
    await deps.idempotency.abandon(key).catch(() => undefined);
    return;
  }
  await deps.idempotency.complete(key, { warned: true });
}

async function recordWarning(deps: PinningDeps, isvc: KubeObject, message: string): Promise<void> {
  await deps.events.record(isvc, { type: 'Warning', reason: EventReason.runtimePinError, message, reportingController: PIN_REPORTING_CONTROLLER });
}

/** Creates the revision, takes the served one back from the collector, then writes status. */
async function writePin(deps: PinningDeps, evaluation: Evaluation, context: AttemptContext): Promise<{ isvc: InferenceService; revisionCreated: boolean; statusWritten: boolean }> {
  const { decision, revisions } = evaluation;
  let revisionCreated = false;
  if (decision.createRevision) {
    const { revision, created } = await createRevision(deps.client, decision.createRevision);
    revisionCreated = created;
    if (!created) await takeRevisionFromCollector(deps.client, revision);
  } else if (decision.serve.source === 'revision') {
    const stored = revisions.get(decision.serve.revisionName);
    if (stored) await takeRevisionFromCollector(deps.client, stored);
  }
  // Where we render the workload we are the InferenceService's controller, so we report the
  // generation we acted on; where OME renders, its own controller owns observedGeneration.
  const generation = deps.config.renderWorkloads ? evaluation.isvc.metadata.generation : undefined;
  const status = computeNextStatus(evaluation.isvc.status, decision, deps.clock.now(), generation);
  if (status === undefined) return { isvc: evaluation.isvc, revisionCreated, statusWritten: false };
  // The re-read object carries its resourceVersion: a concurrent write makes this a 409.
  context.assertHeld();
  const updated = await deps.client.replaceStatus<InferenceService>(Resources.inferenceServices, { ...evaluation.isvc, status }, { fieldManager: FIELD_MANAGER });
  deps.transitions?.committed(evaluation.isvc, updated);
  return { isvc: updated, revisionCreated, statusWritten: true };
}

/** Renders the engine Deployment from the effective spec and hands it to the writer. */
/**
 * Whether the engine Deployment was rendered from a revision other than `revisionName`: a
 * roll's workload write that never happened. One rendered from the live spec (autoSync was
 * true until now) or absent stays as it is while updates pause.
 */
async function servesAnotherRevision(client: ClusterClient, isvc: InferenceService, revisionName: string): Promise<boolean> {
  const name = computeComponentDeploymentName(isvc.metadata.name, 'engine');
  try {
    const current = await client.get<KubeObject>(Resources.deployments, isvc.metadata.namespace, name);
    const renderedFrom = current.metadata.annotations?.[WorkloadAnnotation.renderedFrom] ?? RENDERED_FROM_LIVE;
    return renderedFrom !== RENDERED_FROM_LIVE && renderedFrom !== revisionName;
  } catch (error) {
    if (error instanceof NotFoundError) return false;
    throw error;
  }
}

async function applyWorkload(deps: PinningDeps, evaluation: Evaluation, fence: WorkloadFence): Promise<PinWorkloadOutcome> {
  const { decision, isvc, live, ref } = evaluation;
  if (!deps.config.renderWorkloads) return 'disabled';
  if (isvc.metadata.deletionTimestamp) return 'none';
  let serve = decision.serve;
  if (decision.pausesUpdates || serve.source === 'unchanged') {
    if (decision.holdAt === undefined || !(await servesAnotherRevision(deps.client, isvc, decision.holdAt.revisionName))) return 'paused';
    serve = decision.holdAt;
  }
  let spec: JsonValue;
  let revisionName: string | undefined;
  if (serve.source === 'revision') {
    spec = serve.spec;
    revisionName = serve.revisionName;
  } else if (live.status === 'found') {
    spec = live.spec;
  } else {
    return 'runtime-unavailable';
  }
  const subject = {
    namespace: ref.namespace,
    name: isvc.metadata.name,
    uid: isvc.metadata.uid,
    engine: { minReplicas: isvc.spec.engine?.minReplicas },
    decoder: { minReplicas: isvc.spec.decoder?.minReplicas },
    router: { minReplicas: isvc.spec.router?.minReplicas },
  };
  const desired = renderEngineDeployment({ isvc: subject, runtimeName: ref.name, spec, revisionName });
  try {
    const requests: EngineWorkloadRequest[] = [{ clusterId: deps.clusterId, isvc, desired, renderedFrom: revisionName ?? RENDERED_FROM_LIVE, fence }];
    // Decoder and router render beside the engine when the ISVC has them and the runtime configures them.
    for (const component of ['decoder', 'router'] as const) {
      if (!isvc.spec[component] || !runtimeConfigures(component, spec)) continue;
      const rendered = renderComponentDeployment(component, { isvc: subject, runtimeName: ref.name, spec, revisionName });
      requests.push({ clusterId: deps.clusterId, component, isvc, desired: rendered, renderedFrom: revisionName ?? RENDERED_FROM_LIVE, fence });
    }
    // Handed over together, so one change that renders several grouped components opens one run.
    if (deps.workloads.applyAll) {
      const [outcome] = await deps.workloads.applyAll(requests);
      return outcome ?? 'unchanged';
    }
    const outcomes: EngineWorkloadOutcome[] = [];
    for (const request of requests) outcomes.push(await deps.workloads.apply(request));
    return outcomes[0] ?? 'unchanged';
  } catch (error) {
    // Our status write stands (it carried the resourceVersion); the Deployment is the newer holder's.
    if (error instanceof WorkloadSupersededError) return 'superseded';
    throw error;
  }
}
