/**
 * Storage and versions: every write takes the next value of one cluster-wide
 * resourceVersion counter (as etcd's revision), and is recorded in a bounded history so
 * watches can resume from a version; a version older than the history is `410 Gone`.
 * Stored objects are never mutated in place; writers store fresh copies.
 */
import type { KubeObject } from './registry';

export type StoredEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoredEvent {
  resourceVersion: number;
  /** Storage key of the resource (`group/plural`). */
  resource: string;
  type: StoredEventType;
  object: KubeObject;
  /** The object before this event, for MODIFIED and DELETED. */
  previous?: KubeObject;
}

export type StoreListener = (event: StoredEvent) => void;

/** Index of the first key >= `target` in sorted `keys`. */
function lowerBound(keys: readonly string[], target: string): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((keys[mid] as string) < target) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** Where a scan starts: after `after` (exclusive) and not before the namespace's first key. */
function firstIndexAfter(keys: readonly string[], after: string | undefined, prefix: string | undefined): number {
  let index = prefix === undefined ? 0 : lowerBound(keys, prefix);
  if (after !== undefined) {
    index = Math.max(index, lowerBound(keys, after));
    if (keys[index] === after) index += 1;
  }
  return index;
}

class Bucket {
  readonly objects = new Map<string, KubeObject>();
  private sortedKeys: string[] | undefined;

  keys(): string[] {
    if (!this.sortedKeys) this.sortedKeys = [...this.objects.keys()].sort();
    return this.sortedKeys;
  }

  set(key: string, object: KubeObject): void {
    if (!this.objects.has(key)) this.sortedKeys = undefined;
    this.objects.set(key, object);
  }

  delete(key: string): void {
    if (this.objects.delete(key)) this.sortedKeys = undefined;
  }
}

/** `namespace/name`, or `/name` for cluster-scoped objects; sorts like etcd keys. */
export function objectKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

export class ObjectStore {
  private version = 1;
  private readonly buckets = new Map<string, Bucket>();
  private history: StoredEvent[] = [];
  /** Highest version dropped from history: watches from older versions get 410. */
  private compactedThrough = 0;
  /** Per resource, the version at which it began to be served (a CRD's kind): its watch history starts there. */
  private readonly servedFrom = new Map<string, number>();
  private readonly listeners = new Set<StoreListener>();

  constructor(private readonly window: number) {}

  get resourceVersion(): number {
    return this.version;
  }

  /** The oldest version a watch may start from; older ones are expired. */
  get oldestWatchableVersion(): number {
    return this.compactedThrough;
  }

  /**
   * The oldest version a watch of `resource` may start from: as kube-apiserver's watch cache
   * of a custom resource begins when its CRD is served, a version before that is expired
   * too, however little has been written since.
   */
  oldestWatchableVersionOf(resource: string): number {
    return Math.max(this.compactedThrough, this.servedFrom.get(resource) ?? 0);
  }

  /** Marks `resource` served from the current version on, unless it already is. */
  markServed(resource: string): void {
    if (!this.servedFrom.has(resource)) this.servedFrom.set(resource, this.version);
  }

  /** Forgets when `resource` began to be served (its CRD is gone). */
  markUnserved(resource: string): void {
    this.servedFrom.delete(resource);
  }

  private bucket(resource: string): Bucket {
    let bucket = this.buckets.get(resource);
    if (!bucket) {
      bucket = new Bucket();
      this.buckets.set(resource, bucket);
    }
    return bucket;
  }

  get(resource: string, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.buckets.get(resource)?.objects.get(objectKey(namespace, name));
  }

  /** Objects in key order (namespace, then name), optionally in one namespace, starting after `after`. */
  list(resource: string, namespace?: string, after?: string): Array<[string, KubeObject]> {
    return [...this.scan(resource, namespace, after)];
  }

  /**
   * The same, lazily: a binary search finds the first key, and the scan stops at the end
   * of the namespace, so a page of a paginated list costs its own size, not the store's.
   */
  *scan(resource: string, namespace?: string, after?: string): Generator<[string, KubeObject]> {
    const bucket = this.buckets.get(resource);
    if (!bucket) return;
    const keys = bucket.keys();
    const prefix = namespace === undefined ? undefined : `${namespace}/`;
    let index = firstIndexAfter(keys, after, prefix);
    for (; index < keys.length; index += 1) {
      const key = keys[index] as string;
      if (prefix !== undefined && !key.startsWith(prefix)) return;
      const object = bucket.objects.get(key);
      if (object) yield [key, object];
    }
  }

  /** How many objects `scan` would visit, without visiting them. */
  countRange(resource: string, namespace?: string, after?: string): number {
    const bucket = this.buckets.get(resource);
    if (!bucket) return 0;
    const keys = bucket.keys();
    const prefix = namespace === undefined ? undefined : `${namespace}/`;
    const start = firstIndexAfter(keys, after, prefix);
    // '0' sorts right after '/', so `<namespace>0` bounds the namespace's keys.
    const end = prefix === undefined ? keys.length : lowerBound(keys, `${namespace}0`);
    return Math.max(0, end - start);
  }

  count(resource: string): number {
    return this.buckets.get(resource)?.objects.size ?? 0;
  }

  private commit(event: Omit<StoredEvent, 'resourceVersion'>, rv: number): StoredEvent {
    const full: StoredEvent = { ...event, resourceVersion: rv };
    this.history.push(full);
    if (this.history.length > this.window + Math.max(16, Math.floor(this.window / 10))) {
      const drop = this.history.length - this.window;
      this.compactedThrough = this.history[drop - 1]?.resourceVersion ?? this.compactedThrough;
      this.history = this.history.slice(drop);
    }
    for (const listener of this.listeners) listener(full);
    return full;
  }

  /** Stores a new or changed object under the next resourceVersion and returns the stored copy. */
  put(resource: string, object: KubeObject): KubeObject {
    this.version += 1;
    const stored: KubeObject = { ...object, metadata: { ...object.metadata, resourceVersion: String(this.version) } };
    const key = objectKey(stored.metadata.namespace, stored.metadata.name ?? '');
    const bucket = this.bucket(resource);
    const previous = bucket.objects.get(key);
    bucket.set(key, stored);
    const event: Omit<StoredEvent, 'resourceVersion'> = previous
      ? { resource, type: 'MODIFIED', object: stored, previous }
      : { resource, type: 'ADDED', object: stored };
    this.commit(event, this.version);
    return stored;
  }

  /** Removes an object; its DELETED event carries the deletion's resourceVersion. */
  remove(resource: string, namespace: string | undefined, name: string): KubeObject | undefined {
    const bucket = this.buckets.get(resource);
    const key = objectKey(namespace, name);
    const previous = bucket?.objects.get(key);
    if (!bucket || !previous) return undefined;
    bucket.delete(key);
    this.version += 1;
    const tombstone: KubeObject = { ...previous, metadata: { ...previous.metadata, resourceVersion: String(this.version) } };
    this.commit({ resource, type: 'DELETED', object: tombstone, previous }, this.version);
    return previous;
  }

  /** Events for `resource` after `since`, or 'expired' when history no longer reaches back that far. */
  eventsSince(resource: string, since: number): StoredEvent[] | 'expired' {
    if (since < this.oldestWatchableVersionOf(resource)) return 'expired';
    return this.history.filter((e) => e.resourceVersion > since && e.resource === resource);
  }

  /**
   * The objects of `resource` as they were at version `at` (in one namespace, or all), in key
   * order, rebuilt by undoing the retained history after it; 'expired' when history no
   * longer reaches back that far.
   */
  snapshot(resource: string, at: number, namespace?: string): Array<[string, KubeObject]> | 'expired' {
    if (at < this.compactedThrough) return 'expired';
    const objects = new Map(this.list(resource, namespace));
    const prefix = namespace === undefined ? '' : `${namespace}/`;
    for (let index = this.history.length - 1; index >= 0; index -= 1) {
      const event = this.history[index] as StoredEvent;
      if (event.resourceVersion <= at) break;
      const key = objectKey(event.object.metadata.namespace, event.object.metadata.name ?? '');
      if (event.resource !== resource || !key.startsWith(prefix)) continue;
      if (event.previous) objects.set(key, event.previous);
      else objects.delete(key);
    }
    return [...objects].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
