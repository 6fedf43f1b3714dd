/**
 * The direct engine workload writer: the rendered Deployment goes straight to the
 * cluster. Created when absent; replaced, with the resourceVersion read, only when what
 * we render differs from what we rendered last time or from what the cluster holds, so
 * an unchanged render costs one read and no write.
 */
import { createHash } from 'node:crypto';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../errors';
import { Resources } from '../model/resources';
import type { ClusterClient, KubeObject, ObjectMeta } from '../ports/cluster';
import type { EngineWorkloadOutcome, EngineWorkloadRequest, EngineWorkloadWriter } from '../ports/workloads';
import { FIELD_MANAGER } from '../vocabulary';

/**
 * Hash of the Deployment as last rendered. The API server fills defaults into what we
 * send (strategy, revisionHistoryLimit, …), so the stored object cannot be compared
 * with the render for equality; this annotation tells whether the render moved, and a
 * subset check tells whether someone edited the Deployment since.
 */
export const RENDERED_HASH_ANNOTATION = 'ome.io/rendered-hash';

type Json = unknown;

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
      const { namespace, name } = desired.metadata;
      let current: KubeObject;
      try {
        current = await client.get<KubeObject>(Resources.deployments, namespace, name);
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
        try {
          await client.create(Resources.deployments, desired, { fieldManager: FIELD_MANAGER });
          return 'created';
        } catch (createError) {
          if (createError instanceof AlreadyExistsError) throw new ConflictError(`Deployment ${namespace}/${name} appeared while being created`, { cause: createError });
          throw createError;
        }
      }
      if (isUpToDate(current, desired)) return 'unchanged';
      await client.replace(Resources.deployments, replacement(current, desired), { fieldManager: FIELD_MANAGER });
      return 'updated';
    },
  };
}
