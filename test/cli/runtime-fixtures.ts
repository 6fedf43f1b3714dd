/** The seed's pinned InferenceService, its ServingRuntime (edited to 0.85) and both revisions. */
import type { KubeObject } from '../../shared/ports/cluster';
import { buildControllerRevision, normalizeRuntimeSpec } from '../../shared/domain/runtime';
import type { InferenceServiceObject } from '../../cli/isvc';
import { buildSeedRuntimeSpec } from '../runtime/fixtures/seed-runtime';

export const OLD_REVISION = 'r-llama-demo-sglang-llama-3-2-3b-590753e8';
export const NEW_REVISION = 'r-llama-demo-sglang-llama-3-2-3b-af9539ac';

export function seedRuntime(memFrac: '0.9' | '0.85' = '0.85'): KubeObject {
  return {
    apiVersion: 'ome.io/v1beta1',
    kind: 'ServingRuntime',
    metadata: { name: 'sglang-llama-3-2-3b', namespace: 'llama-demo', uid: 'rt-uid', resourceVersion: '212', generation: 2 },
    spec: buildSeedRuntimeSpec(memFrac),
  };
}

export function seedRevision(memFrac: '0.9' | '0.85', created: string): KubeObject {
  const revision = buildControllerRevision({
    kind: 'ServingRuntime',
    namespace: 'llama-demo',
    runtimeName: 'sglang-llama-3-2-3b',
    mergedSpec: normalizeRuntimeSpec(buildSeedRuntimeSpec(memFrac)),
    omeNamespace: 'ome',
  });
  revision.metadata.creationTimestamp = created;
  revision.metadata.uid = `uid-${revision.metadata.name}`;
  return revision;
}

export function driftedLlama(): InferenceServiceObject {
  return {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name: 'llama-3-2-3b-instruct', namespace: 'llama-demo', uid: 'isvc-uid', resourceVersion: '4711', generation: 1 },
    spec: {
      model: { name: 'llama-3-2-3b-instruct' },
      runtime: { name: 'sglang-llama-3-2-3b', kind: 'ServingRuntime', autoSync: false },
      engine: { minReplicas: 1, maxReplicas: 1 },
    },
    status: {
      observedGeneration: 1,
      pinnedRevisionName: OLD_REVISION,
      conditions: [
        {
          type: 'RuntimeDrifted',
          status: 'True',
          reason: 'RevisionMismatch',
          message: `pinned ${OLD_REVISION}, live spec differs; bump ome.io/runtime-sync annotation to advance`,
        },
      ],
    },
  };
}
