/**
 * Starting and advancing fleet sync waves. Nothing here waits: each call takes whatever
 * steps are due now (start the next cluster, check acknowledgements) and returns; the
 * periodic resync calls `advanceSyncWaves` again ten minutes later. Every step is one
 * conditional write of the wave record, taken before the cluster writes it stands for, so
 * a step is taken once however often it is retried or run concurrently, and the writes to
 * a cluster (one guarded annotation patch per InferenceService) are idempotent on their own.
 */
import { randomBytes } from 'node:crypto';
import { parseClusterMode } from '../../domain/cluster-mode';
import type { ClusterHandle } from '../../ports/app-context';
import { ConflictError, InvalidInputError, NotFoundError } from '../../domain/errors';
import type { Event } from '../../domain/model/core';
import type { InferenceService } from '../../domain/model/inference-service';
import { Resources } from '../../domain/model/resources';
import type { Clock } from '../../ports/clock';
import type { ClusterClient } from '../../ports/cluster';
import type { ClusterRecord, ClusterRegistry, FleetStore } from '../../ports/store';
import { parseGoDuration } from '../../domain/go-duration';
import { Annotation, FIELD_MANAGER, RuntimeKind } from '../../domain/vocabulary';
import {
  DEFAULT_WAVE_ACK_TIMEOUT,
  WaveFailureReason,
  acknowledgeCluster,
  chooseWaveTargets,
  createSyncWave,
  describeWaveRuntime,
  haltWave,
  hashTokenValue,
  freezeWave,
  isPolicyWave,
  waveLever,
  judgeCluster,
  maxUpdateOf,
  nextWaveStep,
  observeWaveTarget,
  orderClusters,
  startCluster,
} from '../../domain/fleet/sync-wave';
import { parseClusterSelector, selectorMatches, type ClusterSelector } from '../../domain/fleet/cluster-labels';
import { freezeOf, type FreezeWindow } from '../../domain/fleet/freeze-window';
import type { SyncWave, WaveLever, WaveRuntime, WaveStage, WaveTarget } from '../../domain/fleet/sync-wave';

/** Objects per list request when choosing a cluster's targets. */
export const WAVE_LIST_PAGE_SIZE = 200;
/** Re-reads of one object when its guarded patch meets a concurrent write. */
const PATCH_ATTEMPTS = 3;

export interface FleetDeps {
  fleet: FleetStore;
  clusters: ClusterRegistry;
  /** A client for a registered cluster (AppContext.cluster). */
  cluster(clusterId: string): Promise<ClusterHandle>;
  clock: Clock;
  /** Hears of each wave write saved, for the plane's notifications (steps acknowledged, halts). */
  saved?: (before: SyncWave, after: SyncWave) => void;
}

/** A cluster the plane coordinates across: upstream OME pins there, the plane only pulls levers. */
export function isDelegateCluster(record: ClusterRecord): boolean {
  return parseClusterMode(record.mode) === 'delegate';
}

export interface StartSyncWaveInput {
  runtime: WaveRuntime;
  /** Clusters in the order to sync; every delegate cluster (by id) when absent. */
  clusterIds?: readonly string[];
  /** Instead of `clusterIds`: the delegate clusters whose labels match this selector (`env=prod,region=eu`), by id. */
  selector?: string;
  /** A Go duration; DEFAULT_WAVE_ACK_TIMEOUT when absent. */
  ackTimeout?: string;
  /** Stages in order, each a label selector: a cluster moves in the first stage it matches. One stage when absent. */
  stages?: readonly string[];
  /** Clusters of a stage syncing at once: a count (`2`) or a share of the stage (`50%`); 1 when absent. */
  maxUpdate?: string;
  /** A Go duration to wait after a stage's last acknowledgement before the next stage starts. */
  soak?: string;
  /** For tests; a time-ordered id otherwise. */
  id?: string;
}

/** A wave id that sorts by creation time: `20261201t172000-3f9a1c`. */
export function newWaveId(now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, '').toLowerCase();
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

function sameWaveRuntime(a: WaveRuntime, b: WaveRuntime): boolean {
  return a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;
}

/** Parses the acknowledgement deadline: a positive Go duration. */
export function parseAckTimeout(text: string): number {
  const nanoseconds = parseGoDuration(text);
  if (nanoseconds <= 0n) throw new InvalidInputError(`acknowledgement timeout ${JSON.stringify(text)} must be positive`);
  return Number(nanoseconds / 1_000_000n);
}

/**
 * The clusters a wave moves through: those named, in their order, each registered and
 * eligible; else the eligible clusters, those matching the selector when one is given, by
 * id. A runtime wave pulls upstream's lever where upstream pins (delegate clusters); a
 * repin is consumed by whichever controller runs the rollouts (the plane's repin-apply,
 * or upstream's), so a policy wave may go anywhere.
 */
function chooseWaveClusters(records: readonly ClusterRecord[], runtime: WaveRuntime, named: readonly string[] | undefined, selector: ClusterSelector | undefined): string[] {
  const policyWave = isPolicyWave(runtime);
  const eligible = (record: ClusterRecord) => policyWave || isDelegateCluster(record);
  if (named === undefined) {
    const candidates = records.filter(eligible);
    if (candidates.length === 0) throw new InvalidInputError(policyWave ? 'no cluster is registered' : 'no delegate cluster is registered: a sync wave rolls forward only where upstream OME pins');
    const chosen = orderClusters(candidates.filter((record) => !selector || selectorMatches(selector, record.labels)).map((record) => record.id));
    if (chosen.length === 0) {
      throw new InvalidInputError(`no ${policyWave ? 'registered' : 'delegate'} cluster matches the selector "${selector?.text ?? ''}" (kubectl ome admin cluster list --show-labels shows each cluster's labels)`);
    }
    return chosen;
  }
  const clusterIds = [...new Set(named)];
  if (clusterIds.length === 0) throw new InvalidInputError('name at least one cluster');
  for (const id of clusterIds) {
    const record = records.find((candidate) => candidate.id === id);
    if (!record) throw new InvalidInputError(`cluster ${id} is not registered`);
    if (!eligible(record)) throw new InvalidInputError(`cluster ${id} is not a delegate cluster: a sync wave rolls forward only where upstream OME pins`);
  }
  return clusterIds;
}

/**
 * Each cluster's stage: the first stage whose selector its registry labels match.
 * InvalidInputError for a malformed selector, or a cluster no stage takes (a wave must not
 * leave a chosen cluster behind without saying so).
 */
function assignStages(selectors: readonly string[], clusterIds: readonly string[], records: readonly ClusterRecord[]): { stages: WaveStage[]; stageOf: number[] } {
  const parsed = selectors.map((text) => parseClusterSelector(text));
  const stageOf = clusterIds.map((id) => {
    const labels = records.find((record) => record.id === id)?.labels;
    const stage = parsed.findIndex((selector) => selectorMatches(selector, labels));
    if (stage < 0) throw new InvalidInputError(`cluster ${id} matches no stage (${selectors.join(' | ')}): add a stage that matches it, or leave it out of the wave`);
    return stage;
  });
  return { stages: parsed.map((selector) => ({ selector: selector.text })), stageOf };
}

function checkMaxUpdate(maxUpdate: string): void {
  try {
    maxUpdateOf(maxUpdate, 1);
  } catch (error) {
    throw new InvalidInputError((error as Error).message);
  }
}

/** Parses the soak between stages: a positive Go duration. */
function parseSoak(text: string): number {
  const nanoseconds = parseGoDuration(text);
  if (nanoseconds <= 0n) throw new InvalidInputError(`soak ${JSON.stringify(text)} must be positive`);
  return Number(nanoseconds / 1_000_000n);
}

/**
 * Records a new wave. Clusters named explicitly keep their order and must be registered
 * delegate clusters; a selector takes the delegate clusters whose labels match, by id; by
 * default every delegate cluster, by id. With stages, each cluster moves in the first stage
 * its labels match, stage after stage. InvalidInputError for an unknown or standalone
 * cluster, a malformed selector or one that matches no delegate cluster, a cluster no
 * stage takes, a bad deadline, maxUpdate or soak, or a wave still running for the same
 * runtime.
 */
export async function startSyncWave(deps: Pick<FleetDeps, 'fleet' | 'clusters' | 'clock'>, input: StartSyncWaveInput): Promise<SyncWave> {
  const ackTimeout = input.ackTimeout ?? DEFAULT_WAVE_ACK_TIMEOUT;
  const ackTimeoutMs = parseAckTimeout(ackTimeout);
  if (input.clusterIds !== undefined && input.selector !== undefined) throw new InvalidInputError('name the clusters or give a selector, not both');
  const selector = input.selector === undefined ? undefined : parseClusterSelector(input.selector);
  const records = await deps.clusters.listClusters();
  const clusterIds = chooseWaveClusters(records, input.runtime, input.clusterIds, selector);
  const stages = input.stages === undefined || input.stages.length === 0 ? undefined : assignStages(input.stages, clusterIds, records);
  if (input.maxUpdate !== undefined) checkMaxUpdate(input.maxUpdate);
  const soak = input.soak === undefined ? undefined : { text: input.soak, ms: parseSoak(input.soak) };
  // Two waves on one runtime would set tokens over each other's: the first would see its
  // token superseded and halt.
  const running = (await deps.fleet.listWaves()).find((other) => other.state === 'Running' && sameWaveRuntime(other.runtime, input.runtime));
  if (running) throw new InvalidInputError(`sync wave ${running.id} is still running for ${describeWaveRuntime(input.runtime)}; wait for it to finish or halt`);
  const now = deps.clock.now();
  const wave = createSyncWave({
    id: input.id ?? newWaveId(now),
    runtime: input.runtime,
    clusterIds,
    ackTimeout,
    ackTimeoutMs,
    now,
    ...(selector?.text ? { selector: selector.text } : {}),
    ...(stages ? { stages } : {}),
    ...(input.maxUpdate === undefined ? {} : { maxUpdate: input.maxUpdate }),
    ...(soak ? { soak } : {}),
  });
  await deps.fleet.createWave(wave);
  return wave;
}

export type AdvanceOutcome =
  /** Nothing left to do: completed or halted (now or before). */
  | { waveId: string; outcome: 'completed' | 'halted'; wave: SyncWave }
  /** A cluster's acknowledgements are still due. */
  | { waveId: string; outcome: 'waiting'; wave: SyncWave }
  /** The next cluster waits for a freeze window (recorded in `wave.frozen`). */
  | { waveId: string; outcome: 'frozen'; wave: SyncWave }
  /** A stage finished; the next starts at `until` (epoch ms), its soak over. */
  | { waveId: string; outcome: 'soaking'; wave: SyncWave; until: number }
  /** Another invocation wrote the wave meanwhile; it carries the step. */
  | { waveId: string; outcome: 'contended' };

async function listCandidates(client: ClusterClient, runtime: WaveRuntime): Promise<InferenceService[]> {
  const items: InferenceService[] = [];
  let continueToken: string | undefined;
  do {
    const page = await client.list<InferenceService>(Resources.inferenceServices, {
      ...(runtime.kind === RuntimeKind.cluster ? {} : { namespace: runtime.namespace }),
      limit: WAVE_LIST_PAGE_SIZE,
      ...(continueToken ? { continue: continueToken } : {}),
    });
    items.push(...page.items);
    continueToken = page.continue;
  } while (continueToken);
  return items;
}

async function readTarget(client: ClusterClient, target: WaveTarget): Promise<InferenceService | undefined> {
  try {
    return await client.get<InferenceService>(Resources.inferenceServices, target.namespace, target.name);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

/**
 * Sets the wave's lever (its token as `ome.io/runtime-sync`, or a repin request) on one
 * target with the CLI's guarded JSON patch (uid, resourceVersion and the old value
 * tested), unless it already holds it or holds a value someone else set after the target
 * was chosen. A concurrent write fails the tests (409 or 422); the object is read again
 * and judged afresh.
 */
export async function setWaveToken(client: ClusterClient, target: WaveTarget, lever: WaveLever | string): Promise<'patched' | 'already-set' | 'skipped'> {
  const { annotation, value } = typeof lever === 'string' ? { annotation: Annotation.runtimeSync, value: lever } : lever;
  for (let attempt = 1; ; attempt += 1) {
    const isvc = await readTarget(client, target);
    if (isvc === undefined || isvc.metadata.uid !== target.uid) return 'skipped';
    const annotations = isvc.metadata.annotations;
    const current = annotations?.[annotation];
    if (current === value) return 'already-set';
    if (hashTokenValue(current) !== target.priorTokenHash) return 'skipped';
    const path = `/metadata/annotations/${annotation.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const patch: unknown[] = [
      { op: 'test', path: '/metadata/uid', value: isvc.metadata.uid },
      { op: 'test', path: '/metadata/resourceVersion', value: isvc.metadata.resourceVersion },
      ...(current === undefined ? [] : [{ op: 'test', path, value: current }]),
      ...(annotations === undefined ? [{ op: 'add', path: '/metadata/annotations', value: {} }] : []),
      { op: 'add', path, value },
    ];
    try {
      await client.patch(Resources.inferenceServices, target.namespace, target.name, patch, { type: 'json', fieldManager: FIELD_MANAGER });
      return 'patched';
    } catch (error) {
      const raced = error instanceof ConflictError || (error instanceof InvalidInputError && !(error instanceof NotFoundError));
      if (!raced || attempt >= PATCH_ATTEMPTS) throw error;
    }
  }
}

/** The events that say the lever's request was refused on this target (RuntimePinError, RolloutRepinRejected). */
async function refusalEvents(client: ClusterClient, target: WaveTarget, lever: WaveLever): Promise<Event[]> {
  const page = await client.list<Event>(Resources.events, {
    namespace: target.namespace,
    fieldSelector: `involvedObject.uid=${target.uid},reason=${lever.refusal}`,
  });
  return page.items;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Saves `next` over the version it was derived from; undefined when another writer got there first. */
async function save(deps: FleetDeps, next: SyncWave, before?: SyncWave): Promise<SyncWave | undefined> {
  try {
    const saved = await deps.fleet.saveWave(next);
    if (before) deps.saved?.(before, saved);
    return saved;
  } catch (error) {
    if (error instanceof ConflictError) return undefined;
    throw error;
  }
}

type StepResult = { kind: 'saved'; wave: SyncWave } | { kind: 'contended' } | { kind: 'waiting' };

/** Chooses cluster `index`'s targets, records the step, then sets the token on each. */
async function startStep(deps: FleetDeps, client: ClusterClient, wave: SyncWave, index: number, now: number): Promise<StepResult> {
  const targets = chooseWaveTargets(await listCandidates(client, wave.runtime), wave.runtime);
  // The step is recorded before any patch: a second invocation that read the same version
  // cannot record it too, so only one of them goes on to patch.
  const saved = await save(deps, startCluster(wave, index, targets, now));
  if (saved === undefined) return { kind: 'contended' };
  for (const target of saved.clusters[index]?.targets ?? []) await setWaveToken(client, target, waveLever(saved));
  return { kind: 'saved', wave: saved };
}

/** Judges cluster `index` from its targets as they are now; records an acknowledgement or a halt. */
async function awaitStep(deps: FleetDeps, client: ClusterClient, wave: SyncWave, index: number, now: number): Promise<StepResult> {
  const cluster = wave.clusters[index];
  const since = cluster?.startedAt ?? now;
  const lever = waveLever(wave);
  const observations = [];
  for (const target of cluster?.targets ?? []) {
    const isvc = await readTarget(client, target);
    const events = isvc === undefined ? [] : await refusalEvents(client, target, lever);
    observations.push({ target, observation: observeWaveTarget({ target, token: wave.token, lever, isvc, events, since, now, ackTimeoutMs: wave.ackTimeoutMs, ackTimeout: wave.ackTimeout }) });
  }
  const verdict = judgeCluster(observations);
  if (verdict.state === 'waiting') {
    // A patch that did not land before (the invocation died after recording the step).
    for (const target of verdict.unpatched) await setWaveToken(client, target, lever);
    return { kind: 'waiting' };
  }
  const next =
    verdict.state === 'acknowledged'
      ? acknowledgeCluster(wave, index, now)
      : haltWave(wave, index, { namespace: verdict.target.namespace, name: verdict.target.name, reason: verdict.reason, message: verdict.message }, now);
  const saved = await save(deps, next, wave);
  return saved === undefined ? { kind: 'contended' } : { kind: 'saved', wave: saved };
}

/**
 * A cluster that fails with a retryable error (unreachable, throttled) may answer at the
 * next run, until its deadline passes; anything else, or past the deadline, halts the wave.
 */
function haltsOn(error: unknown, wave: SyncWave, index: number, started: boolean, now: number): boolean {
  if (error instanceof NotFoundError) return true;
  if ((error as { retryable?: boolean }).retryable === false) return true;
  return started && isDeadline(wave, index, now);
}

/**
 * Takes every step of the wave that is due now, in order: check the syncing clusters'
 * acknowledgements, choose the next cluster's targets and set the token on them while fewer
 * than the stage's maxUpdate are syncing, move to the next stage once every cluster of this
 * one is acknowledged and its soak is over, halt at the first failure (the record names the
 * cluster, the object and why; clusters not started stay untouched). A cluster is not
 * started while a freeze window holds it, unless the wave records an override. Returns when
 * the wave waits, soaks, is frozen, is finished, or another invocation wrote it first.
 */
export async function advanceSyncWave(deps: FleetDeps, waveOrId: SyncWave | string): Promise<AdvanceOutcome> {
  let wave = typeof waveOrId === 'string' ? await deps.fleet.getWave(waveOrId) : waveOrId;
  if (wave === undefined) throw new NotFoundError(`sync wave ${String(waveOrId)} not found`);
  const waveId = wave.id;
  let windows: FreezeWindow[] | undefined;
  // Syncing clusters checked in this run and still waiting: the next step is another one.
  const checked = new Set<number>();
  for (;;) {
    const now = deps.clock.now();
    const step = nextWaveStep(wave, now, checked);
    if (step.kind === 'done') return { waveId, outcome: wave.state === 'Halted' ? 'halted' : 'completed', wave };
    if (step.kind === 'soak') return { waveId, outcome: 'soaking', wave, until: step.until };
    if (step.kind === 'wait') return { waveId, outcome: 'waiting', wave };
    const clusterId = wave.clusters[step.index]?.clusterId as string;
    if (step.kind === 'start' && !wave.freezeOverride) {
      windows ??= await deps.fleet.listFreezeWindows();
      const freeze = windows.length === 0 ? undefined : freezeOf(windows, (await deps.clusters.getCluster(clusterId))?.labels, now);
      if (freeze) {
        // Recorded once per freeze, so `fleet status` says why the wave waits; not rewritten every run.
        const frozen = freezeWave(wave, { clusterId, ...freeze }, now);
        const saved = frozen === undefined ? wave : await save(deps, frozen);
        return saved === undefined ? { waveId, outcome: 'contended' } : { waveId, outcome: 'frozen', wave: saved };
      }
    }
    let result: StepResult;
    try {
      const { client } = await deps.cluster(clusterId);
      result = step.kind === 'start' ? await startStep(deps, client, wave, step.index, now) : await awaitStep(deps, client, wave, step.index, now);
    } catch (error) {
      const current = (await deps.fleet.getWave(waveId)) ?? wave;
      if (!haltsOn(error, current, step.index, current.clusters[step.index]?.state === 'Syncing', now)) throw error;
      const saved = await save(deps, haltWave(current, step.index, { reason: WaveFailureReason.unreachable, message: `cluster ${clusterId}: ${describeError(error)}` }, now), current);
      result = saved === undefined ? { kind: 'contended' } : { kind: 'saved', wave: saved };
    }
    if (result.kind === 'contended') return { waveId, outcome: 'contended' };
    if (result.kind === 'waiting') checked.add(step.index);
    else wave = result.wave;
  }
}

function isDeadline(wave: SyncWave, index: number, now: number): boolean {
  const startedAt = index < 0 ? undefined : wave.clusters[index]?.startedAt;
  return startedAt !== undefined && now - startedAt >= wave.ackTimeoutMs;
}

/**
 * Advances every running wave, one after another; a wave that fails to advance (its
 * cluster unreachable for now) does not stop the others and is tried again next run.
 */
export async function advanceSyncWaves(deps: FleetDeps): Promise<Array<AdvanceOutcome | { waveId: string; outcome: 'failed'; error: Error }>> {
  const outcomes: Array<AdvanceOutcome | { waveId: string; outcome: 'failed'; error: Error }> = [];
  for (const wave of await deps.fleet.listWaves()) {
    if (wave.state !== 'Running') continue;
    try {
      outcomes.push(await advanceSyncWave(deps, wave));
    } catch (error) {
      outcomes.push({ waveId: wave.id, outcome: 'failed', error: error instanceof Error ? error : new Error(String(error)) });
    }
  }
  return outcomes;
}
