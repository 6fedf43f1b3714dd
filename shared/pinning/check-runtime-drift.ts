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
 */
import { objectLeaseKey, reconcileUnderLease, type ReconcileDeps } from '../app/reconcile';
import { ControlPlaneError, isRetryable, NotFoundError } from '../errors';
import type { InferenceService, InferenceServiceStatus } from '../model/inference-service';
import { Resources } from '../model/resources';
import { decidePin, normalizeRuntimeKind, type LiveRuntimeResolution, type PinDecision } from '../runtime';
import { FIELD_MANAGER, RuntimeKind } from '../vocabulary';
import { pinInferenceService, type PinningDeps } from './pin-inference-service';
import { changesPin, computeNextStatus, isPausedByDrift, toPinningSubject } from './pin-status';
import { RevisionCache } from './revisions';
import { fetchLiveRuntime, listAll, loadRuntimeCatalog, toLiveRuntime, type RuntimeRef } from './runtime-source';

export interface DriftCheckDeps extends PinningDeps {
  /** InferenceServices evaluated at once (default 16). */
  concurrency?: number;
  /** Items per list page (default 500). */
  pageSize?: number;
}

/** What changed, as the hint says it. */
export interface DriftTrigger {
  kind: string;
  namespace?: string;
  name: string;
  change: 'added' | 'modified' | 'deleted' | 'relisted';
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
}

/** Some InferenceServices could not be brought up to date; the fan-out is delivered again. */
export class DriftFanOutIncompleteError extends ControlPlaneError {
  constructor(failed: number, cause: unknown) {
    super(`drift check: ${failed} InferenceService(s) could not be updated; retrying`, { retryable: true, cause });
    this.name = 'DriftFanOutIncompleteError';
  }
}

const DEFAULT_CONCURRENCY = 16;
const DEFAULT_PAGE_SIZE = 500;

interface FanOut {
  deps: DriftCheckDeps;
  resolve: (ref: RuntimeRef) => Promise<LiveRuntimeResolution>;
  revisions: RevisionCache;
  /** Does this InferenceService belong to the fan-out? */
  uses: (isvc: InferenceService) => boolean;
  report: DriftCheckReport;
  retryableFailure?: unknown;
  /**
   * Decisions by everything `decidePin` reads but the InferenceService's name (which it
   * does not read): thousands of objects pinned alike share a few decisions, so the
   * revision hashes behind them are computed a few times, not once per object.
   */
  decisions: Map<string, PinDecision>;
}

/** Fans a runtime change or a revision delete out to the InferenceServices it affects. */
export async function checkRuntimeDrift(deps: DriftCheckDeps, trigger: DriftTrigger): Promise<DriftCheckReport> {
  const report: DriftCheckReport = { scope: 'ignored', scanned: 0, evaluated: 0, statusWrites: 0, pinned: 0, errors: 0, failed: 0 };
  const pageSize = deps.pageSize ?? DEFAULT_PAGE_SIZE;
  let fanOut: FanOut;
  let namespace: string | undefined;
  if (trigger.kind === RuntimeKind.cluster || trigger.kind === RuntimeKind.namespaced) {
    const kind = trigger.kind === RuntimeKind.namespaced ? RuntimeKind.namespaced : RuntimeKind.cluster;
    const changed = { kind, name: trigger.name, ...(kind === RuntimeKind.namespaced ? { namespace: trigger.namespace ?? '' } : {}) };
    const catalog = await loadRuntimeCatalog(deps.client, changed, pageSize);
    const names = catalog.affectedNames(changed);
    const revisions = new RevisionCache(deps.client, deps.omeNamespace);
    await revisions.prefetchRuntimes(names, pageSize);
    report.scope = 'runtime';
    namespace = kind === RuntimeKind.namespaced ? changed.namespace : undefined;
    fanOut = { deps, report, decisions: new Map(), revisions, resolve: async (ref) => catalog.resolve(ref), uses: (isvc) => names.has(isvc.spec?.runtime?.name ?? '') };
  } else if (trigger.kind === 'ControllerRevision' && trigger.change === 'deleted') {
    const resolved = new Map<string, Promise<LiveRuntimeResolution>>();
    report.scope = 'revision';
    fanOut = {
      deps,
      report,
      decisions: new Map(),
      revisions: new RevisionCache(deps.client, deps.omeNamespace),
      resolve: (ref) => {
        // Few InferenceServices name one revision: resolve each runtime once, on demand.
        const id = `${ref.kind}/${ref.namespace}/${ref.name}`;
        if (!resolved.has(id)) resolved.set(id, fetchLiveRuntime(deps.client, ref));
        return resolved.get(id) as Promise<LiveRuntimeResolution>;
      },
      uses: (isvc) => isvc.status?.pinnedRevisionName === trigger.name || isvc.spec?.runtime?.revision === trigger.name,
    };
  } else {
    // InferenceService changes are the pin function's; other kinds carry no drift.
    return report;
  }

  for await (const page of listAll<InferenceService>(deps.client, Resources.inferenceServices, { ...(namespace === undefined ? {} : { namespace }), pageSize })) {
    report.scanned += page.length;
    await forEachBounded(page.filter(fanOut.uses), deps.concurrency ?? DEFAULT_CONCURRENCY, (isvc) => visit(fanOut, isvc));
  }
  if (fanOut.retryableFailure !== undefined) throw new DriftFanOutIncompleteError(report.failed, fanOut.retryableFailure);
  return report;
}

async function forEachBounded<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next] as T;
      next += 1;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

type Verdict = { kind: 'none' } | { kind: 'error' } | { kind: 'pin' } | { kind: 'status'; decision: PinDecision };

async function judge(fanOut: FanOut, isvc: InferenceService): Promise<Verdict> {
  const { deps } = fanOut;
  const runtime = isvc.spec?.runtime;
  const ref: RuntimeRef = { kind: normalizeRuntimeKind(runtime?.kind), name: runtime?.name ?? '', namespace: isvc.metadata.namespace ?? '' };
  if (ref.name === '') return { kind: 'none' };
  // Following the live runtime: its workload is rendered from the new spec.
  if (runtime?.autoSync !== false) return deps.config.renderWorkloads ? { kind: 'pin' } : { kind: 'none' };
  const subject = toPinningSubject(isvc);
  const live = await fanOut.resolve(ref);
  // Known after the first object pinned alike (or the prefetch): no promise, no read.
  const pinned = subject.pinnedRevisionName ?? '';
  const requested = runtime.revision ?? '';
  if ((pinned !== '' && !fanOut.revisions.has(pinned)) || (requested !== '' && !fanOut.revisions.has(requested))) await fanOut.revisions.load([pinned, requested]);
  const key = JSON.stringify([ref, subject.runtime, subject.syncToken, subject.pinnedRevisionName, subject.lastRuntimeSyncToken]);
  let decision = fanOut.decisions.get(key);
  if (!decision) {
    decision = decidePin({ isvc: subject, live: toLiveRuntime(live), lookupRevision: fanOut.revisions.lookup, omeNamespace: deps.omeNamespace });
    fanOut.decisions.set(key, decision);
  }
  if (decision.outcome === 'error') return { kind: 'error' };
  const resumes = deps.config.renderWorkloads && isPausedByDrift(isvc.status) && !decision.pausesUpdates;
  if (changesPin(isvc.status, decision) || resumes) return { kind: 'pin' };
  return { kind: 'status', decision };
}

async function visit(fanOut: FanOut, isvc: InferenceService): Promise<void> {
  const { report } = fanOut;
  report.evaluated += 1;
  try {
    const verdict = await judge(fanOut, isvc);
    if (verdict.kind === 'error') report.errors += 1;
    if (verdict.kind === 'pin') await pinOne(fanOut, isvc);
    if (verdict.kind !== 'status') return;
    // Computed once here and written as is on the first attempt: the listed object is what it was made from.
    const status = computeNextStatus(isvc.status, verdict.decision, fanOut.deps.clock.now());
    if (status === undefined) return;
    if ((await writeDriftStatus(fanOut, isvc, status)) === 'delegate') await pinOne(fanOut, isvc);
  } catch (error) {
    report.failed += 1;
    if (isRetryable(error)) fanOut.retryableFailure ??= error;
  }
}

async function pinOne(fanOut: FanOut, isvc: InferenceService): Promise<void> {
  fanOut.report.pinned += 1;
  await pinInferenceService(fanOut.deps, { namespace: isvc.metadata.namespace ?? '', name: isvc.metadata.name, uid: isvc.metadata.uid ?? '' });
}

/**
 * Writes the new condition under the object's lease with the listed resourceVersion.
 * After a conflict the object is read again and judged again; if it now needs more than
 * a condition, the pin use-case takes over once the lease is released.
 */
async function writeDriftStatus(fanOut: FanOut, listed: InferenceService, listedStatus: InferenceServiceStatus): Promise<'written' | 'unchanged' | 'delegate'> {
  const { deps } = fanOut;
  const reconcileDeps: ReconcileDeps = {
    leases: deps.leases,
    clock: deps.clock,
    holder: deps.holder,
    leaseTtlMs: deps.config.leaseTtlMs,
    maxConflictRetries: deps.config.maxConflictRetries,
    ...(deps.leaseWaitMs === undefined ? {} : { leaseWaitMs: deps.leaseWaitMs }),
    ...(deps.sleep === undefined ? {} : { sleep: deps.sleep }),
  };
  const key = objectLeaseKey(deps.clusterId, Resources.inferenceServices.kind, listed.metadata.namespace, listed.metadata.name);
  return reconcileUnderLease(reconcileDeps, key, async ({ attempt }) => {
    let isvc: InferenceService | undefined = listed;
    let status: InferenceServiceStatus | undefined = listedStatus;
    if (attempt > 1) {
      isvc = await reread(fanOut, listed);
      if (!isvc) return 'unchanged';
      const verdict = await judge(fanOut, isvc);
      if (verdict.kind === 'pin') return 'delegate';
      if (verdict.kind !== 'status') return 'unchanged';
      status = computeNextStatus(isvc.status, verdict.decision, deps.clock.now());
      if (status === undefined) return 'unchanged';
    }
    await deps.client.replaceStatus(Resources.inferenceServices, { ...isvc, status }, { fieldManager: FIELD_MANAGER });
    fanOut.report.statusWrites += 1;
    return 'written';
  });
}

async function reread(fanOut: FanOut, listed: InferenceService): Promise<InferenceService | undefined> {
  try {
    const isvc = await fanOut.deps.client.get<InferenceService>(Resources.inferenceServices, listed.metadata.namespace, listed.metadata.name);
    return isvc.metadata.uid === listed.metadata.uid && fanOut.uses(isvc) ? isvc : undefined;
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}
