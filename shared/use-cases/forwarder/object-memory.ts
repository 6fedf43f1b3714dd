/**
 * What the forwarder remembers of each object it follows, per watched stream: enough to
 * tell what moved since the last sight (`computeChangedFields`, `decideForwarding`) and to
 * announce a delete that happened while the watch was down — and no more. The status and
 * `managedFields` are not kept at all and the spec only as a digest, so memory grows with
 * the number of objects, not with their size.
 */
import { createHash } from 'node:crypto';
import type { KubeObject, ObjectMeta } from '../../ports/cluster';
import { specBesideRuntime } from '../../domain/hint-event';

export interface RememberedObject {
  apiVersion: string;
  kind: string;
  uid: string;
  name: string;
  namespace?: string;
  /** Undefined for an object only known to exist (primed from a list, never compared). */
  resourceVersion?: string;
  /** Metadata without `managedFields`; undefined when primed. */
  metadata?: ObjectMeta;
  /** Digest of everything outside `metadata` and `status`. */
  specDigest?: string;
  /** InferenceServices only: digest of the spec without `spec.runtime` (its rollout inputs). */
  besideRuntimeDigest?: string;
  /** Digest of the readiness fields of a workload (Deployments only). */
  readiness?: string;
}

/** What identifies a remembered object: enough to report its deletion. */
function identityOf(object: KubeObject, uid: string): RememberedObject {
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    uid,
    name: object.metadata.name,
    ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
  };
}

/** Top-level fields that are not "the spec", as `hint-event.ts` counts them. */
const NON_SPEC_FIELDS = new Set(['apiVersion', 'kind', 'metadata', 'status']);

/** Key under which a digest stands in for the spec of a remembered object. */
const SPEC_DIGEST_FIELD = '#specDigest';

function specOf(object: KubeObject): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).filter(([key]) => !NON_SPEC_FIELDS.has(key)));
}

/** JSON with sorted keys and undefined members left out: equal under `deepEqual`, equal text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function digestOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('base64url').slice(0, 22);
}

/**
 * Readiness of a rendered Deployment: what a rollout run waits for. A change here is
 * forwarded although it lives in `status`, because the API server's workload controller
 * writes it, not our functions. `observedGeneration` is left out: the controller moves it
 * after each write of ours to the spec, and alone it changes no count a run waits on (a
 * rolling update moves `updatedReplicas`; a scale moves the replica counts).
 */
export function digestWorkloadReadiness(object: KubeObject): string | undefined {
  if (object.kind !== 'Deployment') return undefined;
  const status = (object.status ?? {}) as Record<string, unknown>;
  const conditions = Array.isArray(status.conditions) ? (status.conditions as Array<Record<string, unknown>>) : [];
  return canonicalJson({
    replicas: status.replicas,
    updatedReplicas: status.updatedReplicas,
    readyReplicas: status.readyReplicas,
    availableReplicas: status.availableReplicas,
    conditions: conditions.map((condition) => `${String(condition.type)}=${String(condition.status)}`).sort(),
  });
}

function slimMetadata(metadata: ObjectMeta): ObjectMeta {
  const copy = { ...metadata } as ObjectMeta & { managedFields?: unknown };
  delete copy.managedFields;
  return structuredClone(copy);
}

/** The remembered objects of one watched stream, by uid. */
export class ObjectMemory {
  private readonly objects = new Map<string, RememberedObject>();

  get size(): number {
    return this.objects.size;
  }

  get(uid: string): RememberedObject | undefined {
    return this.objects.get(uid);
  }

  entries(): IterableIterator<RememberedObject> {
    return this.objects.values();
  }

  remember(object: KubeObject): void {
    const { metadata } = object;
    if (!metadata.uid) return;
    const readiness = digestWorkloadReadiness(object);
    this.objects.set(metadata.uid, {
      ...identityOf(object, metadata.uid),
      ...(metadata.resourceVersion ? { resourceVersion: metadata.resourceVersion } : {}),
      metadata: slimMetadata(metadata),
      specDigest: digestOf(specOf(object)),
      ...(object.kind === 'InferenceService' ? { besideRuntimeDigest: digestOf(specBesideRuntime(object)) } : {}),
      ...(readiness === undefined ? {} : { readiness }),
    });
  }

  /** Notes that the object exists without keeping anything to compare with. */
  prime(object: KubeObject): void {
    const { metadata } = object;
    if (!metadata.uid || this.objects.has(metadata.uid)) return;
    this.objects.set(metadata.uid, identityOf(object, metadata.uid));
  }

  forget(uid: string): void {
    this.objects.delete(uid);
  }
}

/**
 * The previous sight of `current`'s object as `toHintEvent` and `decideForwarding` take
 * it: the remembered metadata, and the current spec when the digests agree. When they
 * differ, a stand-in that compares unequal, kept to `spec.runtime` when an
 * InferenceService's spec beside it is unchanged (so `changed.rollout` stays false).
 * Undefined when nothing comparable is remembered.
 */
export function reconstructPrevious(entry: RememberedObject | undefined, current: KubeObject): KubeObject | undefined {
  if (entry?.metadata === undefined || entry.specDigest === undefined) return undefined;
  const currentSpec = specOf(current);
  const standIn = { [SPEC_DIGEST_FIELD]: entry.specDigest };
  let spec: Record<string, unknown> = standIn;
  if (digestOf(currentSpec) === entry.specDigest) spec = currentSpec;
  else if (entry.besideRuntimeDigest !== undefined && digestOf(specBesideRuntime(current)) === entry.besideRuntimeDigest) {
    spec = { ...currentSpec, spec: { ...(currentSpec.spec as Record<string, unknown>), runtime: standIn } };
  }
  return { ...spec, apiVersion: entry.apiVersion, kind: entry.kind, metadata: entry.metadata };
}

/** The object a delete is announced with when only the memory of it is left. */
export function tombstoneOf(entry: RememberedObject, resourceVersion: string): KubeObject {
  return {
    apiVersion: entry.apiVersion,
    kind: entry.kind,
    metadata: {
      name: entry.name,
      ...(entry.namespace ? { namespace: entry.namespace } : {}),
      uid: entry.uid,
      resourceVersion,
    },
  };
}
