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
 * - just before each batch of deletes the sweep lists the references again, so a
 *   rollback that set `spec.runtime.revision` after the first listing keeps its revision
 *   even when the pin has not run yet.
 * A 409 or 404 is never retried within the sweep: the next sweep decides again from a
 * fresh listing.
 *
 * Time: with `hasTime`, the sweep stops launching writes once the invocation's budget is
 * spent and returns where it stopped (`cutShort`); the next sweep plans again from a fresh
 * listing at the same plan time and skips what lies before that place, so a sweep of any
 * size spans invocations (sweep-clusters.ts keeps the place in the table).
 *
 * Memory: revisions are listed page by page and reduced to the few fields the plan and
 * the preconditions need; their data is never held beyond one page.
 */
import { forEachBounded } from '../app/bounded';
import { ConflictError, NotFoundError } from '../errors';
import type { ClusterClient, KubeObject } from '../ports/cluster';
import { Resources } from '../model/resources';
import { RevisionGcPlanner, type GcDecision, type RevisionMeta } from '../runtime/gc';
import { Annotation, CREATED_BY_OME, FIELD_MANAGER, Label } from '../vocabulary';

export const DEFAULT_GC_PAGE_SIZE = 500;
export const DEFAULT_GC_WRITE_CONCURRENCY = 8;
/** Deletes between two fresh listings of the references. */
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
}

/** The write phases in the order a sweep runs them. */
const PHASES = ['unmark', 'mark', 'delete'] as const;
type Phase = (typeof PHASES)[number];

/** A place in a sweep's writes: the phase's position, then the revision name. */
export function sweepPlace(phase: Phase, name: string): string {
  return `${PHASES.indexOf(phase)}/${name}`;
}

/** Whether the write of `name` in `phase` lies after `place`. */
function isAfter(place: string | undefined, phase: Phase, name: string): boolean {
  if (place === undefined) return true;
  const slash = place.indexOf('/');
  const placePhase = Number(place.slice(0, slash));
  const index = PHASES.indexOf(phase);
  return index > placePhase || (index === placePhase && name > place.slice(slash + 1));
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
  /** Delete candidates a fresh listing found referenced: kept, unmarked by the next sweep. */
  keptOnRecheck: number;
  /** Writes that lost a race (409, or the revision was already gone): the next sweep decides again. */
  skippedConflicts: number;
  /** Writes that failed for another reason (throttling, outages); the next sweep retries. */
  failed: number;
}

export interface RevisionGcSweepResult {
  dryRun: boolean;
  stats: RevisionGcStats;
  /** Names per planned action; filled in a dry run only, so a real sweep's memory stays flat. */
  planned?: { mark: string[]; unmark: string[]; delete: string[] };
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

/** Lists OME-created revisions page by page into the planner; returns each one's preconditions. */
async function listRevisions(
  client: ClusterClient,
  options: RevisionGcSweepOptions,
  planner: RevisionGcPlanner,
): Promise<Map<string, Precondition>> {
  const preconditions = new Map<string, Precondition>();
  let token: string | undefined;
  do {
    const page = await client.list(Resources.controllerRevisions, {
      namespace: options.omeNamespace,
      limit: options.pageSize ?? DEFAULT_GC_PAGE_SIZE,
      ...(token ? { continue: token } : {}),
    });
    const metas: RevisionMeta[] = [];
    for (const item of page.items) {
      // Upstream's scope: revisions carrying created-by ome-controller, whatever their labels.
      if (item.metadata.annotations?.[Annotation.createdBy] !== CREATED_BY_OME) continue;
      metas.push(toRevisionMeta(item));
      preconditions.set(item.metadata.name, { uid: item.metadata.uid ?? '', resourceVersion: item.metadata.resourceVersion ?? '' });
    }
    planner.addPage(metas);
    token = page.continue;
  } while (token);
  return preconditions;
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

/**
 * Sweeps one cluster's revisions. Throws when a list fails (nothing is written then);
 * write failures are counted and reported, never thrown.
 */
export async function sweepRevisions(client: ClusterClient, options: RevisionGcSweepOptions): Promise<RevisionGcSweepResult> {
  const pageSize = options.pageSize ?? DEFAULT_GC_PAGE_SIZE;
  const dryRun = options.dryRun === true;
  const stats = emptyStats();

  // Revisions first, references second: a pin that unmarks a revision between the two
  // listings is then seen as a reference, not re-marked as an unreferenced revision.
  const planner = new RevisionGcPlanner();
  const preconditions = await listRevisions(client, options, planner);
  const referencedNames = await listReferencedRevisions(client, pageSize);
  stats.scanned = preconditions.size;

  const planned = { mark: [] as string[], unmark: [] as string[], delete: [] as string[] };
  const marks: GcDecision[] = [];
  for (const decision of planner.plan({ referencedNames, retention: options.retention, graceMs: options.graceMs, now: options.now })) {
    switch (decision.action) {
      case 'keep':
        stats.kept += 1;
        break;
      case 'unmark':
        stats.kept += 1;
        planned.unmark.push(decision.name);
        break;
      case 'mark':
        marks.push(decision);
        planned.mark.push(decision.name);
        break;
      case 'wait':
        stats.waiting += 1;
        break;
      case 'delete':
        planned.delete.push(decision.name);
        break;
    }
  }

  if (dryRun) {
    stats.marked = planned.mark.length;
    stats.unmarked = planned.unmark.length;
    stats.deleted = planned.delete.length;
    return { dryRun, stats, planned };
  }

  const writer = new SweepWriter(client, options.omeNamespace, stats);
  const concurrency = options.writeConcurrency ?? DEFAULT_GC_WRITE_CONCURRENCY;
  const preconditionOf = (name: string): Precondition => preconditions.get(name) as Precondition;
  const hasTime = options.hasTime ?? (() => true);
  const markValues = new Map(marks.map((decision) => [decision.name, decision.markValue ?? null]));
  let place = options.after;
  const finish = (cutShort: boolean): RevisionGcSweepResult => ({
    dryRun,
    stats,
    ...(writer.firstError === undefined ? {} : { firstError: writer.firstError }),
    ...(cutShort && place !== undefined ? { cutShort: { after: place } } : {}),
  });
  /** Runs one phase's writes past the place, in name order; false when the budget ran out first. */
  const runPhase = async (phase: Phase, names: readonly string[], write: (name: string) => Promise<void>): Promise<boolean> => {
    const todo = names.filter((name) => isAfter(place, phase, name)).sort();
    const launched = await forEachBounded(todo, concurrency, write, hasTime);
    const last = todo[launched - 1];
    if (last !== undefined) place = sweepPlace(phase, last);
    return launched === todo.length;
  };

  const unmarked = await runPhase('unmark', planned.unmark, async (name) => {
    if (await writer.annotate(name, preconditionOf(name), null)) stats.unmarked += 1;
  });
  if (!unmarked) return finish(true);
  const marked = await runPhase('mark', [...markValues.keys()], async (name) => {
    if (await writer.annotate(name, preconditionOf(name), markValues.get(name) ?? null)) stats.marked += 1;
  });
  if (!marked) return finish(true);

  const deletes = planned.delete.filter((name) => isAfter(place, 'delete', name)).sort();
  const batch = Math.max(1, options.recheckBatch ?? DEFAULT_GC_RECHECK_BATCH);
  for (let start = 0; start < deletes.length; start += batch) {
    if (!hasTime()) return finish(true);
    // A rollback may have named one of these since the first listing: look again.
    const fresh = await listReferencedRevisions(client, pageSize);
    const chunk = deletes.slice(start, start + batch);
    const done = await runPhase('delete', chunk, async (name) => {
      if (fresh.has(name)) {
        stats.keptOnRecheck += 1;
        return;
      }
      if (await writer.delete(name, preconditionOf(name))) stats.deleted += 1;
    });
    if (!done) return finish(true);
  }

  return finish(false);
}
