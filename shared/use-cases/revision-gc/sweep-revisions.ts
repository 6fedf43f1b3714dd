/**
 * One cluster's revision GC sweep: list OME's revisions and every InferenceService's
 * references, plan with upstream's rules (shared/domain/runtime/gc.ts), then mark, unmark and
 * delete.
 *
 * References are listed first (the decisions need them), the revisions second. Safety
 * against a concurrent pin or rollback rests on two guards:
 * - every write carries the resourceVersion the sweep listed (a merge patch with
 *   `metadata.resourceVersion`, a delete with uid and resourceVersion preconditions).
 *   The pin use-case removes `ome.io/gc-eligible-since` before it pins a revision, so a
 *   delete planned before that unmark fails with 409 and is skipped;
 * - just before each batch of marks and deletes the sweep lists the references again, so
 *   a rollback that set `spec.runtime.revision` after the first listing keeps its revision
 *   even when the pin has not run yet, and a revision the pin unmarked and named is not
 *   marked again.
 * A 409 or 404 is never retried within the sweep: the next sweep decides again from a
 * fresh listing.
 *
 * Time: with `hasTime`, the sweep stops launching writes once the invocation's budget is
 * spent and says so (`cutShort`, with the last revision written). The next sweep plans
 * again at the same plan time from fresh listings, where what was written shows (a marked
 * revision waits, a deleted one is gone, an unmarked one is kept), so nothing is written
 * twice and a sweep of any size spans invocations (sweep-clusters.ts keeps the plan time
 * in the table).
 *
 * Memory: a runtime's N newest are only known once all its revisions are listed, and a
 * list of one namespace orders revisions by name, not by runtime. But a revision that
 * falls outside its runtime's N newest while the listing runs can never come back, so it
 * is decided and written with its page (NewestRevisions); the N newest are kept at the
 * end. The sweep holds one page plus N records per runtime, never one record per
 * revision; revision data is never held beyond its page. What it deleted is tallied per
 * runtime for the `RevisionCollected` notifications: a count and at most ten names each.
 */
import { forEachBounded } from '../for-each-bounded';
import { ConflictError, NotFoundError } from '../../domain/errors';
import type { ClusterClient, KubeObject } from '../../ports/cluster';
import { Resources } from '../../domain/model/resources';
import { decideRevision, NewestRevisions, type RevisionMeta } from '../../domain/runtime/gc';
import { CollectedRevisionTally, type CollectedRevisions } from '../../domain/notification';
import { Annotation, CREATED_BY_OME, FIELD_MANAGER, Label } from '../../domain/vocabulary';

export const DEFAULT_GC_PAGE_SIZE = 500;
export const DEFAULT_GC_WRITE_CONCURRENCY = 8;
/** Deletes at most between two fresh listings of the references. */
export const DEFAULT_GC_RECHECK_BATCH = 100;

export interface RevisionGcSweepOptions {
  /** OME's namespace in the cluster, where revisions live. */
  omeNamespace: string;
  /** Newest revisions kept per runtime besides the referenced ones. */
  retention: number;
  /** How long a revision stays marked before it is deleted. */
  graceMs: number;
  /** Epoch milliseconds: the sweep's clock for marks and the grace period. */
  now: number;
  /** Plan only: report what would be marked, unmarked and deleted, and write nothing. */
  dryRun?: boolean;
  /** `limit` of each list request (default 500). */
  pageSize?: number;
  /** Writes in flight at once (default 8). */
  writeConcurrency?: number;
  /** Deletes between two fresh listings of the references (default 100). */
  recheckBatch?: number;
  /** False once the invocation's budget is spent: no further write is launched. */
  hasTime?: () => boolean;
  /** A dry run returns the planned names (default true); false keeps its memory as flat as a sweep's. */
  keepPlanned?: boolean;
}

export interface RevisionGcStats {
  /** Revisions created by OME that the sweep listed. */
  scanned: number;
  /** Kept: referenced or among the newest (includes those unmarked). */
  kept: number;
  /** Newly marked with `ome.io/gc-eligible-since` (in a dry run: would be). */
  marked: number;
  /** Kept again, mark removed (in a dry run: would be). */
  unmarked: number;
  /** Marked, still inside the grace period. */
  waiting: number;
  /** Deleted (in a dry run: would be). */
  deleted: number;
  /** Mark or delete candidates a fresh listing of the references found referenced: kept, left to the next sweep. */
  keptOnRecheck: number;
  /** Writes that lost a race (409, or the revision was already gone): the next sweep decides again. */
  skippedConflicts: number;
  /** Writes that failed for another reason (throttling, outages); the next sweep retries. */
  failed: number;
}

export interface RevisionGcSweepResult {
  dryRun: boolean;
  stats: RevisionGcStats;
  /** Names per planned action, in name order; a dry run's only (unless `keepPlanned` is false), so a real sweep's memory stays flat. */
  planned?: { mark: string[]; unmark: string[]; delete: string[] };
  /**
   * The most revision records the sweep held at once: each runtime's newest (at most
   * `retention` each) plus the page in hand. Bounded by page size + retention x runtimes,
   * whatever the number of revisions.
   */
  peakHeldRevisions: number;
  /** The first failed write's message, when `stats.failed` > 0. */
  firstError?: string;
  /** Set when the budget ran out: the last revision written (for the record; a resumed sweep plans again at the same time). */
  cutShort?: { after: string };
  /** What this sweep's own deletes removed, per runtime (a real sweep that deleted any): its `RevisionCollected` notifications. */
  collected?: CollectedRevisions[];
}

/** What a write needs beyond the plan: the preconditions as listed. */
interface Precondition {
  uid: string;
  resourceVersion: string;
}

function emptyStats(): RevisionGcStats {
  return { scanned: 0, kept: 0, marked: 0, unmarked: 0, waiting: 0, deleted: 0, keptOnRecheck: 0, skippedConflicts: 0, failed: 0 };
}

/** Copies the few labels and the one annotation the plan reads; drops data and everything else. */
function toRevisionMeta(object: KubeObject): RevisionMeta {
  const labels = object.metadata.labels ?? {};
  const mark = object.metadata.annotations?.[Annotation.gcEligibleSince];
  const meta: RevisionMeta = {
    name: object.metadata.name,
    creationTimestamp: object.metadata.creationTimestamp,
    labels: {
      [Label.runtimeOf]: labels[Label.runtimeOf] ?? '',
      [Label.runtimeOfKind]: labels[Label.runtimeOfKind] ?? '',
      [Label.runtimeOfNamespace]: labels[Label.runtimeOfNamespace] ?? '',
    },
  };
  if (mark !== undefined) meta.annotations = { [Annotation.gcEligibleSince]: mark };
  return meta;
}

/**
 * Lists every InferenceService in every namespace, page by page, and returns the revision
 * names they reference in `spec.runtime.revision` or `status.pinnedRevisionName`.
 */
export async function listReferencedRevisions(client: ClusterClient, pageSize = DEFAULT_GC_PAGE_SIZE): Promise<Set<string>> {
  const names = new Set<string>();
  let token: string | undefined;
  do {
    const page = await client.list(Resources.inferenceServices, { limit: pageSize, ...(token ? { continue: token } : {}) });
    for (const isvc of page.items) {
      const spec = isvc.spec as { runtime?: { revision?: unknown } } | undefined;
      const status = isvc.status as { pinnedRevisionName?: unknown } | undefined;
      const revision = spec?.runtime?.revision;
      const pinned = status?.pinnedRevisionName;
      if (typeof revision === 'string' && revision !== '') names.add(revision);
      if (typeof pinned === 'string' && pinned !== '') names.add(pinned);
    }
    token = page.continue;
  } while (token);
  return names;
}

/** One listed revision: what the plan reads and what a write's preconditions need. */
interface ListedRevision {
  meta: RevisionMeta;
  precondition: Precondition;
}

/**
 * Lists OME-created revisions page by page and hands each page, reduced to what the plan
 * and the preconditions need, to `onPage`; stops early when it returns false.
 */
async function forEachRevisionPage(
  client: ClusterClient,
  options: RevisionGcSweepOptions,
  onPage: (page: ListedRevision[]) => Promise<boolean> | boolean,
): Promise<void> {
  let token: string | undefined;
  do {
    const page = await client.list(Resources.controllerRevisions, {
      namespace: options.omeNamespace,
      limit: options.pageSize ?? DEFAULT_GC_PAGE_SIZE,
      ...(token ? { continue: token } : {}),
    });
    const listed: ListedRevision[] = [];
    for (const item of page.items) {
      // Upstream's scope: revisions carrying created-by ome-controller, whatever their labels.
      if (item.metadata.annotations?.[Annotation.createdBy] !== CREATED_BY_OME) continue;
      listed.push({ meta: toRevisionMeta(item), precondition: { uid: item.metadata.uid ?? '', resourceVersion: item.metadata.resourceVersion ?? '' } });
    }
    if (!(await onPage(listed))) return;
    token = page.continue;
  } while (token);
}

class SweepWriter {
  readonly stats: RevisionGcStats;
  firstError: string | undefined;

  constructor(
    private readonly client: ClusterClient,
    private readonly namespace: string,
    stats: RevisionGcStats,
  ) {
    this.stats = stats;
  }

  /** Runs one write; a lost race or a vanished revision is skipped, other failures are counted. */
  private async attempt(write: () => Promise<unknown>): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (error) {
      if (error instanceof ConflictError || error instanceof NotFoundError) {
        this.stats.skippedConflicts += 1;
      } else {
        this.stats.failed += 1;
        this.firstError ??= error instanceof Error ? error.message : String(error);
      }
      return false;
    }
  }

  /** Sets or removes the mark, as a merge patch preconditioned on the listed resourceVersion. */
  async annotate(name: string, precondition: Precondition, value: string | null): Promise<boolean> {
    const patch = { metadata: { resourceVersion: precondition.resourceVersion, annotations: { [Annotation.gcEligibleSince]: value } } };
    return this.attempt(() =>
      this.client.patch(Resources.controllerRevisions, this.namespace, name, patch, { type: 'merge', fieldManager: FIELD_MANAGER }),
    );
  }

  async delete(name: string, precondition: Precondition): Promise<boolean> {
    return this.attempt(() => this.client.delete(Resources.controllerRevisions, this.namespace, name, { preconditions: precondition }));
  }
}

/** A write one page's decisions call for. */
interface PlannedWrite {
  name: string;
  action: 'unmark' | 'mark' | 'delete';
  precondition: Precondition;
  markValue?: string;
  /** A delete's runtime, as the revision's labels name it, for the tally of what was collected. */
  runtime?: Pick<CollectedRevisions, 'kind' | 'namespace' | 'name'>;
}

function runtimeOf(meta: RevisionMeta): Pick<CollectedRevisions, 'kind' | 'namespace' | 'name'> {
  const labels = meta.labels ?? {};
  return { kind: labels[Label.runtimeOfKind] ?? '', namespace: labels[Label.runtimeOfNamespace] ?? '', name: labels[Label.runtimeOf] ?? '' };
}

/**
 * Sweeps one cluster's revisions. Throws when a list fails (writes already made stand);
 * write failures are counted and reported, never thrown.
 *
 * One listing of the revisions, after one of the references: each page's revisions are
 * offered to NewestRevisions, and every revision that falls outside its runtime's N
 * newest is decided and written with that page. The N newest of each runtime, known once
 * the listing ends, are kept (and unmarked) last. Memory is one page plus `retention`
 * records per runtime, not one record per revision.
 */
export async function sweepRevisions(client: ClusterClient, options: RevisionGcSweepOptions): Promise<RevisionGcSweepResult> {
  const pageSize = options.pageSize ?? DEFAULT_GC_PAGE_SIZE;
  const dryRun = options.dryRun === true;
  const stats = emptyStats();
  const newest = new NewestRevisions<ListedRevision>(options.retention);
  let peakHeldRevisions = 0;
  const referencedNames = await listReferencedRevisions(client, pageSize);
  const gcOptions = { referencedNames, retention: options.retention, graceMs: options.graceMs, now: options.now };

  const planned = dryRun && options.keepPlanned !== false ? { mark: [] as string[], unmark: [] as string[], delete: [] as string[] } : undefined;
  const writer = new SweepWriter(client, options.omeNamespace, stats);
  const collected = new CollectedRevisionTally();
  const concurrency = options.writeConcurrency ?? DEFAULT_GC_WRITE_CONCURRENCY;
  const batch = Math.max(1, options.recheckBatch ?? DEFAULT_GC_RECHECK_BATCH);
  const hasTime = options.hasTime ?? (() => true);
  let lastWritten: string | undefined;
  let cutShort = false;

  const write = async (item: PlannedWrite, fresh: ReadonlySet<string> | undefined): Promise<void> => {
    if (item.action !== 'unmark' && fresh?.has(item.name)) {
      stats.keptOnRecheck += 1;
      return;
    }
    if (item.action === 'delete') {
      if (await writer.delete(item.name, item.precondition)) {
        stats.deleted += 1;
        if (item.runtime) collected.add(item.runtime, item.name);
      }
      return;
    }
    const value = item.action === 'mark' ? (item.markValue ?? null) : null;
    if (await writer.annotate(item.name, item.precondition, value)) stats[item.action === 'mark' ? 'marked' : 'unmarked'] += 1;
  };

  // A rollback or a pin may name a revision after the references were listed (a pin
  // unmarks before it names, so the listing may show unmarked a revision about to be
  // referenced). Before the first mark or delete, and again once `batch` deletes went out
  // since, the references are listed afresh, and a revision found there is left alone.
  let fresh: ReadonlySet<string> | undefined;
  let deletesSinceFresh = 0;

  /** Runs writes in order; false when the budget ran out first. */
  const runWrites = async (writes: readonly PlannedWrite[]): Promise<boolean> => {
    let start = 0;
    while (start < writes.length) {
      if (!hasTime()) return false;
      if ((fresh === undefined || deletesSinceFresh >= batch) && writes.slice(start).some((item) => item.action !== 'unmark')) {
        fresh = await listReferencedRevisions(client, pageSize);
        deletesSinceFresh = 0;
      }
      let end = start;
      while (end < writes.length && (writes[end]?.action !== 'delete' || deletesSinceFresh < batch)) {
        if (writes[end]?.action === 'delete') deletesSinceFresh += 1;
        end += 1;
      }
      const chunk = writes.slice(start, end);
      const seen = fresh;
      const launched = await forEachBounded(chunk, concurrency, (item) => write(item, seen), hasTime);
      lastWritten = chunk[launched - 1]?.name ?? lastWritten;
      if (launched < chunk.length) return false;
      start = end;
    }
    return true;
  };

  /** Decides the listed revisions and writes (or, in a dry run, counts) what they call for; false when out of budget. */
  const settle = async (listed: Iterable<ListedRevision>, among: boolean): Promise<boolean> => {
    const writes: PlannedWrite[] = [];
    for (const { meta, precondition } of listed) {
      const decision = decideRevision(meta, among, gcOptions);
      switch (decision.action) {
        case 'keep':
          stats.kept += 1;
          break;
        case 'wait':
          stats.waiting += 1;
          break;
        case 'unmark':
          stats.kept += 1;
          writes.push({ name: decision.name, action: 'unmark', precondition });
          break;
        case 'mark':
          writes.push({ name: decision.name, action: 'mark', precondition, ...(decision.markValue === undefined ? {} : { markValue: decision.markValue }) });
          break;
        case 'delete':
          writes.push({ name: decision.name, action: 'delete', precondition, runtime: runtimeOf(meta) });
          break;
      }
    }
    writes.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (!dryRun) return runWrites(writes);
    for (const item of writes) {
      stats[item.action === 'mark' ? 'marked' : item.action === 'unmark' ? 'unmarked' : 'deleted'] += 1;
      planned?.[item.action].push(item.name);
    }
    return true;
  };

  await forEachRevisionPage(client, options, async (page) => {
    peakHeldRevisions = Math.max(peakHeldRevisions, newest.size + page.length);
    const outside: ListedRevision[] = [];
    for (const listed of page) {
      stats.scanned += 1;
      const out = newest.offer(listed.meta, listed);
      if (out) outside.push(out);
    }
    cutShort = !(await settle(outside, false));
    // Out of budget: the rest is left to the sweep that resumes.
    return !cutShort;
  });
  if (!cutShort) cutShort = !(await settle(newest.held(), true));

  if (planned) for (const names of Object.values(planned)) names.sort();
  return {
    dryRun,
    stats,
    ...(planned ? { planned } : {}),
    peakHeldRevisions,
    ...(writer.firstError === undefined ? {} : { firstError: writer.firstError }),
    ...(cutShort ? { cutShort: { after: lastWritten ?? '' } } : {}),
    ...(stats.deleted > 0 && !dryRun ? { collected: collected.collected } : {}),
  };
}
