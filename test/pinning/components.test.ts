/**
 * The pin use-case renders every component the InferenceService has and the runtime
 * configures: the decoder and router Deployments beside the engine's, named as upstream
 * names them, each from the pinned revision's config block.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Resources } from '../../shared/domain/model/resources';
import type { KubeObject } from '../../shared/ports/cluster';
import { applyRuntime, editIsvc, ISVC, NS, seedIsvc, seedRuntime, startPinningWorld, type PinningWorld } from './support';

let world: PinningWorld;
beforeEach(async () => {
  world = await startPinningWorld();
  const runtime = seedRuntime('0.9');
  runtime.spec = { ...(runtime.spec as object), decoderConfig: { runner: { name: 'decoder', image: 'decode:v1' } } };
  await applyRuntime(world.admin, runtime);
});
afterEach(async () => {
  await world.stop();
});

async function imageOf(name: string): Promise<string | undefined> {
  const deployment = await world.admin.get<KubeObject & { spec?: { template?: { spec?: { containers?: { image?: string }[] } } } }>(Resources.deployments, NS, name).catch(() => undefined);
  return deployment?.spec?.template?.spec?.containers?.[0]?.image;
}

describe('pinning an InferenceService with a decoder', () => {
  it('renders <isvc>-decoder from the runtime decoderConfig, and no router the runtime does not configure', async () => {
    const isvc = seedIsvc();
    isvc.spec.decoder = { minReplicas: 2 };
    isvc.spec.router = { minReplicas: 1 };
    await world.admin.create(Resources.inferenceServices, isvc);
    await world.pin(ISVC);

    expect(await imageOf(`${ISVC}-engine`)).toBeDefined();
    expect(await imageOf(`${ISVC}-decoder`)).toBe('decode:v1');
    expect(await imageOf(`${ISVC}-router`)).toBeUndefined();
  });

  it('renders no decoder for an InferenceService without one', async () => {
    await world.admin.create(Resources.inferenceServices, seedIsvc());
    await world.pin(ISVC);
    expect(await imageOf(`${ISVC}-engine`)).toBeDefined();
    expect(await imageOf(`${ISVC}-decoder`)).toBeUndefined();
    // Adding the component later renders it on the next pin.
    await editIsvc(world.admin, ISVC, (edited) => {
      edited.spec.decoder = { minReplicas: 1 };
    });
    await world.pin(ISVC);
    expect(await imageOf(`${ISVC}-decoder`)).toBe('decode:v1');
  });
});
