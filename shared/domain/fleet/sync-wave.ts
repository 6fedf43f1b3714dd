/**
 * The rules of a fleet sync wave: one runtime change rolled forward cluster by cluster on
 * clusters where upstream OME's own controller pins (delegate clusters). The plane only
 * sets `ome.io/runtime-sync` (a lever upstream gives every user) on the InferenceServices
 * that drift from that runtime, then waits for upstream's acknowledgement before it
 * touches the next cluster. Pure: no I/O, no clock of its own; the use-case in
 * `shared/use-cases/fleet/advance-sync-wave.ts` reads the clusters and the table and
 * applies these decisions.
 */
import { createHash } from 'node:crypto';
import type { InferenceService } from '../model/inference-service';
import type { Event } from '../model/core';
import { normalizeRuntimeKind } from '../runtime/revision';
import { Annotation, ConditionType, DriftReason, EventReason, PlanDriftReason, REPIN_NOW, RuntimeKind } from '../vocabulary';
import type { RuntimeKindName } from '../vocabulary';

/** Prefix of every wave's `ome.io/runtime-sync` value; the rest is the wave id. */
export const WAVE_TOKEN_PREFIX = 'fleet-sync-';

/** How long a cluster may take to acknowledge when the wave names no deadline. */
export const DEFAULT_WAVE_ACK_TIMEOUT = '30m';

export type WaveState = 'Running' | 'Completed' | 'Halted';
export type WaveClusterState = 'Pending' | 'Syncing' | 'Acknowledged' | 'Failed';

/** The kind of a wave that moves running rollouts onto an edited RolloutPolicy. */
export const WAVE_POLICY_KIND = 'RolloutPolicy';

/**
 * What the wave rolls out: a runtime's change (`ome.io/runtime-sync` on the pins that drift
 * from it), or a RolloutPolicy's edit (`ome.io/rollout-repin: now` on the runs pinned to its
 * older plan). `namespace` is '' for a ClusterServingRuntime.
 */
export interface WaveRuntime {
  kind: RuntimeKindName | typeof WAVE_POLICY_KIND;
  namespace: string;
  name: string;
}

/** True for a wave that repins runs onto an edited RolloutPolicy. */
export function isPolicyWave(runtime: WaveRuntime): boolean {
  return runtime.kind === WAVE_POLICY_KIND;
}

/** The annotation a wave sets on each target, and the value. */
export interface WaveLever {
  annotation: string;
  value: string;
  /** The Warning event reason that says the request was refused. */
  refusal: string;
}

/** A runtime wave sets its token as `ome.io/runtime-sync`; a policy wave asks for a repin to the live plan. */
export function waveLever(wave: Pick<SyncWave, 'runtime' | 'token'>): WaveLever {
  return isPolicyWave(wave.runtime)
    ? { annotation: Annotation.rolloutRepin, value: REPIN_NOW, refusal: EventReason.rolloutRepinRejected }
    : { annotation: Annotation.runtimeSync, value: wave.token, refusal: EventReason.runtimePinError };
}

/** One InferenceService the wave set its token on. */
export interface WaveTarget {
  namespace: string;
  name: string;
  uid: string;
  /**
   * sha256 (hex) of the `ome.io/runtime-sync` value the object held when it was chosen
   * ('' hashed when it had none). While the object still holds that value the wave's patch
   * has not landed yet and may be sent; any other value than the wave's token means someone
   * else set a token meanwhile.
   */
  priorTokenHash: string;
}

export interface WaveFailure {
  clusterId: string;
  /** The InferenceService that failed, absent when the cluster itself failed (unreachable, unregistered). */
  namespace?: string;
  name?: string;
  reason: WaveFailureReason;
  message: string;
}

export const WaveFailureReason = {
  /** RuntimeDrifted with a reason other than RevisionMismatch. */
  drifted: 'RuntimeDrifted',
  /** upstream reported a RuntimePinError event on the object after the token was set. */
  pinError: 'RuntimePinError',
  /** The controller refused the repin (a RolloutRepinRejected event after it was asked). */
  repinRejected: 'RolloutRepinRejected',
  /** No acknowledgement within the wave's deadline. */
  timedOut: 'AcknowledgementTimeout',
  /** Another `ome.io/runtime-sync` value replaced the wave's token. */
  superseded: 'TokenSuperseded',
  /** The object was deleted, or replaced by another with the same name. */
  gone: 'TargetGone',
  /** The object stopped being a managed pin (autoSync on, or an explicit revision). */
  unpinned: 'PinNotManaged',
  /** The cluster could not be read or written. */
  unreachable: 'ClusterUnreachable',
} as const;
export type WaveFailureReason = (typeof WaveFailureReason)[keyof typeof WaveFailureReason];

export interface WaveClusterStep {
  clusterId: string;
  /** The stage the cluster moves in (index into `SyncWave.stages`); 0 when the wave has none. */
  stage?: number;
  state: WaveClusterState;
  /** When the wave chose this cluster's targets (epoch ms); the deadline counts from here. */
  startedAt?: number;
  acknowledgedAt?: number;
  targets: WaveTarget[];
}

export interface SyncWave {
  id: string;
  runtime: WaveRuntime;
  /** The `ome.io/runtime-sync` value set on every target: `fleet-sync-<id>`. */
  token: string;
  /** The acknowledgement deadline per cluster, as the operator wrote it (a Go duration). */
  ackTimeout: string;
  ackTimeoutMs: number;
  state: WaveState;
  clusters: WaveClusterStep[];
  /** The label selector the clusters were chosen by, when they were (for the record: the list is fixed at the start). */
  selector?: string;
  /** The stages, in order, each by the label selector its clusters matched first; one stage of every cluster when absent. */
  stages?: WaveStage[];
  /** How many clusters of a stage may sync at once, as written: a count (`2`) or a share of the stage (`50%`); 1 when absent. */
  maxUpdate?: string;
  /** How long the wave waits after a stage's last acknowledgement before the next stage starts, as written (a Go duration). */
  soak?: string;
  soakMs?: number;
  /** Set while the next cluster waits for a freeze window (freeze-window.ts); cleared when it starts. */
  frozen?: WaveFreeze;
  /** An operator's recorded override: the wave starts its clusters whatever the freeze windows say. */
  freezeOverride?: { reason: string; by?: string; at: number };
  createdAt: number;
  updatedAt: number;
  failure?: WaveFailure;
  /**
   * Bumped by every write; each write is conditional on the version it read, so two
   * invocations advancing the same wave cannot both take the same step.
   */
  version: number;
}

/** One stage of a wave: the clusters whose registry labels matched this selector first. */
export interface WaveStage {
  selector: string;
}

/**
 * How many clusters of a stage of `size` may sync at once: a count as is, a percentage of
 * the stage rounded down, at least one. RangeError for anything else.
 */
export function maxUpdateOf(maxUpdate: string | undefined, size: number): number {
  if (maxUpdate === undefined) return 1;
  const percent = /^(\d{1,3})%$/.exec(maxUpdate);
  if (percent) {
    const share = Number(percent[1]);
    if (share < 1 || share > 100) throw new RangeError(`maxUpdate ${JSON.stringify(maxUpdate)}: a percentage is 1% to 100%`);
    return Math.max(1, Math.floor((size * share) / 100));
  }
  if (!/^[1-9]\d{0,5}$/.test(maxUpdate)) throw new RangeError(`maxUpdate ${JSON.stringify(maxUpdate)}: give a count of clusters (2) or a share of the stage (50%)`);
  return Number(maxUpdate);
}

/** The wave's token, the same on every cluster: a retried step sets the value already there. */
export function waveToken(waveId: string): string {
  return `${WAVE_TOKEN_PREFIX}${waveId}`;
}

/** sha256 (hex) of an annotation value, '' for none; fixed size whatever the value. */
export function hashTokenValue(value: string | undefined): string {
  return createHash('sha256').update(value ?? '', 'utf8').digest('hex');
}

export interface CreateSyncWaveInput {
  id: string;
  runtime: WaveRuntime;
  clusterIds: readonly string[];
  ackTimeout: string;
  ackTimeoutMs: number;
  now: number;
  selector?: string;
  /** The stages and each cluster's stage (same length as `clusterIds`); one stage when absent. */
  stages?: { stages: WaveStage[]; stageOf: readonly number[] };
  maxUpdate?: string;
  soak?: { text: string; ms: number };
}

/** A new wave over `clusterIds`, in the order given (stage by stage when staged); nothing started yet. */
export function createSyncWave(input: CreateSyncWaveInput): SyncWave {
  const staged = input.stages;
  const clusters: WaveClusterStep[] = input.clusterIds.map((clusterId, i) => ({ clusterId, ...(staged ? { stage: staged.stageOf[i] ?? 0 } : {}), state: 'Pending', targets: [] }));
  if (staged) clusters.sort((a, b) => (a.stage ?? 0) - (b.stage ?? 0));
  return {
    id: input.id,
    runtime: { ...input.runtime },
    token: waveToken(input.id),
    ackTimeout: input.ackTimeout,
    ackTimeoutMs: input.ackTimeoutMs,
    state: input.clusterIds.length === 0 ? 'Completed' : 'Running',
    clusters,
    ...(input.selector ? { selector: input.selector } : {}),
    ...(staged ? { stages: staged.stages } : {}),
    ...(input.maxUpdate ? { maxUpdate: input.maxUpdate } : {}),
    ...(input.soak ? { soak: input.soak.text, soakMs: input.soak.ms } : {}),
    createdAt: input.now,
    updatedAt: input.now,
    version: 0,
  };
}

/** Clusters in a stable order: sorted by id, duplicates dropped. */
export function orderClusters(clusterIds: readonly string[]): string[] {
  return [...new Set(clusterIds)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

export type WaveStep =
  | { kind: 'done' }
  /** Choose the targets of this cluster and set the token on them. */
  | { kind: 'start'; index: number }
  /** The cluster's token is set; check the acknowledgements. */
  | { kind: 'await'; index: number }
  /** The previous stage finished; the next one starts at `until` (epoch ms). */
  | { kind: 'soak'; stage: number; until: number }
  /** Every cluster the stage may sync at once is syncing, and none of them is due a check. */
  | { kind: 'wait' };

/** The stage a cluster moves in. */
export function stageOf(step: WaveClusterStep): number {
  return step.stage ?? 0;
}

/**
 * What the wave does next at `now`: nothing once it completed or halted. Else, in the
 * first stage with a cluster not acknowledged: wait out the soak after the previous
 * stage's last acknowledgement, before the stage's first cluster starts; check a syncing
 * cluster not in `checked` (those already checked in this run); start the stage's next
 * pending cluster while fewer than its maxUpdate are syncing. A later stage never starts
 * while an earlier one has a cluster not acknowledged.
 */
export function nextWaveStep(wave: SyncWave, now = Number.POSITIVE_INFINITY, checked: ReadonlySet<number> = new Set()): WaveStep {
  if (wave.state !== 'Running') return { kind: 'done' };
  const open = wave.clusters.find((step) => step.state !== 'Acknowledged');
  if (open === undefined) return { kind: 'done' };
  const stage = stageOf(open);
  const members = wave.clusters.flatMap((step, index) => (stageOf(step) === stage ? [{ step, index }] : []));
  if (stage > 0 && wave.soakMs && members.every(({ step }) => step.state === 'Pending')) {
    const finished = Math.max(...wave.clusters.filter((step) => stageOf(step) === stage - 1).map((step) => step.acknowledgedAt ?? 0));
    const until = finished + wave.soakMs;
    if (now < until) return { kind: 'soak', stage, until };
  }
  const syncing = members.filter(({ step }) => step.state === 'Syncing');
  const due = syncing.find(({ index }) => !checked.has(index));
  if (due) return { kind: 'await', index: due.index };
  const pending = members.find(({ step }) => step.state === 'Pending');
  if (pending && syncing.length < maxUpdateOf(wave.maxUpdate, members.length)) return { kind: 'start', index: pending.index };
  return { kind: 'wait' };
}

function sameRuntime(isvc: InferenceService, runtime: WaveRuntime): boolean {
  const ref = isvc.spec?.runtime;
  if (!ref?.name || ref.name !== runtime.name) return false;
  if (normalizeRuntimeKind(ref.kind) !== runtime.kind) return false;
  // A ServingRuntime serves only its own namespace.
  return runtime.kind === RuntimeKind.cluster || (isvc.metadata.namespace ?? '') === runtime.namespace;
}

/** True for a pin upstream manages: a named runtime, `autoSync: false`, no explicit revision. */
export function isManagedPin(isvc: InferenceService): boolean {
  const ref = isvc.spec?.runtime;
  return Boolean(ref?.name) && ref?.autoSync === false && !ref?.revision;
}

function driftedCondition(isvc: InferenceService) {
  return (isvc.status?.conditions ?? []).find((condition) => condition.type === ConditionType.runtimeDrifted && condition.status === 'True');
}

/**
 * Whether the wave rolls this InferenceService forward: a managed pin of the wave's runtime
 * that drifts with RevisionMismatch (the live runtime changed since it was pinned). Others
 * (not pinned, other runtime, other drift reasons) are left alone.
 */
export function isWaveCandidate(isvc: InferenceService, runtime: WaveRuntime): boolean {
  return sameRuntime(isvc, runtime) && isManagedPin(isvc) && driftedCondition(isvc)?.reason === DriftReason.revisionMismatch;
}

function policyDrift(isvc: InferenceService) {
  return (isvc.status?.conditions ?? []).find((condition) => condition.type === ConditionType.rolloutPlanDrift && condition.status === 'True' && condition.reason === PlanDriftReason.policyNewerThanRun);
}

/** Whether the active run pins a group from the policy `name` (of the InferenceService's own namespace). */
function runPinsPolicy(isvc: InferenceService, policy: WaveRuntime): boolean {
  if ((isvc.metadata.namespace ?? '') !== policy.namespace) return false;
  return (isvc.status?.rollout?.activeRun?.plan?.groups ?? []).some((group) => group.policyRef?.name === policy.name);
}

/**
 * Whether a policy wave repins this InferenceService: its active run pins a group of the
 * policy, and RolloutPlanDrift says the policy is newer than the run.
 */
export function isRepinCandidate(isvc: InferenceService, policy: WaveRuntime): boolean {
  return runPinsPolicy(isvc, policy) && policyDrift(isvc) !== undefined;
}

/** The targets of one cluster, in a stable order, remembering each one's lever annotation at the time. */
export function chooseWaveTargets(isvcs: readonly InferenceService[], runtime: WaveRuntime): WaveTarget[] {
  const candidate = isPolicyWave(runtime) ? isRepinCandidate : isWaveCandidate;
  const annotation = isPolicyWave(runtime) ? Annotation.rolloutRepin : Annotation.runtimeSync;
  return isvcs
    .filter((isvc) => candidate(isvc, runtime) && isvc.metadata.uid)
    .map((isvc) => ({
      namespace: isvc.metadata.namespace ?? '',
      name: isvc.metadata.name,
      uid: isvc.metadata.uid as string,
      priorTokenHash: hashTokenValue(isvc.metadata.annotations?.[annotation]),
    }))
    .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
}

/**
 * The acknowledgement rule of `kubectl ome wait --for=runtime-sync=acknowledged`: the
 * annotation and `status.lastRuntimeSyncToken` both hold the token, there is no
 * RuntimeDrifted condition, and the pin is managed (with a pinned revision).
 */
export function isSyncAcknowledged(isvc: InferenceService, token: string): boolean {
  const conditions = isvc.status?.conditions ?? [];
  return (
    isvc.metadata.annotations?.[Annotation.runtimeSync] === token &&
    isvc.status?.lastRuntimeSyncToken === token &&
    !conditions.some((condition) => condition.type === ConditionType.runtimeDrifted) &&
    isManagedPin(isvc) &&
    Boolean(isvc.status?.pinnedRevisionName)
  );
}

export type TargetObservation =
  | { state: 'acknowledged' }
  /** The wave's patch has not landed: send it. */
  | { state: 'unpatched' }
  | { state: 'waiting' }
  | { state: 'failed'; reason: WaveFailureReason; message: string };

export interface ObserveTargetInput {
  target: WaveTarget;
  token: string;
  /** What the wave set; a runtime wave's token as `ome.io/runtime-sync` when absent. */
  lever?: WaveLever;
  /** The object as read now; undefined when it is gone. */
  isvc: InferenceService | undefined;
  /** Events about the object (any age; only those since `since` count). */
  events: readonly Event[];
  /** When the cluster's step started (epoch ms). */
  since: number;
  now: number;
  ackTimeoutMs: number;
  ackTimeout: string;
}

function eventTime(event: Event): number {
  const raw = event.lastTimestamp ?? event.eventTime ?? event.firstTimestamp ?? event.metadata.creationTimestamp;
  const parsed = typeof raw === 'string' ? Date.parse(raw) : Number.NaN;
  return Number.isNaN(parsed) ? 0 : parsed;
}

/**
 * Where one target stands, checks in order: gone, no longer a managed pin, acknowledged,
 * another token set, the wave's patch not landed yet, RuntimeDrifted with another reason
 * than RevisionMismatch, a RuntimePinError event since the step started, the deadline.
 * Events carry second precision, so an event in the step's first second counts.
 */
export function observeWaveTarget(input: ObserveTargetInput): TargetObservation {
  if (input.lever?.annotation === Annotation.rolloutRepin) return observeRepinTarget(input, input.lever);
  const { isvc, target, token } = input;
  if (isvc === undefined || isvc.metadata.uid !== target.uid) {
    return { state: 'failed', reason: WaveFailureReason.gone, message: `${target.namespace}/${target.name} was deleted or replaced while the wave waited for it` };
  }
  if (!isManagedPin(isvc)) {
    return { state: 'failed', reason: WaveFailureReason.unpinned, message: `${target.namespace}/${target.name} is no longer a managed pin (autoSync: false without spec.runtime.revision)` };
  }
  if (isSyncAcknowledged(isvc, token)) return { state: 'acknowledged' };
  const current = isvc.metadata.annotations?.[Annotation.runtimeSync];
  if (current !== token) {
    if (hashTokenValue(current) === target.priorTokenHash) return { state: 'unpatched' };
    return { state: 'failed', reason: WaveFailureReason.superseded, message: `${target.namespace}/${target.name}: ome.io/runtime-sync was changed to another value while the wave waited` };
  }
  const drifted = driftedCondition(isvc);
  if (drifted && drifted.reason !== DriftReason.revisionMismatch) {
    return { state: 'failed', reason: WaveFailureReason.drifted, message: `${target.namespace}/${target.name}: RuntimeDrifted ${drifted.reason ?? ''}: ${drifted.message ?? ''}` };
  }
  const pinError = refusalSince(input, EventReason.runtimePinError);
  if (pinError) {
    return { state: 'failed', reason: WaveFailureReason.pinError, message: `${target.namespace}/${target.name}: RuntimePinError: ${pinError.message ?? ''}` };
  }
  if (input.now - input.since >= input.ackTimeoutMs) {
    return { state: 'failed', reason: WaveFailureReason.timedOut, message: `${target.namespace}/${target.name}: not acknowledged within ${input.ackTimeout}` };
  }
  return { state: 'waiting' };
}

/** The newest event of `reason` about the target since its step started (second precision: the step's first second counts). */
function refusalSince(input: ObserveTargetInput, reason: string): Event | undefined {
  const sinceSecond = Math.floor(input.since / 1000) * 1000;
  return input.events
    .filter((event) => event.reason === reason && event.involvedObject?.uid === input.target.uid && eventTime(event) >= sinceSecond)
    .sort((a, b) => eventTime(b) - eventTime(a))[0];
}

/**
 * Where one target of a policy wave stands, checks in order: gone; acknowledged (the
 * request consumed, and no run pinned to the policy's older plan any more: repinned, or
 * the run closed meanwhile); a RolloutRepinRejected event since the step started; the
 * request still waiting; another value set by someone else; the request not sent yet; the
 * deadline.
 */
function observeRepinTarget(input: ObserveTargetInput, lever: WaveLever): TargetObservation {
  const { isvc, target } = input;
  if (isvc === undefined || isvc.metadata.uid !== target.uid) {
    return { state: 'failed', reason: WaveFailureReason.gone, message: `${target.namespace}/${target.name} was deleted or replaced while the wave waited for it` };
  }
  const current = isvc.metadata.annotations?.[lever.annotation];
  if (current === undefined && policyDrift(isvc) === undefined) return { state: 'acknowledged' };
  const refused = refusalSince(input, lever.refusal);
  if (refused) return { state: 'failed', reason: WaveFailureReason.repinRejected, message: `${target.namespace}/${target.name}: ${lever.refusal}: ${refused.message ?? ''}` };
  if (input.now - input.since >= input.ackTimeoutMs) {
    return { state: 'failed', reason: WaveFailureReason.timedOut, message: `${target.namespace}/${target.name}: not repinned within ${input.ackTimeout}` };
  }
  if (current === lever.value) return { state: 'waiting' };
  if (hashTokenValue(current) === target.priorTokenHash) return { state: 'unpatched' };
  return { state: 'failed', reason: WaveFailureReason.superseded, message: `${target.namespace}/${target.name}: ${lever.annotation} was changed to another value while the wave waited` };
}

export type ClusterVerdict =
  | { state: 'acknowledged' }
  | { state: 'waiting'; unpatched: WaveTarget[] }
  | { state: 'failed'; target: WaveTarget; reason: WaveFailureReason; message: string };

/**
 * A cluster's verdict from its targets' observations, in target order: the first failure
 * halts the wave; all acknowledged moves it on; otherwise it waits (sending any patch
 * that has not landed).
 */
export function judgeCluster(observations: ReadonlyArray<{ target: WaveTarget; observation: TargetObservation }>): ClusterVerdict {
  for (const { target, observation } of observations) {
    if (observation.state === 'failed') return { state: 'failed', target, reason: observation.reason, message: observation.message };
  }
  if (observations.every(({ observation }) => observation.state === 'acknowledged')) return { state: 'acknowledged' };
  return { state: 'waiting', unpatched: observations.filter(({ observation }) => observation.state === 'unpatched').map(({ target }) => target) };
}

/** The wave with cluster `index` started on `targets` (acknowledged at once when it has none). */
export function startCluster(wave: SyncWave, index: number, targets: WaveTarget[], now: number): SyncWave {
  const next = touch(wave, now);
  delete next.frozen;
  const step = next.clusters[index] as WaveClusterStep;
  next.clusters[index] = targets.length === 0 ? { ...step, state: 'Acknowledged', startedAt: now, acknowledgedAt: now, targets: [] } : { ...step, state: 'Syncing', startedAt: now, targets };
  return settle(next);
}

/** A freeze as the wave records it: which cluster waits, for which window, since when. */
export interface WaveFreeze {
  clusterId: string;
  window: string;
  effect: 'deny' | 'allow';
  until?: number;
  message: string;
  since: number;
}

/**
 * The wave recording that its next cluster waits for a freeze, or undefined when it
 * already records that same freeze (nothing to write: a frozen wave costs no write per run).
 */
export function freezeWave(wave: SyncWave, freeze: Omit<WaveFreeze, 'since'>, now: number): SyncWave | undefined {
  const current = wave.frozen;
  if (current && current.clusterId === freeze.clusterId && current.window === freeze.window && current.until === freeze.until && current.message === freeze.message) return undefined;
  const next = touch(wave, now);
  const since = current && current.clusterId === freeze.clusterId ? current.since : now;
  next.frozen = { ...freeze, since };
  return next;
}

/** The wave with an operator's override recorded: it no longer waits for freeze windows. */
export function overrideFreeze(wave: SyncWave, reason: string, by: string | undefined, now: number): SyncWave {
  const next = touch(wave, now);
  next.freezeOverride = { reason, ...(by ? { by } : {}), at: now };
  return next;
}

/** The wave with cluster `index` acknowledged. */
export function acknowledgeCluster(wave: SyncWave, index: number, now: number): SyncWave {
  const next = touch(wave, now);
  next.clusters[index] = { ...(next.clusters[index] as WaveClusterStep), state: 'Acknowledged', acknowledgedAt: now };
  return settle(next);
}

/** The wave halted at cluster `index`; later clusters stay Pending, untouched. */
export function haltWave(wave: SyncWave, index: number, failure: Omit<WaveFailure, 'clusterId'>, now: number): SyncWave {
  const next = touch(wave, now);
  const step = next.clusters[index] as WaveClusterStep;
  next.clusters[index] = { ...step, state: 'Failed' };
  next.state = 'Halted';
  next.failure = { clusterId: step.clusterId, ...failure };
  return next;
}

function touch(wave: SyncWave, now: number): SyncWave {
  return { ...structuredClone(wave), updatedAt: now };
}

function settle(wave: SyncWave): SyncWave {
  if (wave.state === 'Running' && wave.clusters.every((step) => step.state === 'Acknowledged')) wave.state = 'Completed';
  return wave;
}

/** Parses `<Kind>/<name>` or `<name>` (a ClusterServingRuntime), the way the operator names what a wave rolls out. */
export function parseWaveRuntime(text: string, namespace: string | undefined): WaveRuntime {
  const slash = text.indexOf('/');
  const rawKind = slash < 0 ? RuntimeKind.cluster : text.slice(0, slash);
  const name = slash < 0 ? text : text.slice(slash + 1);
  const kind = KIND_ALIASES[rawKind.toLowerCase()];
  if (kind === undefined) throw new RangeError(`unknown kind "${rawKind}": use ServingRuntime/<name>, ClusterServingRuntime/<name> or RolloutPolicy/<name>`);
  if (!name || name.includes('/')) throw new RangeError(`"${text}" names nothing a wave rolls out: use ServingRuntime/<name>, ClusterServingRuntime/<name> or RolloutPolicy/<name>`);
  if (kind !== RuntimeKind.cluster && !namespace) throw new RangeError(`${kind}/${name} needs a namespace (-n)`);
  return { kind, namespace: kind === RuntimeKind.cluster ? '' : (namespace as string), name };
}

const KIND_ALIASES: Readonly<Record<string, WaveRuntime['kind']>> = {
  rolloutpolicy: WAVE_POLICY_KIND,
  rolloutpolicies: WAVE_POLICY_KIND,
  servingruntime: RuntimeKind.namespaced,
  servingruntimes: RuntimeKind.namespaced,
  sr: RuntimeKind.namespaced,
  clusterservingruntime: RuntimeKind.cluster,
  clusterservingruntimes: RuntimeKind.cluster,
  csr: RuntimeKind.cluster,
};

/** `ServingRuntime ns/name` or `ClusterServingRuntime name`, for messages and tables. */
export function describeWaveRuntime(runtime: WaveRuntime): string {
  return runtime.kind === RuntimeKind.cluster ? `${runtime.kind} ${runtime.name}` : `${runtime.kind} ${runtime.namespace}/${runtime.name}`;
}
