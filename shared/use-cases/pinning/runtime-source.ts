/**
 * Reading runtimes from a cluster for the pure inheritance resolver: one runtime at a time
 * for a single InferenceService, or a catalog listed once for a fan-out.
 */
import { InvalidInputError, NotFoundError } from '../../domain/errors';
import { Resources } from '../../domain/model/resources';
import type { ClusterClient, KubeObject } from '../../ports/cluster';
import {
  findParentRuntime,
  resolveLiveRuntime,
  type LiveRuntime,
  type LiveRuntimeResolution,
  type RuntimeKey,
  type RuntimeLookup,
  type RuntimeRecord,
} from '../../domain/runtime';
import { Annotation, RuntimeKind, type RuntimeKindName } from '../../domain/vocabulary';
import { listAll } from '../list-all';

export { listAll } from '../list-all';

/** What `spec.runtime` asks for, with the kind defaulted. */
export interface RuntimeRef {
  kind: RuntimeKindName;
  name: string;
  /** The InferenceService's namespace. */
  namespace: string;
}

/** The resolver's view of a stored ServingRuntime or ClusterServingRuntime. */
export function toRuntimeRecord(object: KubeObject): RuntimeRecord {
  const kind = object.kind === RuntimeKind.namespaced ? RuntimeKind.namespaced : RuntimeKind.cluster;
  return {
    kind,
    name: object.metadata.name,
    ...(kind === RuntimeKind.namespaced ? { namespace: object.metadata.namespace ?? '' } : {}),
    annotations: object.metadata.annotations,
    spec: object.spec,
  };
}

/** A stable map key for a runtime. */
export function runtimeKeyOf(key: RuntimeKey): string {
  return key.kind === RuntimeKind.namespaced ? `${key.kind}/${key.namespace ?? ''}/${key.name}` : `${key.kind}//${key.name}`;
}

/**
 * Resolution as the decision needs it. A spec that cannot decode (InvalidInputError from
 * the resolver) is an error of the runtime, reported like a broken chain.
 */
export function toLiveRuntime(resolution: LiveRuntimeResolution): LiveRuntime {
  if (resolution.status === 'found') return { status: 'found', spec: resolution.spec };
  return resolution.status === 'not-found' ? resolution : { status: 'error', message: resolution.message };
}

function resolveSafely(ref: RuntimeRef, lookup: RuntimeLookup): LiveRuntimeResolution {
  try {
    return resolveLiveRuntime(ref, lookup);
  } catch (error) {
    if (error instanceof InvalidInputError) return { status: 'error', reason: 'ParentNotFound', message: error.message };
    throw error;
  }
}

/**
 * A runtime as a decision read it: found at a resourceVersion, or not found. A write judged
 * from it is still right while a read now gives the same (`runtimeStillAsRead`).
 */
export interface RuntimeRead {
  key: RuntimeKey;
  found: boolean;
  resourceVersion?: string | undefined;
}

async function fetchRuntime(client: ClusterClient, key: RuntimeKey): Promise<{ record: RuntimeRecord | undefined; read: RuntimeRead }> {
  const type = key.kind === RuntimeKind.namespaced ? Resources.servingRuntimes : Resources.clusterServingRuntimes;
  try {
    const object = await client.get(type, key.kind === RuntimeKind.namespaced ? key.namespace : undefined, key.name);
    return { record: toRuntimeRecord(object), read: { key, found: true, resourceVersion: object.metadata.resourceVersion } };
  } catch (error) {
    if (error instanceof NotFoundError) return { record: undefined, read: { key, found: false } };
    throw error;
  }
}

/** Whether the runtime is still as `read` saw it (same resourceVersion, or still absent). */
export async function runtimeStillAsRead(client: ClusterClient, read: RuntimeRead): Promise<boolean> {
  const now = (await fetchRuntime(client, read.key)).read;
  return now.found === read.found && now.resourceVersion === read.resourceVersion;
}

/**
 * Resolves the live runtime of one InferenceService from the cluster, fetching only the
 * runtimes the lookup rules and the inheritance chain ask for, one at a time (a chain
 * holds at most five). API failures other than NotFound propagate: they are transient.
 * `reads`, when given, receives every runtime fetched, misses included.
 */
export async function fetchLiveRuntime(client: ClusterClient, ref: RuntimeRef, reads?: RuntimeRead[]): Promise<LiveRuntimeResolution> {
  const fetched = new Map<string, RuntimeRecord | undefined>();
  for (;;) {
    let missing: RuntimeKey | undefined;
    const lookup: RuntimeLookup = (key) => {
      const id = runtimeKeyOf(key);
      if (fetched.has(id)) return fetched.get(id);
      missing ??= key;
      return undefined;
    };
    const resolution = resolveSafely(ref, lookup);
    if (missing === undefined) return resolution;
    const { record, read } = await fetchRuntime(client, missing);
    fetched.set(runtimeKeyOf(missing), record);
    reads?.push(read);
  }
}

/**
 * Every runtime a fan-out may need, listed once: lookups and resolutions are then
 * in-memory, so evaluating thousands of InferenceServices reads no runtime again.
 */
export class RuntimeCatalog {
  private readonly records = new Map<string, RuntimeRecord>();
  private readonly resolutions = new Map<string, { resolution: LiveRuntimeResolution; reads: RuntimeRead[] }>();

  /** `versions`: each record's resourceVersion by `runtimeKeyOf`, as listed. */
  constructor(
    records: readonly RuntimeRecord[],
    private readonly versions: ReadonlyMap<string, string> = new Map(),
  ) {
    for (const record of records) this.records.set(runtimeKeyOf(record), record);
  }

  readonly lookup: RuntimeLookup = (key) => this.records.get(runtimeKeyOf(key));

  /** The live runtime an InferenceService in `ref.namespace` resolves to; memoised. */
  resolve(ref: RuntimeRef): LiveRuntimeResolution {
    return this.resolved(ref).resolution;
  }

  /** The runtimes `resolve(ref)` read, misses included, as listed. */
  readsOf(ref: RuntimeRef): readonly RuntimeRead[] {
    return this.resolved(ref).reads;
  }

  private resolved(ref: RuntimeRef): { resolution: LiveRuntimeResolution; reads: RuntimeRead[] } {
    // A runtime found at cluster scope (and its chain, all cluster-scoped) resolves alike
    // from every namespace: one resolution per fan-out, not one per namespace.
    const clusterScoped = ref.kind !== RuntimeKind.namespaced && this.lookup({ kind: RuntimeKind.cluster, name: ref.name }) !== undefined;
    const id = clusterScoped ? `${RuntimeKind.cluster}//${ref.name}` : `${ref.kind}/${ref.namespace}/${ref.name}`;
    let entry = this.resolutions.get(id);
    if (!entry) {
      const reads = new Map<string, RuntimeRead>();
      const lookup: RuntimeLookup = (key) => {
        const keyId = runtimeKeyOf(key);
        const record = this.records.get(keyId);
        reads.set(keyId, record === undefined ? { key, found: false } : { key, found: true, resourceVersion: this.versions.get(keyId) });
        return record;
      };
      entry = { resolution: resolveSafely(ref, lookup), reads: [...reads.values()] };
      this.resolutions.set(id, entry);
    }
    return entry;
  }

  /**
   * The names of the runtime `changed` and of every runtime whose inheritance chain
   * passes through it: a change to a parent changes its children's merged specs.
   */
  affectedNames(changed: RuntimeKey): Set<string> {
    const names = new Set([changed.name]);
    const changedId = runtimeKeyOf(changed);
    for (const record of this.records.values()) {
      let current: RuntimeRecord | undefined = record;
      for (let depth = 0; current && depth < 8; depth += 1) {
        if (runtimeKeyOf(current) === changedId) {
          names.add(record.name);
          break;
        }
        const parentName: string = current.annotations?.[Annotation.inheritFrom] ?? '';
        current = parentName === '' ? undefined : findParentRuntime(current, parentName, this.lookup);
      }
    }
    return names;
  }
}

/**
 * Lists the runtimes a change of `changed` can affect: every ClusterServingRuntime, and
 * the ServingRuntimes of the namespace (for a ServingRuntime) or of every namespace (for
 * a ClusterServingRuntime, which namespaced runtimes may inherit from).
 */
export async function loadRuntimeCatalog(client: ClusterClient, changed: RuntimeKey, pageSize: number): Promise<RuntimeCatalog> {
  const records: RuntimeRecord[] = [];
  const versions = new Map<string, string>();
  const add = (objects: readonly KubeObject[]): void => {
    for (const object of objects) {
      const record = toRuntimeRecord(object);
      records.push(record);
      if (object.metadata.resourceVersion !== undefined) versions.set(runtimeKeyOf(record), object.metadata.resourceVersion);
    }
  };
  for await (const page of listAll(client, Resources.clusterServingRuntimes, { pageSize })) add(page);
  const namespace = changed.kind === RuntimeKind.namespaced ? changed.namespace : undefined;
  for await (const page of listAll(client, Resources.servingRuntimes, { ...(namespace === undefined ? {} : { namespace }), pageSize })) add(page);
  return new RuntimeCatalog(records, versions);
}
