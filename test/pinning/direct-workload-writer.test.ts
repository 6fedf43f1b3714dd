/** The direct engine workload writer against the embedded cluster's defaulting API server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InferenceService } from '../../shared/domain/model/inference-service';
import { Resources } from '../../shared/domain/model/resources';
import { containsRendered, createDirectWorkloadWriter, RENDERED_HASH_ANNOTATION } from '../../shared/use-cases/pinning';
import type { KubeObject } from '../../shared/ports/cluster';
import { normalizeRuntimeSpec, renderEngineDeployment } from '../../shared/domain/runtime';
import { buildSeedRuntimeSpec } from '../runtime/fixtures/seed-runtime';
import { NS, seedIsvc, startPinningWorld, type PinningWorld } from './support';

let world: PinningWorld;
let isvc: InferenceService;

function render(memFrac: '0.9' | '0.85', minReplicas = 1): KubeObject {
  return renderEngineDeployment({
    isvc: { namespace: NS, name: isvc.metadata.name, uid: isvc.metadata.uid, engine: { minReplicas } },
    runtimeName: 'rt',
    spec: normalizeRuntimeSpec(buildSeedRuntimeSpec(memFrac)),
    revisionName: `rev-${memFrac}`,
  });
}

beforeAll(async () => {
  world = await startPinningWorld();
  isvc = await world.admin.create(Resources.inferenceServices, seedIsvc('writer'));
});

afterAll(async () => {
  await world?.stop();
});

describe('createDirectWorkloadWriter', () => {
  const apply = (desired: KubeObject) => createDirectWorkloadWriter(world.client).apply({ clusterId: 'test', isvc, desired, renderedFrom: 'x' });
  const read = () => world.admin.get(Resources.deployments, NS, 'writer-engine');

  it('creates the Deployment, owned by the InferenceService', async () => {
    expect(await apply(render('0.9'))).toBe('created');
    expect((await read()).metadata.ownerReferences).toEqual([{ apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', name: 'writer', uid: isvc.metadata.uid, controller: true }]);
  });

  it('writes nothing for the same render, although the server added defaults', async () => {
    world.client.reset();
    expect(await apply(render('0.9'))).toBe('unchanged');
    expect(world.client.writes()).toBe(0);
  });

  it('replaces it when the render changes, keeping annotations others set', async () => {
    const current = await read();
    await world.admin.replace(Resources.deployments, { ...current, metadata: { ...current.metadata, annotations: { ...current.metadata.annotations, 'team.example/owner': 'ml' } } });
    expect(await apply(render('0.85', 3))).toBe('updated');
    const updated = await read();
    expect(updated.metadata.annotations).toMatchObject({ 'team.example/owner': 'ml', 'ome.io/rendered-from': 'rev-0.85', [RENDERED_HASH_ANNOTATION]: expect.any(String) });
    expect(updated.spec).toMatchObject({ replicas: 3 });
  });

  it('restores a hand-edited spec on the next apply', async () => {
    const current = await read();
    await world.admin.replace(Resources.deployments, { ...current, spec: { ...(current.spec as object), replicas: 7 } });
    expect(await apply(render('0.85', 3))).toBe('updated');
    expect((await read()).spec).toMatchObject({ replicas: 3 });
  });

  it.each([
    [{ a: 1, b: { c: [1, 2] }, extra: true }, { a: 1, b: { c: [1, 2] } }, true],
    [{ a: 1 }, { a: 2 }, false],
    [{ l: [1, 2, 3] }, { l: [1, 2] }, false],
    [{ l: [{ x: 1, d: 'default' }] }, { l: [{ x: 1 }] }, true],
  ])('containsRendered(%j, %j) is %s', (actual, wanted, expected) => {
    expect(containsRendered(actual, wanted)).toBe(expected);
  });
});
