/**
 * The levers upstream OME gives its users, which are all the plane may pull in a delegate
 * cluster (../../shared/UPSTREAM.md, "Living beside upstream's own controller"):
 *
 * - `spec.runtime.revision` with `autoSync: false`, for a pin the plane decides;
 * - `ome.io/runtime-sync`, to roll forward (upstream acts when it differs from
 *   `status.lastRuntimeSyncToken`);
 * - `ome.io/rollout-repin`, `-promote`, `-rollback` and `-paused`;
 * - revisions created and labelled as upstream's store creates them.
 *
 * Each write is a JSON Patch that first tests the object's uid and resourceVersion, as
 * `kubectl ome` sends its guarded patches: a concurrent edit (upstream consuming an
 * annotation, a user's apply) makes it fail with a conflict instead of writing over it.
 * None touches status.
 */
import type { InferenceService } from '../../domain/model/inference-service';
import { Resources } from '../../domain/model/resources';
import type { ClusterClient, KubeObject } from '../../ports/cluster';
import { createRevision } from '../revisions';
import { buildControllerRevision, type BuildControllerRevisionInput } from '../../domain/runtime/revision';
import { Annotation, FIELD_MANAGER, ROLLOUT_PAUSED_ANNOTATION } from '../../domain/vocabulary';

/** The rollout request annotations upstream consumes (`paused` it reads and leaves). */
export const RolloutLever = {
  repin: Annotation.rolloutRepin,
  promote: Annotation.rolloutPromote,
  rollback: Annotation.rolloutRollback,
  paused: ROLLOUT_PAUSED_ANNOTATION,
} as const;
export type RolloutLeverName = keyof typeof RolloutLever;

type JsonPatchOperation = { op: 'test' | 'add' | 'replace' | 'remove'; path: string; value?: unknown };

/** `~` and `/` escaped, as a JSON Pointer token. */
function pointerToken(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The tests every guarded patch starts with: the object is the one read, unchanged since. */
function guard(isvc: KubeObject): JsonPatchOperation[] {
  return [
    { op: 'test', path: '/metadata/uid', value: isvc.metadata.uid },
    { op: 'test', path: '/metadata/resourceVersion', value: isvc.metadata.resourceVersion },
  ];
}

function setAnnotation(isvc: KubeObject, key: string, value: string): JsonPatchOperation[] {
  return [
    ...(isvc.metadata.annotations ? [] : [{ op: 'add' as const, path: '/metadata/annotations', value: {} }]),
    { op: 'add', path: `/metadata/annotations/${pointerToken(key)}`, value },
  ];
}

function patchIsvc(client: ClusterClient, isvc: KubeObject, operations: JsonPatchOperation[]): Promise<InferenceService> {
  return client.patch<InferenceService>(Resources.inferenceServices, isvc.metadata.namespace, isvc.metadata.name, operations, { type: 'json', fieldManager: FIELD_MANAGER });
}

/** Sets `ome.io/runtime-sync` to `token` on the InferenceService as read; upstream rolls it forward. */
export function requestRuntimeSync(client: ClusterClient, isvc: KubeObject, token: string): Promise<InferenceService> {
  return patchIsvc(client, isvc, [...guard(isvc), ...setAnnotation(isvc, Annotation.runtimeSync, token)]);
}

/** Pins the InferenceService to `revision` the way a user would: `autoSync: false` and `spec.runtime.revision`. */
export function pinRevision(client: ClusterClient, isvc: InferenceService, revision: string): Promise<InferenceService> {
  return patchIsvc(client, isvc, [
    ...guard(isvc),
    { op: 'add', path: '/spec/runtime/autoSync', value: false },
    { op: 'add', path: '/spec/runtime/revision', value: revision },
  ]);
}

/** Sets one of the rollout request annotations; upstream consumes repin, promote and rollback. */
export function requestRolloutAction(client: ClusterClient, isvc: KubeObject, lever: RolloutLeverName, value: string): Promise<InferenceService> {
  return patchIsvc(client, isvc, [...guard(isvc), ...setAnnotation(isvc, RolloutLever[lever], value)]);
}

/**
 * Creates the revision of a merged runtime spec as upstream's store does (same name, labels,
 * created-by annotation and data), so upstream's controller finds it and its GC governs it.
 * An existing revision of the same name is success, and is never changed.
 */
export async function ensureRevision(client: ClusterClient, input: BuildControllerRevisionInput): Promise<{ revision: KubeObject; created: boolean }> {
  return createRevision(client, buildControllerRevision(input));
}
