/**
 * One cluster's revision GC sweep: list OME's revisions and every InferenceService's
 * references, plan with upstream's rules (shared/runtime/gc.ts), then mark, unmark and
 * delete.
 *
 * Safety against a concurrent pin or rollback rests on two guards:
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
 * spent and returns where it stopped (`cutShort`: the last revision name written, in name
 * order); the next sweep plans again from fresh listings at the same plan time and skips
 * the names up to that place, so a sweep of any size spans invocations (sweep-clusters.ts
 * keeps the place in the table).
 *
 * Memory: each runtime's N newest are only known after a whole listing (a list of one
 * namespace orders revisions by name, not by runtime), so the sweep lists twice: the first
 * listing keeps N small records per runtime, the second decides and writes page by page.
 * It holds one page plus N records per runtime, never one record per revision; revision
 * data is never held beyond its page.
 */
import { forEachBounded } from '../app/bounded';
import { ConflictError, NotFoundError } from '../errors';
import type { ClusterClient, KubeObject } from '../ports/cluster';
import { Resources } from '../model/resources';
import { decideRevision, NewestRevisions, type RevisionMeta } from '../runtime/gc';
import { Annotation, CREATED_BY_OME, FIELD_MANAGER, Label } from '../vocabulary';

export const DEFAULT_GC_PAGE_SIZE = 500;
export const DEFAULT_GC_WRITE_CONCURRENCY = 8;
/** Deletes at most between two fresh listings of the references (one per page's writes at least). */
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
  /** Writes up to and including this place (`sweepPlace`) were done by an earlier invocation of the sweep. */
  after?: string;
  /** False once the invocation's budget is spent: no further write is launched. */
  hasTime?: () => boolean;
  /** A dry run returns the planned names (default true); false keeps its memory as flat as a sweep's. */
  keepPlanned?: boolean;
}

/** A place in a sweep's writes: every write for a revision named up to `place` is done. */
function isAfter(place: string | undefined, name: string): boolean {
  return place === undefined || name > place;
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
  /** Set when the budget ran out: the place of the last write launched, to resume after. */
  cutShort?: { after: string };
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
    // The API server lists by name; sorted here too so that the place a sweep saves holds whatever the server.
    listed.sort((a, b) => (a.meta.name < b.meta.name ? -1 : a.meta.name > b.meta.name ? 1 : 0));
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
}

/**
 * Sweeps one cluster's revisions. Throws when a list fails (writes already made stand);
 * write failures are counted and reported, never thrown.
 *
 * Two listings: the first finds each runtime's newest revisions (NewestRevisions), then
 * the references are listed, then the second decides and writes page by page. Memory is
 * one page plus `retention` records per runtime, not one record per revision.
 */
export async function sweepRevisions(client: ClusterClient, options: RevisionGcSweepOptions): Promise<RevisionGcSweepResult> {
  const pageSize = options.pageSize ?? DEFAULT_GC_PAGE_SIZE;
  const dryRun = options.dryRun === true;
  const stats = emptyStats();
  const newest = new NewestRevisions(options.retention);
  let peakHeldRevisions = 0;
  const hold = (page: readonly ListedRevision[]): void => {
    peakHeldRevisions = Math.max(peakHeldRevisions, newest.held + page.length);
  };

  await forEachRevisionPage(client, options, (page) => {
    hold(page);
    for (const { meta } of page) newest.add(meta);
    return true;
  });
  const referencedNames = await listReferencedRevisions(client, pageSize);
  const gcOptions = { referencedNames, retention: options.retention, graceMs: options.graceMs, now: options.now };

  const planned = dryRun && options.keepPlanned !== false ? { mark: [] as string[], unmark: [] as string[], delete: [] as string[] } : undefined;
  const writer = new SweepWriter(client, options.omeNamespace, stats);
  const concurrency = options.writeConcurrency ?? DEFAULT_GC_WRITE_CONCURRENCY;
  const batch = Math.max(1, options.recheckBatch ?? DEFAULT_GC_RECHECK_BATCH);
  const hasTime = options.hasTime ?? (() => true);
  let place = options.after;
  let cutShort = false;

  const write = async (planned: PlannedWrite, fresh: ReadonlySet<string> | undefined): Promise<void> => {
    if (planned.action !== 'unmark' && fresh?.has(planned.name)) {
      stats.keptOnRecheck += 1;
      return;
    }
    if (planned.action === 'delete') {
      if (await writer.delete(planned.name, planned.precondition)) stats.deleted += 1;
      return;
    }
    const value = planned.action === 'mark' ? (planned.markValue ?? null) : null;
    if (await writer.annotate(planned.name, planned.precondition, value)) stats[planned.action === 'mark' ? 'marked' : 'unmarked'] += 1;
  };

  /** Runs one page's writes in name order; false when the budget ran out first. */
  const runWrites = async (writes: readonly PlannedWrite[]): Promise<boolean> => {
    let start = 0;
    while (start < writes.length) {
      // A chunk holds at most `batch` deletes. A rollback or a pin may have named one of its
      // revisions since the references were listed (a pin unmarks before it names, so the
      // second listing may show a revision unmarked that is about to be referenced): before
      // a chunk that marks or deletes, the references are listed again.
      let end = start;
      let deletes = 0;
      while (end < writes.length && (writes[end]?.action !== 'delete' || deletes < batch)) {
        if (writes[end]?.action === 'delete') deletes += 1;
        end += 1;
      }
      const chunk = writes.slice(start, end);
      if (!hasTime()) return false;
      const fresh = chunk.some((item) => item.action !== 'unmark') ? await listReferencedRevisions(client, pageSize) : undefined;
      const launched = await forEachBounded(chunk, concurrency, (item) => write(item, fresh), hasTime);
      const last = chunk[launched - 1];
      if (last !== undefined) place = last.name;
      if (launched < chunk.length) return false;
      start = end;
    }
    return true;
  };

  await forEachRevisionPage(client, options, async (page) => {
    hold(page);
    const writes: PlannedWrite[] = [];
    for (const { meta, precondition } of page) {
      stats.scanned += 1;
      const decision = decideRevision(meta, newest, gcOptions);
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
          writes.push({ name: decision.name, action: 'delete', precondition });
          break;
      }
    }
    if (dryRun) {
      for (const item of writes) {
        stats[item.action === 'mark' ? 'marked' : item.action === 'unmark' ? 'unmarked' : 'deleted'] += 1;
        planned?.[item.action].push(item.name);
      }
      return true;
    }
    cutShort = !(await runWrites(writes.filter((item) => isAfter(place, item.name))));
    // Out of budget: the rest of the listing is left to the sweep that resumes.
    return !cutShort;
  });

  return {
    dryRun,
    stats,
    ...(planned ? { planned } : {}),
    peakHeldRevisions,
    ...(writer.firstError === undefined ? {} : { firstError: writer.firstError }),
    ...(cutShort && place !== undefined ? { cutShort: { after: place } } : {}),
  };
}
