/**
 * The drift fan-out's reach: cluster runtimes across namespaces, namespaced runtimes in
 * theirs only, children through inheritance, pagination, and what it hands to the pin
 * use-case.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InferenceService } from '../../shared/domain/model/inference-service';
import { Resources } from '../../shared/domain/model/resources';
import { checkRuntimeDrift } from '../../shared/use-cases/pinning';
import { decidePin, type PinInput } from '../../shared/domain/runtime';
import { buildSeedRuntimeSpec } from '../runtime/fixtures/seed-runtime';
import { applyRuntime, engineView, NS, seedRuntime, startPinningWorld, type PinningWorld } from './support';

let world: PinningWorld;
const OTHER_NS = 'team-b';

function clusterRuntime(name: string, memFrac: '0.9' | '0.85', annotations?: Record<string, string>) {
  return { apiVersion: 'ome.io/v1beta1', kind: 'ClusterServingRuntime', metadata: { name, ...(annotations ? { annotations } : {}) }, spec: buildSeedRuntimeSpec(memFrac) };
}

function isvc(name: string, namespace: string, runtime: InferenceService['spec']['runtime']): InferenceService {
  return { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', metadata: { name, namespace }, spec: { model: { name: 'm' }, runtime, engine: { minReplicas: 1 } } };
}

async function createAndPin(object: InferenceService): Promise<void> {
  await world.admin.create(Resources.inferenceServices, object);
  await world.pin(object.metadata.name, object.metadata.namespace);
}

beforeAll(async () => {
  world = await startPinningWorld();
  await world.admin.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OTHER_NS } });
  await applyRuntime(world.admin, clusterRuntime('shared', '0.9'));
  // The child sets only its size range: its args come from the parent.
  await applyRuntime(world.admin, {
    ...seedRuntime('0.9', { name: 'local-child', annotations: { 'ome.io/inherit-from': 'shared' } }),
    spec: { modelSizeRange: { min: '1B', max: '8B' } },
  });
  for (let i = 0; i < 7; i += 1) await createAndPin(isvc(`csr-${i}`, i % 2 === 0 ? NS : OTHER_NS, { name: 'shared', autoSync: false }));
  await createAndPin(isvc('child', NS, { name: 'local-child', kind: 'ServingRuntime', autoSync: false }));
  await createAndPin(isvc('follower', NS, { name: 'shared', autoSync: true }));
  await world.admin.create(Resources.inferenceServices, isvc('unrelated', NS, { name: 'other', autoSync: false }));
});

afterAll(async () => {
  await world?.stop();
});

describe('checkRuntimeDrift', () => {
  it('reaches every namespace for a ClusterServingRuntime, children through inheritance, page by page', async () => {
    await applyRuntime(world.admin, clusterRuntime('shared', '0.85'));
    world.client.reset();
    const report = await checkRuntimeDrift({ ...world.deps, pageSize: 3, concurrency: 4 }, { kind: 'ClusterServingRuntime', name: 'shared', change: 'modified' });
    expect(report).toMatchObject({ scope: 'runtime', evaluated: 9, statusWrites: 8, pinned: 1, failed: 0 });
    expect(world.client.count('list', 'inferenceservices')).toBeGreaterThan(3);
    // Runtimes are listed, not read one by one; what is read singly is the follower's pin
    // (one ClusterServingRuntime) and the fence after the writes: once each runtime the
    // conditions were judged from, the child's miss of a same-namespace parent included.
    expect(world.client.count('get', 'clusterservingruntimes')).toBe(2);
    expect(world.client.count('get', 'servingruntimes')).toBe(2);
  });

  it('drifted the InferenceServices of both namespaces and the child runtime', async () => {
    const read = async (name: string, namespace: string) =>
      (await world.admin.get<InferenceService>(Resources.inferenceServices, namespace, name)).status?.conditions?.find((c) => c.type === 'RuntimeDrifted')?.reason;
    for (let i = 0; i < 7; i += 1) expect(await read(`csr-${i}`, i % 2 === 0 ? NS : OTHER_NS)).toBe('RevisionMismatch');
    expect(await read('child', NS)).toBe('RevisionMismatch');
  });

  it('re-renders InferenceServices that follow the live runtime', async () => {
    expect(await engineView(world.admin, 'follower')).toMatchObject({ renderedFrom: 'live', args: expect.arrayContaining(['--mem-frac=0.85']) });
  });

  it('a second fan-out for the same change writes nothing', async () => {
    world.client.reset();
    const report = await checkRuntimeDrift(world.deps, { kind: 'ClusterServingRuntime', name: 'shared', change: 'modified' });
    expect(report.statusWrites).toBe(0);
    expect(world.client.count('replaceStatus', 'inferenceservices')).toBe(0);
  });

  it('a ServingRuntime reaches only its namespace', async () => {
    world.client.reset();
    await checkRuntimeDrift(world.deps, { kind: 'ServingRuntime', namespace: OTHER_NS, name: 'local-child', change: 'modified' });
    expect(world.client.count('list', 'inferenceservices')).toBe(1);
    const report = await checkRuntimeDrift(world.deps, { kind: 'ServingRuntime', namespace: NS, name: 'local-child', change: 'modified' });
    expect(report).toMatchObject({ evaluated: 1, statusWrites: 0 });
  });

  it('leaves InferenceService hints to the pin function', async () => {
    world.client.reset();
    expect(await checkRuntimeDrift(world.deps, { kind: 'InferenceService', namespace: NS, name: 'csr-0', change: 'modified' })).toMatchObject({ scope: 'ignored', evaluated: 0 });
    expect(world.client.counts.size).toBe(0);
  });
});

describe('sharing decisions in a fan-out', () => {
  it('decidePin does not read the InferenceService name, so objects pinned alike can share one decision', () => {
    const base: PinInput = {
      isvc: { namespace: NS, name: 'a', runtime: { name: 'rt', kind: 'ServingRuntime', autoSync: false }, pinnedRevisionName: 'r-llama-demo-rt-00000000', syncToken: 't' },
      live: { status: 'found', spec: { containers: null } },
      lookupRevision: (name) => (name === 'r-llama-demo-rt-00000000' ? { labels: { 'ome.io/runtime-of': 'rt' }, data: { containers: [] } } : undefined),
      omeNamespace: 'ome',
    };
    expect(decidePin({ ...base, isvc: { ...base.isvc, name: 'b' } })).toEqual(decidePin(base));
  });
});
