/**
 * The drift fan-out writes `RuntimeDrifted` without a lease; what keeps a slow fan-out
 * from leaving a stale condition is the fence after its writes (check-runtime-drift.ts,
 * `fenceWrites`). The race it closes: a fan-out judges the runtime, pauses before its
 * write, the runtime changes back, and the change's own fan-out judges the object before
 * the paused write lands, finds nothing to write and ends. Without the fence the paused
 * write is the last word until the runtime changes again or the next resync relists it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InferenceService } from '../../shared/domain/model/inference-service';
import { Resources } from '../../shared/domain/model/resources';
import type { ClusterClient } from '../../shared/ports/cluster';
import type { LeaseStore } from '../../shared/ports/store';
import { createMemoryStores } from '../../shared/adapters/memory';
import { systemClock } from '../../shared/ports/clock';
import { checkRuntimeDrift } from '../../shared/use-cases/pinning';
import { buildSeedRuntimeSpec } from '../runtime/fixtures/seed-runtime';
import { applyRuntime, NS, startPinningWorld, type PinningWorld } from './support';

let world: PinningWorld;
let leaseAcquires = 0;

const RUNTIME = 'fenced-rt';
const TRIGGER = { kind: 'ClusterServingRuntime', name: RUNTIME, change: 'modified' } as const;

function clusterRuntime(memFrac: '0.9' | '0.85') {
  return { apiVersion: 'ome.io/v1beta1', kind: 'ClusterServingRuntime', metadata: { name: RUNTIME }, spec: buildSeedRuntimeSpec(memFrac) };
}

/** Counts lease acquisitions, so a test can tell the fan-out took none. */
function countingLeases(inner: LeaseStore): LeaseStore {
  return new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (property === 'acquire' || property === 'tryAcquire') leaseAcquires += 1;
        return value.apply(target, args);
      };
    },
  });
}

/** The client, with its first status write held until `resume` is called. */
function pausedBeforeFirstStatusWrite(client: ClusterClient): { client: ClusterClient; reached: Promise<void>; resume: () => void } {
  let reach!: () => void;
  let resume!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const resumed = new Promise<void>((resolve) => (resume = resolve));
  let paused = false;
  const gated = new Proxy(client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== 'replaceStatus' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
      return async (...args: unknown[]) => {
        if (!paused) {
          paused = true;
          reach();
          await resumed;
        }
        return value.apply(target, args);
      };
    },
  });
  return { client: gated, reached, resume };
}

async function drifted(): Promise<string | undefined> {
  const isvc = await world.admin.get<InferenceService>(Resources.inferenceServices, NS, 'fenced');
  const condition = isvc.status?.conditions?.find((c) => c.type === 'RuntimeDrifted');
  return condition === undefined ? undefined : `${condition.status} ${condition.reason ?? ''}`.trim();
}

beforeAll(async () => {
  // Conditions only: with workloads rendered, a drift that ends hands the object to pin.
  world = await startPinningWorld({ renderWorkloads: false, leases: countingLeases(createMemoryStores(systemClock).leases) });
  await applyRuntime(world.admin, clusterRuntime('0.9'));
  await world.admin.create(Resources.inferenceServices, {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name: 'fenced', namespace: NS },
    spec: { model: { name: 'm' }, runtime: { name: RUNTIME, autoSync: false }, engine: { minReplicas: 1 } },
  });
  await world.pin('fenced');
});

afterAll(async () => {
  await world?.stop();
});

describe('the drift fan-out', () => {
  it('takes no lease for a condition it writes', async () => {
    const before = await drifted();
    await applyRuntime(world.admin, clusterRuntime('0.85'));
    leaseAcquires = 0;
    const report = await checkRuntimeDrift(world.deps, TRIGGER);
    expect(report).toMatchObject({ statusWrites: 1, rejudged: 0, failed: 0 });
    expect(await drifted()).not.toBe(before);
    expect(leaseAcquires).toBe(0);
    // Back to where it started, for the next test.
    await applyRuntime(world.admin, clusterRuntime('0.9'));
    expect(await checkRuntimeDrift(world.deps, TRIGGER)).toMatchObject({ statusWrites: 1 });
    expect(await drifted()).toBe(before);
  });

  it('judges again what it wrote when a runtime it judged from changed before the write landed, so no stale condition is left', async () => {
    const settled = await drifted();
    // The runtime drifts; a fan-out judges it and pauses before its write.
    await applyRuntime(world.admin, clusterRuntime('0.85'));
    const gate = pausedBeforeFirstStatusWrite(world.client);
    const slow = checkRuntimeDrift({ ...world.deps, client: gate.client }, TRIGGER);
    await gate.reached;

    // The runtime goes back; its fan-out sees the condition still right and writes nothing.
    await applyRuntime(world.admin, clusterRuntime('0.9'));
    expect(await checkRuntimeDrift(world.deps, TRIGGER)).toMatchObject({ evaluated: 1, statusWrites: 0 });

    // The paused write lands, judged from the runtime that is gone; the fence reads the
    // runtime again, finds it changed, and judges the object again.
    gate.resume();
    const report = await slow;
    expect(await drifted()).toBe(settled);
    expect(report).toMatchObject({ statusWrites: 2, rejudged: 1, failed: 0 });
  });
});
