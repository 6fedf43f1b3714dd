/**
 * `spec.runtime.revision` naming a revision of a same-named runtime of another namespace or
 * kind, through the pin use-case on the embedded cluster (no webhook in front, as when it
 * is bypassed or down): RuntimeMismatch with a message naming both, and nothing rolled out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '../../shared/domain/model/resources';
import { applyRuntimeSpecDefaults } from '../../shared/domain/runtime/defaults';
import { normalizeGoJson } from '../../shared/domain/runtime/go-json';
import { buildControllerRevision } from '../../shared/domain/runtime/revision';
import { buildSeedRuntimeSpec } from '../runtime/fixtures/seed-runtime';
import { applyRuntime, editIsvc, engineView, getIsvc, NS, pinColumns, REV_090, RUNTIME, revisionNames, seedIsvc, seedRuntime, startPinningWorld, type PinningWorld } from '../pinning/support';

let world: PinningWorld;
const spec085 = normalizeGoJson(applyRuntimeSpecDefaults(buildSeedRuntimeSpec('0.85')));
const otherNamespace = buildControllerRevision({ kind: 'ServingRuntime', namespace: 'team-b', runtimeName: RUNTIME, mergedSpec: spec085, omeNamespace: 'ome' });
const clusterScoped = buildControllerRevision({ kind: 'ClusterServingRuntime', namespace: NS, runtimeName: RUNTIME, mergedSpec: spec085, omeNamespace: 'ome' });

beforeAll(async () => {
  world = await startPinningWorld();
  await applyRuntime(world.admin, seedRuntime('0.9'));
  await world.admin.create(Resources.controllerRevisions, otherNamespace);
  await world.admin.create(Resources.controllerRevisions, clusterScoped);
  await world.admin.create(Resources.inferenceServices, seedIsvc('scoped'));
  await world.pin('scoped');
});

afterAll(async () => {
  await world?.stop();
});

describe('an explicit revision of a same-named runtime elsewhere', () => {
  it.each([
    [otherNamespace.metadata.name, `(ServingRuntime in namespace "team-b") but ISVC references "${RUNTIME}" (ServingRuntime in namespace "llama-demo")`],
    [clusterScoped.metadata.name, `(ClusterServingRuntime, cluster-scoped) but ISVC references "${RUNTIME}" (ServingRuntime in namespace "llama-demo")`],
  ])('%s: RuntimeMismatch, the workload and the pin untouched', async (revision, detail) => {
    const engineBefore = await engineView(world.admin, 'scoped');
    const revisionsBefore = await revisionNames(world.admin);
    expect(engineBefore?.renderedFrom).toBe(REV_090);
    await editIsvc(world.admin, 'scoped', (isvc) => {
      isvc.spec.runtime = { ...isvc.spec.runtime, name: RUNTIME, revision };
    });

    expect(await world.pin('scoped')).toMatchObject({ outcome: 'drifted', drift: 'RuntimeMismatch', workload: 'paused' });
    expect(await pinColumns(world.admin, 'scoped')).toMatchObject({
      pinned: REV_090,
      drifted: 'True',
      reason: 'RuntimeMismatch',
      message: `revision ${revision} belongs to runtime "${RUNTIME}" ${detail}`,
    });
    expect(await engineView(world.admin, 'scoped')).toEqual(engineBefore);
    expect(await revisionNames(world.admin)).toEqual(revisionsBefore);
  });

  it('its own revision is served again once named', async () => {
    await editIsvc(world.admin, 'scoped', (isvc) => {
      isvc.spec.runtime = { ...isvc.spec.runtime, name: RUNTIME, revision: REV_090 };
    });
    expect(await world.pin('scoped')).toMatchObject({ outcome: 'pinned', pinnedRevisionName: REV_090 });
    expect((await getIsvc(world.admin, 'scoped')).status?.conditions ?? []).toEqual([]);
  });
});
