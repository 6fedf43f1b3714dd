import { Annotation, Label } from '../vocabulary';

/**
 * The revision garbage-collection plan. Upstream's rules: per runtime, keep the N newest
 * revisions (default 10) and every revision an InferenceService names in
 * `spec.runtime.revision` or `status.pinnedRevisionName`; mark the rest with
 * `ome.io/gc-eligible-since`, delete them once the mark is older than the grace period
 * (default 24h), and unmark any that becomes kept again.
 *
 * Grouping: we key on the runtime's kind, namespace and name (labels runtime-of-kind,
 * runtime-of-namespace, runtime-of). Upstream keys on the name alone, so a namespaced
 * runtime's busy history can push a same-named runtime's revisions in another namespace
 * out of the N newest. Ours gives each runtime its own N.
 *
 * Memory: the plan needs only metadata (name, creationTimestamp, labels, the one
 * annotation). Callers sweeping 100,000 revisions list metadata only, page by page, and
 * feed pages to {@link RevisionGcPlanner}; it holds one small record per revision (not
 * the revision's data), then emits decisions group by group.
 */

export const DEFAULT_REVISION_RETENTION = 10;
export const DEFAULT_REVISION_GRACE_MS = 24 * 60 * 60 * 1000;

/** The metadata of a revision that the plan reads. */
export interface RevisionMeta {
  name: string;
  creationTimestamp?: string | undefined;
  labels?: Record<string, string> | undefined;
  annotations?: Record<string, string> | undefined;
}

export type GcAction = 'keep' | 'unmark' | 'mark' | 'wait' | 'delete';

export interface GcDecision {
  name: string;
  /** `unmark` is a keep that must also remove `ome.io/gc-eligible-since`. */
  action: GcAction;
  /** For `mark`: the value to write. */
  markValue?: string;
  /** The grouping key, for reports. */
  group: string;
}

export interface GcOptions {
  /** Names in any ISVC's `spec.runtime.revision` or `status.pinnedRevisionName`. */
  referencedNames: ReadonlySet<string>;
  retention?: number;
  graceMs?: number;
  /** Epoch milliseconds. */
  now: number;
}

/** Formats an instant as RFC 3339 in UTC without fractional seconds, as Go's time.RFC3339 prints. */
export function formatGcMark(epochMs: number): string {
  return new Date(Math.floor(epochMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function parseMark(value: string): number | undefined {
  if (!RFC3339.test(value)) return undefined;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? undefined : parsed;
}

/** The key revisions are grouped by: kind, namespace ("" for a cluster runtime) and name. */
export function computeGcGroupKey(revision: RevisionMeta): string {
  const labels = revision.labels ?? {};
  return [labels[Label.runtimeOfKind] ?? '', labels[Label.runtimeOfNamespace] ?? '', labels[Label.runtimeOf] ?? ''].join('/');
}

interface Entry {
  name: string;
  created: number;
  mark: string | undefined;
}

function decideGroup(group: string, entries: Entry[], options: GcOptions): GcDecision[] {
  const retention = options.retention ?? DEFAULT_REVISION_RETENTION;
  const graceMs = options.graceMs ?? DEFAULT_REVISION_GRACE_MS;
  // Newest first; equal timestamps (second resolution) fall back to name for a stable order.
  entries.sort((a, b) => b.created - a.created || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return entries.map((entry, index): GcDecision => {
    if (index < retention || options.referencedNames.has(entry.name)) {
      return { name: entry.name, group, action: entry.mark === undefined ? 'keep' : 'unmark' };
    }
    const since = entry.mark === undefined ? undefined : parseMark(entry.mark);
    // An unparsable mark is re-marked so the next pass has a clock to read.
    if (since === undefined) return { name: entry.name, group, action: 'mark', markValue: formatGcMark(options.now) };
    return { name: entry.name, group, action: options.now - since >= graceMs ? 'delete' : 'wait' };
  });
}

/**
 * Accumulates revisions page by page and plans them once all pages are in. Holds a
 * name, a timestamp and the mark per revision.
 */
export class RevisionGcPlanner {
  private readonly groups = new Map<string, Entry[]>();

  /** Adds one page of listed revisions (metadata only is enough). */
  addPage(revisions: Iterable<RevisionMeta>): void {
    for (const revision of revisions) {
      const key = computeGcGroupKey(revision);
      let entries = this.groups.get(key);
      if (!entries) {
        entries = [];
        this.groups.set(key, entries);
      }
      const created = revision.creationTimestamp ? Date.parse(revision.creationTimestamp) : 0;
      entries.push({ name: revision.name, created: Number.isNaN(created) ? 0 : created, mark: revision.annotations?.[Annotation.gcEligibleSince] });
    }
  }

  /** Yields the decisions group by group; each group's order is newest first. */
  *plan(options: GcOptions): Generator<GcDecision> {
    for (const [group, entries] of this.groups) yield* decideGroup(group, entries, options);
  }
}

/**
 * Plans GC for a complete list of revisions. For large sweeps, use
 * {@link RevisionGcPlanner} with pages of metadata.
 */
export function planRevisionGc(input: GcOptions & { revisions: Iterable<RevisionMeta> }): GcDecision[] {
  const planner = new RevisionGcPlanner();
  planner.addPage(input.revisions);
  return [...planner.plan(input)];
}
