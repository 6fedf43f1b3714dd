/**
 * The direct engine workload writer: the rendered Deployment goes straight to the
 * cluster. Created when absent; replaced, with the resourceVersion read, only when what
 * we render differs from what we rendered last time or from what the cluster holds, so
 * an unchanged render costs one read and no write. A same-named Deployment the plane
 * does not own is never written (UnownedDeploymentError).
 */
import { createHash } from 'node:crypto';
import { AlreadyExistsError, ConflictError, LeaseLostError, NotFoundError, UnownedDeploymentError } from '../domain/errors';
import { Resources } from '../domain/model/resources';
import type { ClusterClient, KubeObject, ObjectMeta } from '../ports/cluster';
import type { EngineWorkloadOutcome, EngineWorkloadRequest, EngineWorkloadWriter, WorkloadFence } from '../ports/workloads';
import { deploymentOwnershipProblem, type WorkloadOwner } from '../domain/runtime/workload';
import { FIELD_MANAGER } from '../domain/vocabulary';

/**
 * Hash of the Deployment as last rendered. The API server fills defaults into what we
 * send (strategy, revisionHistoryLimit, …), so the stored object cannot be compared
 * with the render for equality; this annotation tells whether the render moved, and a
 * subset check tells whether someone edited the Deployment since.
 */
export const RENDERED_HASH_ANNOTATION = 'ome.io/rendered-hash';

/**
 * The fencing token of the object lease under which the Deployment was last written. A
 * writer holding a lower token lost its lease to the writer of this one and must not
 * write; see `checkFence`.
 */
export const LEASE_FENCE_ANNOTATION = 'ome.io/lease-fence';

type Json = unknown;

/**
 * The Deployment was written under a newer lease than ours: a later reconcile took the
 * object over and owns the Deployment now. Nothing was written. Unlike an expired lease
 * (plain LeaseLostError), nothing is left undone: the newer holder rendered it.
 */
export class WorkloadSupersededError extends LeaseLostError {
  constructor(message: string) {
    super(message);
    this.name = 'WorkloadSupersededError';
  }
}

/** The token a Deployment was stamped with; 0 when never stamped (or the stamp is not a number). */
export function storedFence(object: KubeObject): number {
  const raw = object.metadata.annotations?.[LEASE_FENCE_ANNOTATION];
  const value = raw === undefined ? Number.NaN : Number(raw);
  return Number.isSafeInteger(value) && value > 0 ? value : 0;
}

/**
 * Refuses a write under a lease older than the one the Deployment was last written under,
 * then checks the lease is still ours. Together with the resourceVersion the replace
 * carries, a stale holder's write either fails here or gets a 409.
 */
export function checkFence(current: KubeObject | undefined, fence: WorkloadFence | undefined): void {
  if (fence === undefined) return;
  const stored = current === undefined ? 0 : storedFence(current);
  if (stored > fence.fencingToken) {
    const { namespace, name } = current?.metadata ?? {};
    throw new WorkloadSupersededError(`Deployment ${namespace ?? ''}/${name ?? ''} was written under lease token ${stored}; ours is ${fence.fencingToken}`);
  }
  fence.assertHeld();
}

/** The object with the fence's token stamped on it (unchanged without a fence). */
export function withFence<T extends KubeObject>(object: T, fence: WorkloadFence | undefined): T {
  if (fence === undefined) return object;
  return { ...object, metadata: { ...object.metadata, annotations: { ...(object.metadata.annotations ?? {}), [LEASE_FENCE_ANNOTATION]: String(fence.fencingToken) } } };
}

/**
 * Refuses to write a Deployment that is not the plane's: UnownedDeploymentError, and the
 * Deployment stays byte for byte as it is. Called on the object just read, before every
 * write that carries its resourceVersion, so a Deployment that changes hands in between
 * turns the write into a 409 and the retry reads it again.
 */
export function assertOwnedDeployment(current: KubeObject, owner: WorkloadOwner): void {
  const problem = deploymentOwnershipProblem(current, owner);
  if (problem === undefined) return;
  const { namespace = '', name, uid = '' } = current.metadata;
  throw new UnownedDeploymentError(namespace, name, uid, problem);
}

/** The owner a write on behalf of this InferenceService requires. */
export function workloadOwnerOf(isvc: KubeObject): WorkloadOwner {
  return { name: isvc.metadata.name, uid: isvc.metadata.uid };
}

function isRecord(value: Json): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when every field of `wanted` holds the same value in `actual` (lists element by element, same length). */
export function containsRendered(actual: Json, wanted: Json): boolean {
  if (Array.isArray(wanted)) {
    return Array.isArray(actual) && actual.length === wanted.length && wanted.every((item, i) => containsRendered(actual[i], item));
  }
  if (isRecord(wanted)) {
    return isRecord(actual) && Object.entries(wanted).every(([key, value]) => value === undefined || containsRendered(actual[key], value));
  }
  return actual === wanted;
}

function hashRendered(desired: KubeObject): string {
  const { metadata, spec } = desired;
  const digestOf = JSON.stringify({ labels: metadata.labels ?? {}, annotations: metadata.annotations ?? {}, spec });
  return createHash('sha256').update(digestOf, 'utf8').digest('hex').slice(0, 16);
}

/** The owner reference to the InferenceService: the Deployment goes when the InferenceService does. */
function ownerReferenceOf(isvc: KubeObject): NonNullable<ObjectMeta['ownerReferences']>[number] {
  return { apiVersion: isvc.apiVersion, kind: isvc.kind, name: isvc.metadata.name, uid: isvc.metadata.uid ?? '', controller: true };
}

function withOwner(desired: KubeObject, isvc: KubeObject): KubeObject {
  const hash = hashRendered(desired);
  return {
    ...desired,
    metadata: {
      ...desired.metadata,
      annotations: { ...(desired.metadata.annotations ?? {}), [RENDERED_HASH_ANNOTATION]: hash },
      ownerReferences: isvc.metadata.uid ? [ownerReferenceOf(isvc)] : (desired.metadata.ownerReferences ?? []),
    },
  };
}

function isUpToDate(current: KubeObject, desired: KubeObject): boolean {
  const annotations = current.metadata.annotations ?? {};
  return (
    annotations[RENDERED_HASH_ANNOTATION] === desired.metadata.annotations?.[RENDERED_HASH_ANNOTATION] &&
    containsRendered(current.metadata.labels ?? {}, desired.metadata.labels ?? {}) &&
    containsRendered(current.metadata.ownerReferences ?? [], desired.metadata.ownerReferences ?? []) &&
    containsRendered(current.spec, desired.spec)
  );
}

/** Keeps what others put in metadata (other labels and annotations); the spec is ours. */
function replacement(current: KubeObject, desired: KubeObject): KubeObject {
  return {
    ...desired,
    metadata: {
      ...current.metadata,
      labels: { ...(current.metadata.labels ?? {}), ...(desired.metadata.labels ?? {}) },
      annotations: { ...(current.metadata.annotations ?? {}), ...(desired.metadata.annotations ?? {}) },
      ...(desired.metadata.ownerReferences ? { ownerReferences: desired.metadata.ownerReferences } : {}),
    },
  };
}

/** Creates the writer over a cluster client. Conflicts surface as ConflictError, for the caller's retry. */
export function createDirectWorkloadWriter(client: ClusterClient): EngineWorkloadWriter {
  return {
    async apply(request: EngineWorkloadRequest): Promise<EngineWorkloadOutcome> {
      const desired = withOwner(request.desired, request.isvc);
      const { fence } = request;
      const { namespace, name } = desired.metadata;
      let current: KubeObject;
      try {
        current = await client.get<KubeObject>(Resources.deployments, namespace, name);
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
        checkFence(undefined, fence);
        try {
          await client.create(Resources.deployments, withFence(desired, fence), { fieldManager: FIELD_MANAGER });
          return 'created';
        } catch (createError) {
          if (createError instanceof AlreadyExistsError) throw new ConflictError(`Deployment ${namespace}/${name} appeared while being created`, { cause: createError });
          throw createError;
        }
      }
      assertOwnedDeployment(current, workloadOwnerOf(request.isvc));
      checkFence(current, fence);
      // After a takeover the old holder may still be about to write: raise the fence first,
      // even when the Deployment is as we want it.
      const raiseFence = fence !== undefined && fence.takenOver && storedFence(current) < fence.fencingToken;
      if (isUpToDate(current, desired) && !raiseFence) return 'unchanged';
      // `replacement` keeps the resourceVersion read above: a write in between is a 409.
      await client.replace(Resources.deployments, withFence(replacement(current, desired), fence), { fieldManager: FIELD_MANAGER });
      if (isUpToDate(current, desired)) return 'unchanged';
      return 'updated';
    },
  };
}
