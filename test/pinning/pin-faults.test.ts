/**
 * Faults around pinning: repeated and reordered hints, reused sync values, many writers
 * at once, injected conflicts and a lease store that is down.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, UnavailableError } from '../../shared/domain/errors';
import { Resources } from '../../shared/domain/model/resources';
import type { Lease, LeaseStore } from '../../shared/ports/store';
import { createDirectWorkloadWriter, pinInferenceService, type PinTarget } from '../../shared/use-cases/pinning';
import { createMemoryStores } from '../../shared/adapters/memory';
import {
  annotateSync,
  applyRuntime,
  CountingClient,
  deliver,
  editIsvc,
  getIsvc,
  NS,
  pinColumns,
  REV_085,
  REV_090,
  revisionNames,
  RUNTIME,
  seedIsvc,
  seedRuntime,
  startPinningWorld,
  warningEvents,
  type PinningWorld,
} from './support';

let world: PinningWorld;
const runtimeChanged = { kind: 'ServingRuntime', namespace: NS, name: RUNTIME, change: 'modified' } as const;

beforeAll(async () => {
  world = await startPinningWorld();
});

afterAll(async () => {
  await world?.stop();
});

beforeEach(async () => {
  await applyRuntime(world.admin, seedRuntime('0.9'));
});

/** A new InferenceService pinned to the seed runtime's current spec. */
async function pinnedIsvc(name: string): Promise<void> {
  await world.admin.create(Resources.inferenceServices, seedIsvc(name));
  await world.pin(name);
}

/** A lease store that records how many workers held the lease of one object at once. */
function countingLeases(keySuffix: string): { store: LeaseStore; maxHolders: () => number } {
  const stores = createMemoryStores();
  let holders = 0;
  let most = 0;
  const store: LeaseStore = {
    async acquire(key, holder, ttl) {
      const lease = await stores.leases.acquire(key, holder, ttl);
      if (lease && key.endsWith(keySuffix)) most = Math.max(most, (holders += 1));
      return lease;
    },
    renew: (lease, ttl) => stores.leases.renew(lease, ttl),
    async release(lease: Lease) {
      if (lease.key.endsWith(keySuffix)) holders -= 1;
      await stores.leases.release(lease);
    },
  };
  return { store, maxHolders: () => most };
}

/** A fixed shuffle (seeded), so a failing order can be replayed. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed;
  const next = () => ((state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32);
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

async function changeRuntime(memFrac: '0.9' | '0.85'): Promise<void> {
  await applyRuntime(world.admin, seedRuntime(memFrac));
  await world.driftCheck(runtimeChanged);
}

describe('ome.io/runtime-sync is at most once', () => {
  it.each([2, 10, 100])('the same hint delivered %i times at once, out of order with older hints, rolls forward once (case 1)', async (copies) => {
    // The older hints are about the InferenceService this one replaced (same name, older uid).
    const name = `dup-${copies}`;
    const replaced = await world.admin.create(Resources.inferenceServices, seedIsvc(name));
    await world.admin.delete(Resources.inferenceServices, NS, name);
    await pinnedIsvc(name);
    const current = await getIsvc(world.admin, name);
    await changeRuntime('0.85');
    await annotateSync(world.admin, name, 'roll-1');
    const currentHint: PinTarget = { namespace: NS, name, uid: current.metadata.uid ?? '' };
    const olderHint: PinTarget = { namespace: NS, name, uid: replaced.metadata.uid ?? '' };
    const hints = shuffled([...Array.from({ length: copies }, () => currentHint), olderHint, olderHint], 0x5eed);
    const lease = countingLeases(`#${name}`);
    world.client.reset();
    // Each delivery is its own worker, so only the lease keeps them from overlapping.
    const results = await Promise.all(
      hints.map((hint, i) => deliver(() => pinInferenceService({ ...world.deps, leases: lease.store, holder: `worker-${i}` }, hint))),
    );
    expect(lease.maxHolders()).toBe(1);
    const byHint = (hint: PinTarget) => results.filter((_, i) => hints[i] === hint);
    expect(byHint(olderHint).map((r) => r.outcome)).toEqual(['gone', 'gone']);
    expect(byHint(currentHint).filter((r) => r.tokenApplied === 'roll-1')).toHaveLength(1);
    expect(byHint(currentHint).every((r) => r.outcome === 'pinned' && r.pinnedRevisionName === REV_085)).toBe(true);
    expect(world.client.count('replaceStatus', 'inferenceservices')).toBe(1);
    expect(world.client.count('replace', 'deployments')).toBe(1);
    expect(await pinColumns(world.admin, name)).toMatchObject({ pinned: REV_085, token: 'roll-1', drifted: '<none>' });
  }, 60_000);

  it('an old value arriving after a newer one does nothing', async () => {
    await pinnedIsvc('old-after-new');
    await changeRuntime('0.85');
    await annotateSync(world.admin, 'old-after-new', 'first');
    await world.pin('old-after-new');
    await changeRuntime('0.9');
    await annotateSync(world.admin, 'old-after-new', 'second');
    await world.pin('old-after-new');
    const settled = await getIsvc(world.admin, 'old-after-new');
    world.client.reset();
    // The late hint of the first value: the object it re-reads holds the second.
    expect(await world.pin('old-after-new')).toMatchObject({ statusWritten: false, workload: 'unchanged' });
    expect(world.client.writes()).toBe(0);
    expect((await getIsvc(world.admin, 'old-after-new')).metadata.resourceVersion).toBe(settled.metadata.resourceVersion);
    expect(await pinColumns(world.admin, 'old-after-new')).toMatchObject({ pinned: REV_090, token: 'second' });
  });

  it('a value set again after another one never fires twice', async () => {
    await pinnedIsvc('reuse');
    await changeRuntime('0.85');
    await annotateSync(world.admin, 'reuse', 'ticket-1');
    expect(await world.pin('reuse')).toMatchObject({ tokenApplied: 'ticket-1', pinnedRevisionName: REV_085 });
    await changeRuntime('0.9');
    await annotateSync(world.admin, 'reuse', 'ticket-2');
    expect(await world.pin('reuse')).toMatchObject({ tokenApplied: 'ticket-2', pinnedRevisionName: REV_090 });
    await changeRuntime('0.85');
    await annotateSync(world.admin, 'reuse', 'ticket-1');
    const result = await world.pin('reuse');
    expect(result).toMatchObject({ tokenAlreadyUsed: 'ticket-1', outcome: 'drifted', drift: 'RevisionMismatch', workload: 'paused' });
    expect(result.tokenApplied).toBeUndefined();
    expect(await pinColumns(world.admin, 'reuse')).toMatchObject({ pinned: REV_090, token: 'ticket-2', reason: 'RevisionMismatch' });
    expect((await warningEvents(world.admin, 'reuse')).map((e) => e.message)).toEqual([
      'ome.io/runtime-sync "ticket-1" already rolled this InferenceService forward once and takes effect only once: set a new value, such as a date or a ticket number, to roll forward',
    ]);
  });
});

describe('concurrency', () => {
  it('50 InferenceServices pinning the same new spec at once create one revision', async () => {
    const spec = seedRuntime('0.9');
    (spec.spec as { engineConfig: { runner: { args: string[] } } }).engineConfig.runner.args.push('--shared-by-fifty');
    await applyRuntime(world.admin, spec);
    const names = Array.from({ length: 50 }, (_, i) => `fifty-${i}`);
    for (const name of names) await world.admin.create(Resources.inferenceServices, seedIsvc(name));
    const before = new Set(await revisionNames(world.admin));
    world.client.reset();
    const results = await Promise.all(names.map((name) => deliver(() => world.pin(name))));
    const created = (await revisionNames(world.admin)).filter((n) => !before.has(n));
    expect(created).toHaveLength(1);
    expect(results.filter((r) => r.revisionCreated)).toHaveLength(1);
    expect(new Set(results.map((r) => r.pinnedRevisionName))).toEqual(new Set(created));
  });

  it('50 concurrent reconciles of one InferenceService converge, one writer at a time', async () => {
    await world.admin.create(Resources.inferenceServices, seedIsvc('hot'));
    const lease = countingLeases('#hot');
    world.client.reset();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => deliver(() => pinInferenceService({ ...world.deps, leases: lease.store, holder: `worker-${i}` }, { namespace: NS, name: 'hot' }))),
    );
    expect(lease.maxHolders()).toBe(1);
    expect(results.every((r) => r.pinnedRevisionName === REV_090)).toBe(true);
    expect(world.client.count('replaceStatus', 'inferenceservices')).toBe(1);
    expect(world.client.count('create', 'deployments')).toBe(1);
  });

  it('50 patchers under leases of their own hit 409s and converge within one delivery each (case 14)', async () => {
    // Prepare: every patcher holds a lease from a store of its own, so nothing but the
    // resourceVersion each status write carries stands between them.
    await world.admin.create(Resources.inferenceServices, seedIsvc('hot-unleased'));
    let conflicts = 0;
    const client = new CountingClient(world.client);
    const replaceStatus = client.replaceStatus;
    client.replaceStatus = (type, object, options) =>
      replaceStatus(type, object, options).catch((error: unknown) => {
        if (error instanceof ConflictError) conflicts += 1;
        throw error;
      });

    // Act: one attempt each, no redelivery: the conflicts are retried inside the call.
    const outcomes = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        pinInferenceService(
          { ...world.deps, client, workloads: createDirectWorkloadWriter(client), leases: createMemoryStores().leases, holder: `patcher-${i}` },
          { namespace: NS, name: 'hot-unleased' },
        ),
      ),
    );

    // Assess: real 409s, each patcher done, one status write stood, retries bounded.
    const rejected = outcomes.filter((o) => o.status === 'rejected');
    expect(rejected).toEqual([]);
    expect(conflicts).toBeGreaterThan(0);
    expect(client.count('replaceStatus', 'inferenceservices') - conflicts).toBe(1);
    expect(client.count('replaceStatus', 'inferenceservices')).toBeLessThanOrEqual(50 * (world.deps.config.maxConflictRetries + 1));
    const results = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    expect(results.filter((r) => r.statusWritten)).toHaveLength(1);
    expect(results.every((r) => r.pinnedRevisionName === REV_090)).toBe(true);
    expect(await pinColumns(world.admin, 'hot-unleased')).toMatchObject({ pinned: REV_090, drifted: '<none>' });
  }, 60_000);

  it('injected 409s on status writes are retried within the delivery', async () => {
    await world.admin.create(Resources.inferenceServices, seedIsvc('conflicted'));
    world.cluster.faults.inject({ verb: 'update', resource: 'inferenceservices/status', name: 'conflicted', count: 3, status: 409 });
    world.client.reset();
    expect(await world.pin('conflicted')).toMatchObject({ pinnedRevisionName: REV_090, statusWritten: true });
    expect(world.client.count('replaceStatus', 'inferenceservices')).toBe(4);
    expect(world.cluster.faults.pending()).toBe(0);
  });

  it('a conflict during a roll forward gives the sync value back, and the retry applies it', async () => {
    await pinnedIsvc('roll-conflict');
    await changeRuntime('0.85');
    await annotateSync(world.admin, 'roll-conflict', 'after-conflict');
    world.cluster.faults.inject({ verb: 'update', resource: 'inferenceservices/status', name: 'roll-conflict', count: 6, status: 409 });
    await expect(world.pin('roll-conflict')).rejects.toMatchObject({ retryable: true });
    expect(await pinColumns(world.admin, 'roll-conflict')).toMatchObject({ pinned: REV_090, reason: 'RevisionMismatch' });
    expect(await world.pin('roll-conflict')).toMatchObject({ tokenApplied: 'after-conflict', pinnedRevisionName: REV_085 });
  });
});

describe('garbage collection racing a rollback', () => {
  it('takes a marked revision back before pinning it, so the collector\'s preconditioned delete fails', async () => {
    await pinnedIsvc('rollback-gc');
    await changeRuntime('0.85');
    await annotateSync(world.admin, 'rollback-gc', 'to-085');
    await world.pin('rollback-gc');
    // The collector marks the 0.9 revision and plans to delete it at that version.
    const marked = await world.admin.patch(Resources.controllerRevisions, 'ome', REV_090, { metadata: { annotations: { 'ome.io/gc-eligible-since': '2020-01-01T00:00:00Z' } } }, { type: 'merge' });
    await editIsvc(world.admin, 'rollback-gc', (isvc) => {
      isvc.spec.runtime = { name: RUNTIME, kind: 'ServingRuntime', autoSync: false, revision: REV_090 };
    });
    expect(await world.pin('rollback-gc')).toMatchObject({ pinnedRevisionName: REV_090 });
    const revision = await world.admin.get(Resources.controllerRevisions, 'ome', REV_090);
    expect(revision.metadata.annotations?.['ome.io/gc-eligible-since']).toBeUndefined();
    expect(revision.data).toEqual(marked.data);
    await expect(world.admin.delete(Resources.controllerRevisions, 'ome', REV_090, { preconditions: { resourceVersion: marked.metadata.resourceVersion ?? '' } })).rejects.toBeInstanceOf(ConflictError);
    expect(await revisionNames(world.admin)).toContain(REV_090);
  });
});

describe('the lease store is down', () => {
  it('fails retryably and writes nothing to Kubernetes', async () => {
    await world.admin.create(Resources.inferenceServices, seedIsvc('no-lease'));
    const down: LeaseStore = {
      acquire: () => Promise.reject(new UnavailableError('DynamoDB unreachable')),
      renew: () => Promise.reject(new UnavailableError('DynamoDB unreachable')),
      release: () => Promise.reject(new UnavailableError('DynamoDB unreachable')),
    };
    world.client.reset();
    await expect(pinInferenceService({ ...world.deps, leases: down }, { namespace: NS, name: 'no-lease' })).rejects.toMatchObject({ retryable: true });
    expect(world.client.writes()).toBe(0);
    expect((await getIsvc(world.admin, 'no-lease')).status?.pinnedRevisionName).toBeUndefined();
  });
});
