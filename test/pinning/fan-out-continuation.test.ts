/**
 * A runtime's fan-out across invocations, through the embedded API server: each
 * invocation's budget (a fake remaining time that the writes use up) covers part of the
 * InferenceServices; the fan-out saves its place in the continuation store, enqueues
 * itself, and finishes over several invocations with every object written once, while
 * duplicate continuation hints are dropped and a newer runtime change supersedes it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InferenceService } from '../../shared/domain/model/inference-service';
import { Resources } from '../../shared/domain/model/resources';
import { checkRuntimeDrift, type DriftCheckDeps, type DriftTrigger } from '../../shared/use-cases/pinning/check-runtime-drift';
import { driftWork, planFanOutStart } from '../../shared/use-cases/pinning/check-runtime-drift';
import { ExpiredError } from '../../shared/domain/errors';
import type { ClusterClient } from '../../shared/ports/cluster';
import type { Continuation } from '../../shared/ports/store';
import { MemoryContinuationStore } from '../../shared/adapters/memory';
import { applyRuntime, NS, RUNTIME, seedIsvc, seedRuntime, startPinningWorld, type PinningWorld } from './support';

const COUNT = 23;
let world: PinningWorld;

beforeAll(async () => {
  world = await startPinningWorld();
  await applyRuntime(world.admin, seedRuntime('0.9'));
  for (let i = 0; i < COUNT; i += 1) {
    const name = `isvc-${String(i).padStart(2, '0')}`;
    await world.admin.create(Resources.inferenceServices, seedIsvc(name, { autoSync: false }));
    await world.pin(name);
  }
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

/** Drives the fan-out like the bus: every enqueued hint is delivered `copies` times; returns writes per object. */
async function runToEnd(trigger: DriftTrigger, options: { writesPerInvocation: number; copies: number; store: MemoryContinuationStore; queue?: DriftTrigger[]; stopAfter?: number; beforeResume?: () => void; client?: ClusterClient }) {
  const writes = new Map<string, number>();
  const queue: DriftTrigger[] = [];
  let invocationWrites = 0;
  world.client.onWrite = (verb, type, name) => {
    if (verb !== 'replaceStatus' || type.plural !== 'inferenceservices') return;
    invocationWrites += 1;
    writes.set(name, (writes.get(name) ?? 0) + 1);
  };
  const deps: DriftCheckDeps = {
    ...world.deps,
    ...(options.client ? { client: options.client } : {}),
    pageSize: 5,
    concurrency: 2,
    continuations: options.store,
    timeMarginMs: 0,
    // Each status write uses up one second of a budget of `writesPerInvocation` seconds.
    remainingTimeMs: () => (options.writesPerInvocation - invocationWrites) * 1000,
    continueLater: async (next) => {
      for (let copy = 0; copy < options.copies; copy += 1) queue.push(next);
    },
  };
  const outcomes: string[] = [];
  queue.push(trigger);
  while (queue.length > 0 && outcomes.length < (options.stopAfter ?? Infinity)) {
    invocationWrites = 0;
    if (outcomes.length > 0) options.beforeResume?.();
    const report = await checkRuntimeDrift(deps, queue.shift() as DriftTrigger);
    outcomes.push(report.continuation ?? 'none');
  }
  world.client.onWrite = undefined;
  options.queue?.push(...queue);
  return { writes, outcomes };
}

async function driftReasons(): Promise<string[]> {
  const list = await world.admin.list<InferenceService>(Resources.inferenceServices, { namespace: NS });
  return list.items.map((isvc) => isvc.status?.conditions?.find((c) => c.type === 'RuntimeDrifted')?.reason ?? 'none');
}

describe('drift fan-out across invocations', () => {
  it('completes over several invocations, each InferenceService written exactly once, duplicate continuation hints dropped', async () => {
    await applyRuntime(world.admin, seedRuntime('0.85'));
    const store = new MemoryContinuationStore();
    const trigger: DriftTrigger = { kind: 'ServingRuntime', namespace: NS, name: RUNTIME, change: 'modified' };

    const { writes, outcomes } = await runToEnd(trigger, { writesPerInvocation: 4, copies: 2, store });

    expect(writes.size).toBe(COUNT);
    expect([...writes.values()].every((n) => n === 1)).toBe(true);
    expect(outcomes.filter((o) => o === 'continued').length).toBeGreaterThanOrEqual(Math.floor(COUNT / 4) - 1);
    // Every second copy of a continuation hint was a duplicate.
    expect(outcomes.filter((o) => o === 'dropped').length).toBe(outcomes.filter((o) => o === 'continued').length);
    expect(await driftReasons()).toEqual(Array.from({ length: COUNT }, () => 'RevisionMismatch'));
    expect(await store.loadContinuation('test', driftWork('ServingRuntime', NS, RUNTIME))).toBeUndefined();
  });

  it('a newer runtime change supersedes a saved fan-out, whose continuation hint is then dropped', async () => {
    const store = new MemoryContinuationStore();
    const trigger: DriftTrigger = { kind: 'ServingRuntime', namespace: NS, name: RUNTIME, change: 'modified' };
    // The runtime goes back to what every InferenceService is pinned to: each drift clears, but
    // the first invocation's budget covers only six of them.
    await applyRuntime(world.admin, seedRuntime('0.9'));
    const stale: DriftTrigger[] = [];
    const first = await runToEnd(trigger, { writesPerInvocation: 6, copies: 1, store, queue: stale, stopAfter: 1 });
    expect(first.outcomes).toEqual(['continued']);
    expect(stale).toHaveLength(1);
    const saved = (await store.loadContinuation('test', driftWork('ServingRuntime', NS, RUNTIME))) as Continuation;

    // A newer change arrives before the continuation hint is delivered: it starts over, and
    // only the six the old fan-out cleared need drifting again.
    await applyRuntime(world.admin, seedRuntime('0.85'));
    const newer = await runToEnd(trigger, { writesPerInvocation: 100, copies: 1, store });
    expect(newer.outcomes).toEqual(['started']);
    expect([...newer.writes.keys()].sort()).toEqual([...first.writes.keys()].sort());
    expect(await driftReasons()).toEqual(Array.from({ length: COUNT }, () => 'RevisionMismatch'));

    // The old fan-out's hint resumes nothing and writes nothing.
    world.client.reset();
    const late = await checkRuntimeDrift({ ...world.deps, continuations: store }, stale[0] as DriftTrigger);
    expect(late.continuation).toBe('dropped');
    expect(world.client.count('replaceStatus', 'inferenceservices')).toBe(0);
    expect(saved.version).toBeGreaterThan(0);
  });
});

describe('drift fan-out resumed after its continue token expired', () => {
  it('lists from the start and skips what is done, each InferenceService still written once', async () => {
    await applyRuntime(world.admin, seedRuntime('0.9'));
    const store = new MemoryContinuationStore();
    const trigger: DriftTrigger = { kind: 'ServingRuntime', namespace: NS, name: RUNTIME, change: 'modified' };

    // Every resume's first list with a continue token fails as the adapter maps 410 Gone, as
    // after etcd compacted past the token.
    let expireNext = false;
    let expired = 0;
    const client: ClusterClient = {
      ...world.client,
      list: async (type, listOptions) => {
        if (expireNext && listOptions?.continue !== undefined) {
          expireNext = false;
          expired += 1;
          throw new ExpiredError('continue token expired (410)');
        }
        return world.client.list(type, listOptions);
      },
    };
    const { writes, outcomes } = await runToEnd(trigger, { writesPerInvocation: 7, copies: 1, store, client, beforeResume: () => (expireNext = true) });

    expect(outcomes.filter((o) => o === 'continued').length).toBeGreaterThanOrEqual(2);
    expect(writes.size).toBe(COUNT);
    expect([...writes.values()].every((n) => n === 1)).toBe(true);
    expect(expired).toBe(outcomes.filter((o) => o === 'continued').length);
    expect(await driftReasons()).toEqual(Array.from({ length: COUNT }, () => 'none'));
  });
});

describe('planFanOutStart', () => {
  const stored: Continuation = { clusterId: 'c', work: 'w', subject: 's1', version: 4, updatedAt: 1_000 };
  const at = (now: number) => ({ now, staleAfterMs: 500 });
  it.each([
    ['no record, a fresh hint', { stored: undefined, continuation: undefined, subject: 's1', ...at(1_000) }, 'start'],
    ['no record, a continuation hint (its fan-out finished)', { stored: undefined, continuation: 4, subject: 's1', ...at(1_000) }, 'drop'],
    ['the runtime changed since the record', { stored, continuation: undefined, subject: 's2', ...at(1_000) }, 'start'],
    ['the hint the record enqueued', { stored, continuation: 4, subject: 's1', ...at(1_000) }, 'resume'],
    ['a duplicate of an older step', { stored, continuation: 3, subject: 's1', ...at(1_100) }, 'drop'],
    ['a fresh hint while the record is written to', { stored, continuation: undefined, subject: 's1', ...at(1_100) }, 'drop'],
    ['a fresh hint for a record gone stale', { stored, continuation: undefined, subject: 's1', ...at(1_500) }, 'resume'],
  ])('%s → %s', (_name, input, action) => {
    expect(planFanOutStart(input).action).toBe(action);
  });
});
