import { Annotation, RuntimeKind, type RuntimeKindName } from '../vocabulary';
import { applyRuntimeSpecDefaults } from './defaults';
import { normalizeGoJson, type JsonValue } from './go-json';
import { strategicMergeSpec } from './strategic-merge';

/**
 * Runtime inheritance (`ome.io/inherit-from`) as upstream resolves it: walk from the
 * runtime to its root, then merge root first, each child strategic-merged onto what its
 * ancestors give. Pure: the caller passes a synchronous lookup over runtimes it has
 * already fetched (or cached).
 */

/** Upstream's limit: a chain holds at most this many runtimes, the start included. */
export const MAX_INHERITANCE_DEPTH = 5;

/** The fields of a ServingRuntime or ClusterServingRuntime that resolution reads. */
export interface RuntimeRecord {
  kind: RuntimeKindName;
  name: string;
  /** Set for a ServingRuntime. */
  namespace?: string;
  annotations?: Record<string, string> | undefined;
  spec: unknown;
}

export interface RuntimeKey {
  kind: RuntimeKindName;
  name: string;
  namespace?: string;
}

/** Returns the runtime, or undefined when it does not exist. */
export type RuntimeLookup = (key: RuntimeKey) => RuntimeRecord | undefined;

export type InheritanceFailureReason = 'ParentNotFound' | 'InheritanceCycle' | 'MaxDepthExceeded';

export type ChainResolution =
  | { ok: true; chain: string[]; spec: JsonValue }
  | { ok: false; reason: InheritanceFailureReason; message: string; chain: string[] };

function formatGoList(items: readonly string[]): string {
  return `[${items.join(' ')}]`;
}

/**
 * Finds a runtime's parent: a ClusterServingRuntime inherits only from a
 * ClusterServingRuntime; a ServingRuntime from a ServingRuntime in its namespace, or
 * else a ClusterServingRuntime of that name.
 */
export function findParentRuntime(child: RuntimeRecord, parentName: string, lookup: RuntimeLookup): RuntimeRecord | undefined {
  if (child.kind === RuntimeKind.namespaced) {
    const sameNamespace = lookup({ kind: RuntimeKind.namespaced, name: parentName, namespace: child.namespace ?? '' });
    if (sameNamespace) return sameNamespace;
  }
  return lookup({ kind: RuntimeKind.cluster, name: parentName });
}

function parentNameOf(runtime: RuntimeRecord): string {
  return runtime.annotations?.[Annotation.inheritFrom] ?? '';
}

/** Brings a stored spec to the shape upstream hashes: CRD defaults applied, Go round-trip. */
export function normalizeRuntimeSpec(spec: unknown): JsonValue {
  return normalizeGoJson(applyRuntimeSpecDefaults(spec ?? {}));
}

/**
 * Resolves a runtime's inheritance chain and returns its effective (merged) spec with
 * the chain root first, or the reason it does not resolve, with upstream's messages.
 * Failures are results, not exceptions: they are the runtime's `InheritanceReady` reason.
 * @throws InvalidInputError when a spec in the chain cannot decode into a ServingRuntimeSpec
 */
export function resolveRuntimeChain(start: RuntimeRecord, lookup: RuntimeLookup, maxDepth = MAX_INHERITANCE_DEPTH): ChainResolution {
  const visited = new Set([start.name]);
  const childFirst: RuntimeRecord[] = [start];
  let current = start;
  for (let parentName = parentNameOf(current); parentName !== ''; parentName = parentNameOf(current)) {
    const names = childFirst.map((r) => r.name);
    if (childFirst.length >= maxDepth) {
      return { ok: false, reason: 'MaxDepthExceeded', chain: names, message: `inheritance chain exceeds max depth ${maxDepth} (chain: ${formatGoList(names)})` };
    }
    if (visited.has(parentName)) {
      const cycle = [...names, parentName];
      return { ok: false, reason: 'InheritanceCycle', chain: cycle, message: `inheritance cycle detected: ${formatGoList(cycle)}` };
    }
    const parent = findParentRuntime(current, parentName, lookup);
    if (!parent) {
      return { ok: false, reason: 'ParentNotFound', chain: names, message: `inherit-from parent ${JSON.stringify(parentName)} not found (chain so far: ${formatGoList(names)})` };
    }
    visited.add(parent.name);
    childFirst.push(parent);
    current = parent;
  }
  const rootFirst = [...childFirst].reverse();
  let effective = normalizeRuntimeSpec(rootFirst[0]?.spec);
  for (const runtime of rootFirst.slice(1)) {
    effective = normalizeGoJson(strategicMergeSpec(effective, normalizeRuntimeSpec(runtime.spec)));
  }
  return { ok: true, chain: rootFirst.map((r) => r.name), spec: effective };
}

export type LiveRuntimeResolution =
  | { status: 'found'; runtime: RuntimeRecord; chain: string[]; spec: JsonValue }
  | { status: 'not-found'; message: string }
  | { status: 'error'; reason: InheritanceFailureReason; message: string };

/**
 * Resolves the live runtime an InferenceService names. `ClusterServingRuntime` (the
 * default) looks at cluster scope, then in the ISVC's namespace; `ServingRuntime` looks
 * only in the namespace. The not-found messages are the runtime selector's.
 */
export function resolveLiveRuntime(ref: { kind: RuntimeKindName; name: string; namespace: string }, lookup: RuntimeLookup): LiveRuntimeResolution {
  const runtime =
    ref.kind === RuntimeKind.namespaced
      ? lookup({ kind: RuntimeKind.namespaced, name: ref.name, namespace: ref.namespace })
      : (lookup({ kind: RuntimeKind.cluster, name: ref.name }) ?? lookup({ kind: RuntimeKind.namespaced, name: ref.name, namespace: ref.namespace }));
  if (!runtime) {
    return {
      status: 'not-found',
      message:
        ref.kind === RuntimeKind.namespaced
          ? `ServingRuntime ${ref.name} not found in namespace ${ref.namespace}`
          : `runtime ${ref.name} not found in namespace ${ref.namespace} or at cluster scope`,
    };
  }
  const resolution = resolveRuntimeChain(runtime, lookup);
  if (!resolution.ok) return { status: 'error', reason: resolution.reason, message: resolution.message };
  return { status: 'found', runtime, chain: resolution.chain, spec: resolution.spec };
}
