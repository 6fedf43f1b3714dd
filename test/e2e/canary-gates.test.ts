/**
 * A canary with two manual gates, the last on the 100% step, promoted through both with
 * `kubectl ome rollout promote` on CRDs whose status schema mirrors upstream OME's: the
 * API server prunes any status field upstream does not declare, so a finished canary must
 * be recorded as upstream records it (one past the last step) for the run to close.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonSchema } from '../../local/cluster/schema';
import { listSchemaFields } from '../../local/cluster/schema-fields';
import { eventually, sh, shOk, startRolloutWalk, type RolloutWalk } from './rollout-support';
import { prunedWrites } from './support';
import { readManifests } from '../model/manifests';

interface CanaryStatus {
  canaryRevisionHash?: string;
  stableRevisionHash?: string;
  currentStep?: number;
  observedTrafficWeight?: number;
}

interface GatedIsvc {
  status: {
    rollout?: { activeRun?: { runID: string; openedAt: string }; lastRun?: { outcome: string; openedAt?: string; closedAt?: string } };
    canary?: CanaryStatus;
    components?: { engine?: { rolloutPhase?: string; canary?: CanaryStatus } };
  };
}

const STEPS = [
  { capacity: '50%', traffic: 50, pause: {} },
  { capacity: '100%', traffic: 100, pause: {} },
];

const manifests = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prod' } },
  {
    apiVersion: 'ome.io/v1beta1',
    kind: 'ServingRuntime',
    metadata: { name: 'srt', namespace: 'prod' },
    spec: {
      supportedModelFormats: [{ modelFormat: { name: 'safetensors' }, autoSelect: true }],
      engineConfig: { runner: { name: 'ome-container', image: 'docker.io/lmsysorg/sglang:v0.5.5', args: ['--mem-frac=0.9'] } },
    },
  },
  {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name: 'gated', namespace: 'prod' },
    spec: {
      model: { name: 'chat-model' },
      runtime: { name: 'srt', kind: 'ServingRuntime' },
      engine: { minReplicas: 2, maxReplicas: 2 },
      rollout: { groups: [{ components: ['engine'], canary: { steps: STEPS } }] },
    },
  },
];

let walk: RolloutWalk;

async function gated(): Promise<GatedIsvc> {
  return JSON.parse(await shOk(walk, 'kubectl get inferenceservice gated -n prod -o json')) as GatedIsvc;
}

const atStep = (step: number) => (isvc: GatedIsvc) => isvc.status.components?.engine?.rolloutPhase === 'Paused' && isvc.status.canary?.currentStep === step;

beforeAll(async () => {
  walk = await startRolloutWalk();
}, 120_000);

afterAll(async () => {
  await walk?.stop();
});

describe('A canary through two manual gates on the upstream status schema', { timeout: 180_000 }, () => {
  let openedAt = '';

  it('serves the CRD of infra/crds, whose status keeps unknown fields only at its top level', async () => {
    const served = JSON.parse(await shOk(walk, 'kubectl get crd inferenceservices.ome.io -o json')) as { spec: { versions: Array<{ schema: { openAPIV3Schema: JsonSchema } }> } };
    const [file] = readManifests('crds').get('ome.io_inferenceservices.yaml') ?? [];
    const roots = ['status'];
    const fields = listSchemaFields(served.spec.versions[0]!.schema.openAPIV3Schema, roots);
    expect(fields).toEqual(listSchemaFields((file!.spec as typeof served.spec).versions[0]!.schema.openAPIV3Schema, roots));
    expect(Object.entries(fields).filter(([, descriptor]) => descriptor.includes('preserve')).map(([path]) => path)).toEqual([
      'status',
      'status.components.*.autoscaler',
      'status.components.*.lifecycle',
      'status.components.*.scaleTargetRef',
      'status.components.*.selectedAccelerator',
    ]);
  });

  it('opens a run on a runtime change and waits at the first manual gate', async () => {
    await writeFile(join(walk.workDir, 'gated.yaml'), manifests.map((manifest) => stringify(manifest)).join('---\n'));
    await shOk(walk, 'kubectl apply -f gated.yaml');
    await eventually('the first revision deployed', () => shOk(walk, 'kubectl get deployment gated-engine -n prod -o jsonpath={.status.readyReplicas}').catch(() => ''), (out) => out === '2');
    await shOk(walk, `kubectl patch servingruntime srt -n prod --type=json -p '[{"op":"replace","path":"/spec/engineConfig/runner/args/0","value":"--mem-frac=0.85"}]'`);
    const first = await eventually('the run paused at step 0', gated, atStep(0));
    openedAt = first.status.rollout?.activeRun?.openedAt ?? '';
    expect(openedAt).not.toBe('');
    expect(first.status.canary).toMatchObject({ currentStep: 0, observedTrafficWeight: 50 });
    // The unit's own slot, with status.canary as its alias.
    expect(first.status.components?.engine?.canary).toEqual(first.status.canary);
  });

  it('promotes through the first gate to the 100% step, which is a gate of its own', async () => {
    const promoted = await sh(walk, 'kubectl ome rollout promote gated -n prod --yes');
    expect(promoted.code, promoted.stderr).toBe(0);
    const last = await eventually('the run paused at step 1', gated, atStep(1));
    expect(last.status.canary).toMatchObject({ currentStep: 1, observedTrafficWeight: 100 });
    expect(last.status.canary?.stableRevisionHash).toMatch(/^[0-9a-f]{8}$/);
    // All traffic on the canary is not yet the end: the gate holds the run open.
    expect(last.status.rollout?.activeRun?.openedAt).toBe(openedAt);
    expect(last.status.rollout?.lastRun).toBeUndefined();
  });

  it('promotes through the last gate, and the run closes with an outcome in lastRun', async () => {
    const promoted = await sh(walk, 'kubectl ome rollout promote gated -n prod --yes');
    expect(promoted.code, promoted.stderr).toBe(0);
    const done = await eventually('the run closed', gated, (isvc) => isvc.status.rollout?.lastRun !== undefined);
    expect(done.status.rollout?.lastRun).toMatchObject({ outcome: 'Completed', openedAt });
    expect(done.status.rollout?.activeRun).toBeUndefined();
    expect(done.status.components?.engine?.rolloutPhase).toBe('Stable');
    await eventually('the canary Deployment removed', () => sh(walk, 'kubectl get deployment gated-engine-canary -n prod'), (result) => result.code !== 0);
  });

  it('left nothing for the API server to prune', () => {
    expect(prunedWrites(walk.plane)).toEqual([]);
  });
});
