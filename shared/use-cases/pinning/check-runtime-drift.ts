/**
 * The drift fan-out: a runtime changed (or a revision was deleted), so every pinned
 * InferenceService that uses it is evaluated again with the same decision the pin
 * use-case makes. The runtimes are listed and resolved once per fan-out and the
 * revisions of the affected runtimes read in one list, so an InferenceService whose
 * `RuntimeDrifted` condition changes costs one status write, and any other costs nothing
 * beyond its share of the paginated list.
 *
 * What is more than a condition change is handed to the pin use-case for that object
 * instead of being repeated here: a roll forward (a waiting `ome.io/runtime-sync` fires
 * at the runtime's change), a first pin, an InferenceService that drift no longer pauses
 * (its workload is rendered again), and one that follows the live runtime (its workload
 * is rendered from the new spec).
 *
 * A runtime's fan-out may outlast one invocation (100,000 InferenceServices under a
 * client-side rate limit take longer than Lambda's 15 minutes). With a continuation store
 * it runs within the invocation's time budget and, when that runs out, keeps its place in
 * the table and is enqueued again (docs/architecture.md, "Continuations").
 */
import { createHash } from 'node:crypto';
import { retryConflicts } from '../reconcile-under-lease';
import { ConflictError, ControlPlaneError, ExpiredError, isRetryable, NotFoundError } from '../../domain/errors';
import type { InferenceService, InferenceServiceStatus } from '../../domain/model/inference-service';
import { Resources } from '../../domain/model/resources';
import type { KubeObject } from '../../ports/cluster';
import type { Continuation, ContinuationStore } from '../../ports/store';
import { decidePin, normalizeRuntimeKind, type LiveRuntimeResolution, type PinDecision } from '../../domain/runtime';
import { FIELD_MANAGER, RuntimeKind } from '../../domain/vocabulary';
import { pinInferenceService, reconcileDepsOf, type PinningDeps } from './pin-inference-service';
import { forEachBounded } from '../for-each-bounded';
import { changesPin, computeNextStatus, isPausedByDrift, toPinningSubject } from './pin-status';
import { RevisionCache } from '../revisions';
import { fetchLiveRuntime, listAll, loadRuntimeCatalog, runtimeKeyOf, runtimeStillAsRead, toLiveRuntime, type RuntimeRead, type RuntimeRef } from './runtime-source';

export interface DriftCheckDeps extends PinningDeps {
  /** InferenceServices evaluated at once (default 16). */
  concurrency?: number;
  /** Items per list page (default 500). */
  pageSize?: number;
  /**
   * Where a runtime's fan-out keeps its place between invocations. Without it the fan-out
   * runs to its end in one invocation, whatever its length.
   */
  continuations?: ContinuationStore;
  /** Enqueues the fan-out again after it saved its place (the function publishes a continuation hint). */
  continueLater?: (trigger: DriftTrigger) => Promise<void>;
  /** Time kept back from the invocation's remaining time for the last writes and the save (default 20 s). */
  timeMarginMs?: number;
  /** A continuation not written for this long belongs to an invocation that died (default 5 min). */
  continuationStaleMs?: number;
}

/** What changed, as the hint says it. */
export interface DriftTrigger {
  kind: string;
  namespace?: string;
  name: string;
  change: 'added' | 'modified' | 'deleted' | 'relisted';
  /** Set on a continuation hint: the version of the continuation it resumes. */
  continuation?: number;
}

export interface DriftCheckReport {
  /** What the fan-out was about, or why it did nothing. */
  scope: 'runtime' | 'revision' | 'ignored';
  /** InferenceServices listed. */
  scanned: number;
  /** Those that use the runtime (or revision) and were evaluated. */
  evaluated: number;
  /** Status written here, with no other change. */
  statusWrites: number;
  /** Handed to the pin use-case. */
  pinned: number;
  /** Evaluated to an error (a RuntimePinError the pin use-case reports on its own events). */
  errors: number;
  /** Failed to write; retryable ones fail the whole fan-out so it is delivered again. */
  failed: number;
  /**
   * Written, then judged again because a runtime they were judged from changed before the
   * fence read it back (see `fenceWrites`).
   */
  rejudged: number;
  /**
   * With a continuation store: `started`/`resumed` and finished here, `continued` (saved
   * and enqueued again), `superseded` (a newer runtime change took over), or `dropped`
   * (a duplicate of a fan-out another invocation is running).
   */
  continuation?: 'started' | 'resumed' | 'continued' | 'superseded' | 'dropped';
}

/** The runtimes kept changing under the fan-out's writes; the fan-out is delivered again. */
export class DriftInputsMovingError extends ControlPlaneError {
  constructor(passes: number) {
    super(`drift check: the runtimes judged from changed again after ${passes} passes; retrying`, { retryable: true });
    this.name = 'DriftInputsMovingError';
  }
}

/** Some InferenceServices could not be brought up to date; the fan-out is delivered again. */
export class DriftFanOutIncompleteError extends ControlPlaneError {
  constructor(failed: number, cause: unknown) {
    super(`drift check: ${failed} InferenceService(s) could not be updated; retrying`, { retryable: true, cause });
    this.name = 'DriftFanOutIncompleteError';
  }
}

const DEFAULT_CONCURRENCY = 16;
/** Passes of the fence over the writes since the last one before the hint is handed back. */
const MAX_FENCE_PASSES = 3;
const DEFAULT_PAGE_SIZE = 500;
export const DEFAULT_FANOUT_TIME_MARGIN_MS = 20_000;
export const DEFAULT_CONTINUATION_STALE_MS = 300_000;

/** The continuation record's `work` for a runtime's fan-out. */
export function driftWork(kind: string, namespace: string | undefined, name: string): string {
  return `drift#${kind}/${namespace ?? ''}/${name}`;
}

/** What a fan-out is for: the changed runtime as listed (annotations and spec), hashed; `absent` once deleted. */
export function fanOutSubject(runtime: { annotations?: unknown; spec?: unknown } | undefined): string {
  if (runtime === undefined) return 'absent';
  return createHash('sha256').update(JSON.stringify([runtime.annotations ?? {}, runtime.spec ?? {}]), 'utf8').digest('hex');
}

export type FanOutStart = { action: 'start' } | { action: 'resume'; from: Continuation } | { action: 'drop' };

/**
 * Whether a hint starts the runtime's fan-out, resumes a saved one or is dropped. A
 * runtime that changed since the saved fan-out supersedes it; the hint a fan-out enqueued
 * for itself resumes it; any other hint for the same runtime state is a duplicate while
 * the saved one is being written to, and resumes it once it went stale (its invocation
 * died or its hint was lost). A continuation hint whose fan-out is no longer stored is
 * a duplicate of finished work.
 */
export function planFanOutStart(input: { stored: Continuation | undefined; continuation: number | undefined; subject: string; now: number; staleAfterMs: number }): FanOutStart {
  const { stored } = input;
  // The fan-out a continuation hint was enqueued for has finished (or was superseded and finished).
  if (stored === undefined) return input.continuation === undefined ? { action: 'start' } : { action: 'drop' };
  if (stored.subject !== input.subject) return { action: 'start' };
  if (input.continuation === stored.version || input.now - stored.updatedAt >= input.staleAfterMs) return { action: 'resume', from: stored };
  return { action: 'drop' };
}

const keyOf = (object: KubeObject): string => `${object.metadata.namespace ?? ''}/${object.metadata.name}`;

/** What one pass of a fan-out judges from: runtimes and revisions, each read once. */
interface FanOutInputs {
  /** The live runtime and the runtimes its resolution read, misses included. */
  resolve: (ref: RuntimeRef) => Promise<{ resolution: LiveRuntimeResolution; reads: readonly RuntimeRead[] }>;
  revisions: RevisionCache;
  /** Does this InferenceService belong to the fan-out? */
  uses: (isvc: InferenceService) => boolean;
  /**
   * Decisions by everything `decidePin` reads but the InferenceService's name (which it
   * does not read): thousands of objects pinned alike share a few decisions, so the
   * revision hashes behind them are computed a few times, not once per object.
   */
  decisions: Map<string, PinDecision>;
}

/**
 * The runtimes written conditions were judged from, by `runtimeKeyOf`. Revisions are not
 * among them: their data never changes, and a deleted one makes the decision an error,
 * which the fan-out never writes as a condition.
 */
type JudgedFrom = Map<string, RuntimeRead>;

interface FanOut {
  deps: DriftCheckDeps;
  inputs: FanOutInputs;
  /** Reads the inputs afresh, for a pass after the fence found one changed. */
  reload: () => Promise<FanOutInputs>;
  report: DriftCheckReport;
  retryableFailure?: unknown;
  /** Written since the last fence, and what their conditions were judged from. */
  written: InferenceService[];
  judgedFrom: JudgedFrom;
}

const nothingJudged = (): JudgedFrom => new Map();

/** Fans a runtime change or a revision delete out to the InferenceServices it affects. */
export async function checkRuntimeDrift(deps: DriftCheckDeps, trigger: DriftTrigger): Promise<DriftCheckReport> {
  const report: DriftCheckReport = { scope: 'ignored', scanned: 0, evaluated: 0, statusWrites: 0, pinned: 0, errors: 0, failed: 0, rejudged: 0 };
  const pageSize = deps.pageSize ?? DEFAULT_PAGE_SIZE;
  let fanOut: FanOut;
  let namespace: string | undefined;
  if (trigger.kind === RuntimeKind.cluster || trigger.kind === RuntimeKind.namespaced) {
    const kind = trigger.kind === RuntimeKind.namespaced ? RuntimeKind.namespaced : RuntimeKind.cluster;
    const changed = { kind, name: trigger.name, ...(kind === RuntimeKind.namespaced ? { namespace: trigger.namespace ?? '' } : {}) };
    const load = async (): Promise<FanOutInputs & { subject: string }> => {
      const catalog = await loadRuntimeCatalog(deps.client, changed, pageSize);
      const names = catalog.affectedNames(changed);
      const revisions = new RevisionCache(deps.client, deps.omeNamespace);
      await revisions.prefetchRuntimes(names, pageSize);
      return {
        subject: fanOutSubject(catalog.lookup(changed)),
        decisions: new Map(),
        revisions,
        resolve: async (ref) => ({ resolution: catalog.resolve(ref), reads: catalog.readsOf(ref) }),
        uses: (isvc) => names.has(isvc.spec?.runtime?.name ?? ''),
      };
    };
    const inputs = await load();
    report.scope = 'runtime';
    namespace = kind === RuntimeKind.namespaced ? changed.namespace : undefined;
    fanOut = { deps, report, inputs, reload: load, written: [], judgedFrom: nothingJudged() };
    if (deps.continuations) {
      const subject = inputs.subject;
      return runContinued(fanOut, trigger, { store: deps.continuations, work: driftWork(kind, namespace, trigger.name), subject, namespace, pageSize });
    }
  } else if (trigger.kind === 'ControllerRevision' && trigger.change === 'deleted') {
    const load = async (): Promise<FanOutInputs> => {
      const resolved = new Map<string, Promise<{ resolution: LiveRuntimeResolution; reads: RuntimeRead[] }>>();
      return {
        decisions: new Map(),
        revisions: new RevisionCache(deps.client, deps.omeNamespace),
        resolve: (ref) => {
          // Few InferenceServices name one revision: resolve each runtime once, on demand.
          const id = `${ref.kind}/${ref.namespace}/${ref.name}`;
          let entry = resolved.get(id);
          if (entry === undefined) {
            const reads: RuntimeRead[] = [];
            entry = fetchLiveRuntime(deps.client, ref, reads).then((resolution) => ({ resolution, reads }));
            resolved.set(id, entry);
          }
          return entry;
        },
        uses: (isvc) => isvc.status?.pinnedRevisionName === trigger.name || isvc.spec?.runtime?.revision === trigger.name,
      };
    };
    report.scope = 'revision';
    fanOut = { deps, report, inputs: await load(), reload: load, written: [], judgedFrom: nothingJudged() };
  } else {
    // InferenceService changes are the pin function's; other kinds carry no drift.
    return report;
  }

  for await (const page of listAll<InferenceService>(deps.client, Resources.inferenceServices, { ...(namespace === undefined ? {} : { namespace }), pageSize })) {
    report.scanned += page.length;
    await forEachBounded(page.filter((isvc) => fanOut.inputs.uses(isvc)), deps.concurrency ?? DEFAULT_CONCURRENCY, (isvc) => visit(fanOut, isvc));
  }
  // Once, after every write: a fan-out that dies before it is delivered again whole.
  await fenceWrites(fanOut);
  if (fanOut.retryableFailure !== undefined) throw new DriftFanOutIncompleteError(report.failed, fanOut.retryableFailure);
  return report;
}

interface ContinuedRun {
  store: ContinuationStore;
  work: string;
  subject: string;
  namespace: string | undefined;
  pageSize: number;
}

interface Place {
  pageToken?: string | undefined;
  after?: string | undefined;
  /** Whether a write failed retryably in the fan-out so far; kept as it is when absent. */
  failed?: boolean;
}

/** Saves the fan-out's place at the version `held` was read at; undefined when another invocation moved the record. */
async function savePlace(fanOut: FanOut, run: ContinuedRun, held: Continuation, place: Place): Promise<Continuation | undefined> {
  const failed = place.failed ?? held.state?.failed === true;
  try {
    return await run.store.saveContinuation({
      clusterId: held.clusterId,
      work: held.work,
      subject: held.subject,
      version: held.version,
      updatedAt: fanOut.deps.clock.now(),
      ...(place.pageToken === undefined ? {} : { pageToken: place.pageToken }),
      ...(place.after === undefined ? {} : { after: place.after }),
      ...(failed ? { state: { failed } } : {}),
    });
  } catch (error) {
    // Another invocation took the step: a newer runtime change, or a resumer of a record it thought stale.
    if (error instanceof ConflictError) return undefined;
    throw error;
  }
}

/** Claims the runtime's continuation for this invocation: the record it now holds and where to start, or undefined to drop the hint. */
async function claimContinuation(fanOut: FanOut, trigger: DriftTrigger, run: ContinuedRun): Promise<{ held: Continuation; from: Continuation | undefined } | undefined> {
  const { deps } = fanOut;
  const stored = await run.store.loadContinuation(deps.clusterId, run.work);
  const staleAfterMs = deps.continuationStaleMs ?? DEFAULT_CONTINUATION_STALE_MS;
  const start = planFanOutStart({ stored, continuation: trigger.continuation, subject: run.subject, now: deps.clock.now(), staleAfterMs });
  if (start.action === 'drop') return undefined;
  const from = start.action === 'resume' ? start.from : undefined;
  const base: Continuation = { clusterId: deps.clusterId, work: run.work, subject: run.subject, version: stored?.version ?? 0, updatedAt: deps.clock.now(), ...(from?.state ? { state: from.state } : {}) };
  const held = await savePlace(fanOut, run, base, { pageToken: from?.pageToken, after: from?.after });
  return held === undefined ? undefined : { held, from };
}

/** One page of InferenceServices from `pageToken`; the first page again when the saved token expired. */
async function listPage(fanOut: FanOut, run: ContinuedRun, pageToken: string | undefined): Promise<{ items: InferenceService[]; continue?: string | undefined; restarted: boolean }> {
  const list = (token: string | undefined) =>
    fanOut.deps.client.list<InferenceService>(Resources.inferenceServices, {
      ...(run.namespace === undefined ? {} : { namespace: run.namespace }),
      limit: run.pageSize,
      ...(token === undefined ? {} : { continue: token }),
    });
  try {
    return { ...(await list(pageToken)), restarted: false };
  } catch (error) {
    // etcd compacted past the saved token (410): list from the start; the saved key skips what is done.
    if (!(error instanceof ExpiredError) || pageToken === undefined) throw error;
    return { ...(await list(undefined)), restarted: true };
  }
}

/** Ends a pass: drops the record, or keeps it reset to the start and fails the hint when writes failed. */
async function finishContinued(fanOut: FanOut, run: ContinuedRun, held: Continuation): Promise<DriftCheckReport> {
  const { report } = fanOut;
  if (fanOut.retryableFailure !== undefined || held.state?.failed === true) {
    // Some writes failed in this pass or an earlier one: keep the record, reset to the start, so
    // the hint's redelivery (after the queue's visibility timeout, longer than the staleness)
    // runs a new pass, which writes only what is still out of date.
    if ((await savePlace(fanOut, run, held, { failed: false })) === undefined) return { ...report, continuation: 'superseded' };
    throw new DriftFanOutIncompleteError(report.failed, fanOut.retryableFailure);
  }
  try {
    await run.store.deleteContinuation(held.clusterId, held.work, held.version);
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    return { ...report, continuation: 'superseded' };
  }
  return report;
}

/**
 * A runtime's fan-out that keeps its place in the table: it claims the continuation (a
 * conditional write, so of two duplicates one goes on), lists from where it left off,
 * saves its place after every page, and stops launching writes when the invocation's
 * budget runs out; it then saves the page and the last key launched and enqueues itself
 * again. Each InferenceService is evaluated once per pass; a write repeated by a resumer
 * finds the condition already set and writes nothing.
 */
async function runContinued(fanOut: FanOut, trigger: DriftTrigger, run: ContinuedRun): Promise<DriftCheckReport> {
  const { deps, report } = fanOut;
  // A resumed fan-out claims its record first (of two duplicates, one goes on). A fresh one
  // claims it only once it has a place to keep (a second page, or time running out), so a
  // fan-out that fits one page and one invocation costs the table nothing.
  let held: Continuation | undefined;
  let from: Continuation | undefined;
  if (trigger.continuation !== undefined) {
    const claim = await claimContinuation(fanOut, trigger, run);
    if (claim === undefined) return { ...report, continuation: 'dropped' };
    ({ held, from } = claim);
    report.continuation = from ? 'resumed' : 'started';
  }
  const hold = async (): Promise<Continuation | undefined> => {
    if (held !== undefined) return held;
    const claim = await claimContinuation(fanOut, trigger, run);
    if (claim === undefined) return undefined;
    report.continuation = 'started';
    held = claim.held;
    return held;
  };

  const margin = deps.timeMarginMs ?? DEFAULT_FANOUT_TIME_MARGIN_MS;
  // Every invocation evaluates at least one InferenceService, so a fan-out always moves on,
  // even if an invocation starts with less than the margin left.
  let progressed = false;
  const hasTime = (): boolean => !progressed || (deps.remainingTimeMs?.() ?? Infinity) > margin;
  const visitOne = (isvc: InferenceService): Promise<void> => {
    progressed = true;
    return visit(fanOut, isvc);
  };
  const failed = (): Place => (fanOut.retryableFailure === undefined ? {} : { failed: true });
  /** Keeps `place`; undefined when another invocation moved the record. */
  const keep = async (place: Place): Promise<Continuation | undefined> => {
    const current = await hold();
    return current === undefined ? undefined : savePlace(fanOut, run, current, { ...place, ...failed() });
  };
  const pause = async (place: Place): Promise<DriftCheckReport> => {
    const saved = await keep(place);
    if (saved === undefined) return { ...report, continuation: 'superseded' };
    await deps.continueLater?.({ ...trigger, continuation: saved.version });
    return { ...report, continuation: 'continued' };
  };

  let pageToken = from?.pageToken;
  let after = from?.after;
  for (;;) {
    const page = await listPage(fanOut, run, pageToken);
    if (page.restarted) pageToken = undefined;
    const items = page.items.filter((item) => after === undefined || keyOf(item) > after);
    report.scanned += items.length;
    const used = items.filter((isvc) => fanOut.inputs.uses(isvc));
    const launched = await forEachBounded(used, deps.concurrency ?? DEFAULT_CONCURRENCY, visitOne, hasTime);
    // Before the place moves past this page's writes: a resumer does not judge them again.
    await fenceWrites(fanOut);
    if (launched < used.length) {
      // Everything up to the last one launched is done: the rest of this page is the next invocation's.
      const last = used[launched - 1];
      return pause({ pageToken, after: last === undefined ? after : keyOf(last) });
    }
    const lastListed = page.items[page.items.length - 1];
    if (lastListed !== undefined) after = keyOf(lastListed);
    pageToken = page.continue || undefined;
    if (pageToken === undefined) {
      if (held !== undefined) return finishContinued(fanOut, run, held);
      if (fanOut.retryableFailure !== undefined) throw new DriftFanOutIncompleteError(report.failed, fanOut.retryableFailure);
      return report;
    }
    if (!hasTime()) return pause({ pageToken, after });
    const saved = await keep({ pageToken, after });
    if (saved === undefined) return { ...report, continuation: 'superseded' };
    held = saved;
  }
}

type Verdict = { kind: 'none' } | { kind: 'error' } | { kind: 'pin' } | { kind: 'status'; decision: PinDecision; judgedFrom: JudgedFrom };

async function judge(fanOut: FanOut, isvc: InferenceService): Promise<Verdict> {
  const { deps, inputs } = fanOut;
  const runtime = isvc.spec?.runtime;
  const ref: RuntimeRef = { kind: normalizeRuntimeKind(runtime?.kind), name: runtime?.name ?? '', namespace: isvc.metadata.namespace ?? '' };
  if (ref.name === '') return { kind: 'none' };
  // Following the live runtime: its workload is rendered from the new spec.
  if (runtime?.autoSync !== false) return deps.config.renderWorkloads ? { kind: 'pin' } : { kind: 'none' };
  const subject = toPinningSubject(isvc);
  const live = await inputs.resolve(ref);
  // Known after the first object pinned alike (or the prefetch): no promise, no read.
  const pinned = subject.pinnedRevisionName ?? '';
  const requested = runtime.revision ?? '';
  if ((pinned !== '' && !inputs.revisions.has(pinned)) || (requested !== '' && !inputs.revisions.has(requested))) await inputs.revisions.load([pinned, requested]);
  const key = JSON.stringify([ref, subject.runtime, subject.syncToken, subject.pinnedRevisionName, subject.lastRuntimeSyncToken]);
  let decision = inputs.decisions.get(key);
  if (!decision) {
    decision = decidePin({ isvc: subject, live: toLiveRuntime(live.resolution), lookupRevision: inputs.revisions.lookup, omeNamespace: deps.omeNamespace });
    inputs.decisions.set(key, decision);
  }
  if (decision.outcome === 'error') return { kind: 'error' };
  const resumes = deps.config.renderWorkloads && isPausedByDrift(isvc.status) && !decision.pausesUpdates;
  if (changesPin(isvc.status, decision) || resumes) return { kind: 'pin' };
  return { kind: 'status', decision, judgedFrom: new Map(live.reads.map((read) => [runtimeKeyOf(read.key), read])) };
}

function fail(fanOut: FanOut, error: unknown): void {
  fanOut.report.failed += 1;
  if (isRetryable(error)) fanOut.retryableFailure ??= error;
}

async function visit(fanOut: FanOut, isvc: InferenceService): Promise<void> {
  fanOut.report.evaluated += 1;
  await evaluate(fanOut, isvc);
}

async function evaluate(fanOut: FanOut, isvc: InferenceService): Promise<void> {
  try {
    const verdict = await judge(fanOut, isvc);
    if (verdict.kind === 'error') fanOut.report.errors += 1;
    if (verdict.kind === 'pin') await pinOne(fanOut, isvc);
    if (verdict.kind !== 'status') return;
    // Computed once here and written as is on the first attempt: the listed object is what it was made from.
    const status = computeNextStatus(isvc.status, verdict.decision, fanOut.deps.clock.now());
    if (status === undefined) return;
    const outcome = await writeDriftStatus(fanOut, isvc, status, verdict.judgedFrom);
    if (outcome === 'delegate') await pinOne(fanOut, isvc);
    if (typeof outcome === 'object') {
      fanOut.written.push(isvc);
      for (const [id, read] of outcome.judgedFrom) fanOut.judgedFrom.set(id, read);
    }
  } catch (error) {
    fail(fanOut, error);
  }
}

async function pinOne(fanOut: FanOut, isvc: InferenceService): Promise<void> {
  fanOut.report.pinned += 1;
  await pinInferenceService(fanOut.deps, { namespace: isvc.metadata.namespace ?? '', name: isvc.metadata.name, uid: isvc.metadata.uid ?? '' });
}

/**
 * Writes the new condition with the listed resourceVersion, and takes no lease: the
 * condition is the only thing written, so the object's resourceVersion fences it against
 * every other writer of the object (pin, another fan-out), and `fenceWrites` against a
 * change of what it was judged from. After a conflict the object is read again and judged
 * again; if it now needs more than a condition, the pin use-case takes over.
 */
async function writeDriftStatus(
  fanOut: FanOut,
  listed: InferenceService,
  listedStatus: InferenceServiceStatus,
  listedJudgedFrom: JudgedFrom,
): Promise<{ judgedFrom: JudgedFrom } | 'unchanged' | 'delegate'> {
  const { deps } = fanOut;
  const key = `${Resources.inferenceServices.kind} ${keyOf(listed)}`;
  return retryConflicts(reconcileDepsOf(deps), key, async (attempt) => {
    let isvc: InferenceService | undefined = listed;
    let status: InferenceServiceStatus | undefined = listedStatus;
    let judgedFrom = listedJudgedFrom;
    if (attempt > 1) {
      isvc = await reread(fanOut, listed);
      if (!isvc) return 'unchanged';
      const verdict = await judge(fanOut, isvc);
      if (verdict.kind === 'pin') return 'delegate';
      if (verdict.kind !== 'status') return 'unchanged';
      status = computeNextStatus(isvc.status, verdict.decision, deps.clock.now());
      if (status === undefined) return 'unchanged';
      judgedFrom = verdict.judgedFrom;
    }
    const written = await deps.client.replaceStatus<InferenceService>(Resources.inferenceServices, { ...isvc, status }, { fieldManager: FIELD_MANAGER });
    fanOut.report.statusWrites += 1;
    deps.transitions?.committed(isvc, written);
    return { judgedFrom };
  });
}

/**
 * The fence on the conditions written since the last one. A condition is judged from
 * runtimes read before the write; if one of them changed in between, the
 * fan-out that change starts may have judged the object before this write landed, found
 * nothing to do, and left this stale condition in place. So, after the writes, every
 * runtime they were judged from is read again: all as they were means any
 * later change's fan-out reads the object after these writes; one changed means the
 * inputs are read afresh and the written objects judged again, until a pass finds its
 * inputs still as read (at most MAX_FENCE_PASSES, then the hint is delivered again).
 */
async function fenceWrites(fanOut: FanOut): Promise<void> {
  for (let pass = 1; fanOut.written.length > 0; pass += 1) {
    const { written, judgedFrom } = fanOut;
    fanOut.written = [];
    fanOut.judgedFrom = nothingJudged();
    if (await stillAsJudged(fanOut, judgedFrom)) return;
    if (pass > MAX_FENCE_PASSES) {
      fanOut.report.failed += written.length;
      fanOut.retryableFailure ??= new DriftInputsMovingError(pass - 1);
      return;
    }
    fanOut.report.rejudged += written.length;
    fanOut.inputs = await fanOut.reload();
    await forEachBounded(written, fanOut.deps.concurrency ?? DEFAULT_CONCURRENCY, async (listed) => {
      try {
        const isvc = await reread(fanOut, listed);
        if (isvc !== undefined) await evaluate(fanOut, isvc);
      } catch (error) {
        fail(fanOut, error);
      }
    });
  }
}

/** Reads every runtime in `judgedFrom` again, at once; true when all are as they were. */
async function stillAsJudged(fanOut: FanOut, judgedFrom: JudgedFrom): Promise<boolean> {
  const checks = [...judgedFrom.values()].map((read) => runtimeStillAsRead(fanOut.deps.client, read));
  return (await Promise.all(checks)).every(Boolean);
}

async function reread(fanOut: FanOut, listed: InferenceService): Promise<InferenceService | undefined> {
  try {
    const isvc = await fanOut.deps.client.get<InferenceService>(Resources.inferenceServices, listed.metadata.namespace, listed.metadata.name);
    return isvc.metadata.uid === listed.metadata.uid && fanOut.inputs.uses(isvc) ? isvc : undefined;
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}
