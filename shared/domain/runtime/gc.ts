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
 * annotation). A sweep of 100,000 revisions offers each listed revision to
 * {@link NewestRevisions} (at most N small records per runtime), which hands back at once
 * each revision that can no longer be among the N newest, so it never holds a record per
 * revision.
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

/** Newest first; equal timestamps (second resolution) fall back to name for a stable order. */
function newerFirst(a: Entry, b: Entry): number {
  return b.created - a.created || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

function toEntry(revision: RevisionMeta): Entry {
  const created = revision.creationTimestamp ? Date.parse(revision.creationTimestamp) : 0;
  return { name: revision.name, created: Number.isNaN(created) ? 0 : created, mark: revision.annotations?.[Annotation.gcEligibleSince] };
}

/** The decision for a revision given whether it is kept (among the newest, or referenced). */
function decideEntry(group: string, entry: Entry, kept: boolean, options: GcOptions): GcDecision {
  const graceMs = options.graceMs ?? DEFAULT_REVISION_GRACE_MS;
  if (kept) return { name: entry.name, group, action: entry.mark === undefined ? 'keep' : 'unmark' };
  const since = entry.mark === undefined ? undefined : parseMark(entry.mark);
  // An unparsable mark is re-marked so the next pass has a clock to read.
  if (since === undefined) return { name: entry.name, group, action: 'mark', markValue: formatGcMark(options.now) };
  return { name: entry.name, group, action: options.now - since >= graceMs ? 'delete' : 'wait' };
}

function decideGroup(group: string, entries: Entry[], options: GcOptions): GcDecision[] {
  const retention = options.retention ?? DEFAULT_REVISION_RETENTION;
  entries.sort(newerFirst);
  return entries.map((entry, index) => decideEntry(group, entry, index < retention || options.referencedNames.has(entry.name), options));
}

/**
 * Each runtime's N newest revisions, offered one at a time in any order: holds at most N
 * per runtime, however many revisions there are. A revision that falls outside its
 * runtime's N newest (offered older than all N, or pushed out by a newer one) can never
 * come back, so {@link NewestRevisions.offer} hands it back at once for a decision with
 * `among: false`; what is held after the last offer are the N newest (`among: true`).
 * A sweep so decides while it lists, holding one page and these records.
 */
export class NewestRevisions<T> {
  private readonly groups = new Map<string, { entry: Entry; item: T }[]>();
  private count = 0;

  constructor(readonly retention: number = DEFAULT_REVISION_RETENTION) {}

  /** Offers one revision with what to hand back for it; returns the item now outside its runtime's N newest, if any. */
  offer(revision: RevisionMeta, item: T): T | undefined {
    if (this.retention <= 0) return item;
    const key = computeGcGroupKey(revision);
    const entry = toEntry(revision);
    let held = this.groups.get(key);
    if (!held) {
      held = [];
      this.groups.set(key, held);
    }
    let at = held.length;
    while (at > 0 && newerFirst(entry, (held[at - 1] as { entry: Entry }).entry) < 0) at -= 1;
    if (at >= this.retention) return item;
    held.splice(at, 0, { entry, item });
    this.count += 1;
    if (held.length <= this.retention) return undefined;
    this.count -= 1;
    return held.pop()?.item;
  }

  /** Records held: at most N per runtime seen. */
  get size(): number {
    return this.count;
  }

  /** The items held: each runtime's N newest once every revision was offered. */
  *held(): Generator<T> {
    for (const entries of this.groups.values()) for (const { item } of entries) yield item;
  }
}

/**
 * Decides one revision: `among` says whether it is among its runtime's N newest (see
 * {@link NewestRevisions}). The same rules as {@link planRevisionGc}, one revision at a time.
 */
export function decideRevision(revision: RevisionMeta, among: boolean, options: GcOptions): GcDecision {
  return decideEntry(computeGcGroupKey(revision), toEntry(revision), among || options.referencedNames.has(revision.name), options);
}

/**
 * Plans GC for a complete list of revisions, group by group, each group newest first.
 * For large sweeps, see {@link NewestRevisions}.
 */
export function planRevisionGc(input: GcOptions & { revisions: Iterable<RevisionMeta> }): GcDecision[] {
  const groups = new Map<string, Entry[]>();
  for (const revision of input.revisions) {
    const key = computeGcGroupKey(revision);
    const entries = groups.get(key) ?? [];
    if (entries.length === 0) groups.set(key, entries);
    entries.push(toEntry(revision));
  }
  return [...groups].flatMap(([group, entries]) => decideGroup(group, entries, input));
}
