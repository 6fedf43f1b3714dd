/**
 * Fault cases through the repin-apply use-case on the embedded API server: the same key
 * for another payload (17), a redelivery after the request's record expired while its
 * annotation was left behind (18), and a dead-letter redrive three days later (19). Repins
 * are counted from the API server's watch stream: a change of the active run's plan.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyPayloadMismatchError, isRetryable } from '../../shared/domain/errors';
import { Resources } from '../../shared/domain/model/resources';
import type { IdempotencyStore } from '../../shared/ports/store';
import type { RolloutIsvc } from '../../shared/use-cases/rollout-runs/rollout-status';
import { digestPlan } from '../../shared/domain/rollout/digest';
import { hashIdempotencyPayload } from '../../shared/domain/idempotency-rules';
import {
  advanceUntil,
  annotate,
  deliverToRepinApply,
  editGroups,
  getIsvc,
  manualCanary,
  NAMESPACE,
  observedDigests,
  openRunOn,
  requestHint,
  startBench,
  type Bench,
} from '../rollout-runs/harness';

const DAY = 86_400;

let bench: Bench;
/** Every change of an active run's plan the API server saw, as `<isvc>@<runID>`. */
const repins: string[] = [];
const abort = new AbortController();
/** The newest resourceVersion the watch has delivered. */
let seenRv = 0;

beforeAll(async () => {
  bench = await startBench();
  const page = await bench.client.list(Resources.inferenceServices, { namespace: NAMESPACE });
  const plans = new Map<string, string>();
  void bench.client
    .watch<RolloutIsvc>(Resources.inferenceServices, { namespace: NAMESPACE, resourceVersion: page.resourceVersion, signal: abort.signal }, (event) => {
      seenRv = Math.max(seenRv, Number(event.object.metadata.resourceVersion));
      const run = event.object.status?.rollout?.activeRun;
      if (!run) return;
      const key = `${event.object.metadata.name}@${run.runID}`;
      const plan = JSON.stringify(run.plan);
      const before = plans.get(key);
      if (before !== undefined && before !== plan) repins.push(key);
      plans.set(key, plan);
    })
    .catch(() => undefined);
});

afterAll(async () => {
  abort.abort();
  await bench?.stop();
});

const twoSteps = manualCanary([
  { capacity: '25%', traffic: 10 },
  { capacity: '100%', traffic: 100 },
]);
const edited = manualCanary([
  { capacity: '25%', traffic: 5 },
  { capacity: '100%', traffic: 100 },
]);

/** A run whose spec was edited: a repin to the returned digest would move it onto the edit. */
async function driftedRun(name: string): Promise<string> {
  await openRunOn(bench, name, [twoSteps]);
  await editGroups(bench, name, [edited]);
  const [live = ''] = observedDigests(await advanceUntil(bench, name, () => true));
  bench.clock.tick();
  return digestPlan([live]);
}

/** The repins of `name` the watch saw, once it has caught up with the object's latest write. */
async function settled(name: string): Promise<string[]> {
  const rv = Number((await getIsvc(bench, name)).metadata.resourceVersion);
  for (let i = 0; i < 2_000 && seenRv < rv; i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  if (seenRv < rv) throw new Error(`the watch did not reach resourceVersion ${rv}`);
  return repins.filter((key) => key.startsWith(`${name}@`));
}

const outcomeOf = (result: unknown): string => (typeof result === 'object' && result !== null && 'repin' in result ? String((result as { repin?: { outcome?: string } }).repin?.outcome) : 'other');

describe('repin-apply', () => {
  it('turns the same key for another payload into a terminal validation error, and changes nothing (case 17)', async () => {
    // Prepare: the store already holds this request's key, made for another payload.
    const digest = await driftedRun('collide');
    const isvc = await annotate(bench, 'collide', 'ome.io/rollout-repin', digest);
    const real = bench.stores.idempotency;
    const colliding: IdempotencyStore = {
      ...real,
      claim: async (key, options) => {
        await real.claim(key, { ...options, payloadHash: hashIdempotencyPayload({ another: 'request' }) });
        await real.complete(key, { outcome: 'applied' });
        bench.stores.idempotency = real;
        return real.claim(key, options);
      },
      complete: (key, result) => real.complete(key, result),
      abandon: (key, owner) => real.abandon(key, owner),
    };
    bench.stores.idempotency = colliding;

    // Act
    const error = await deliverToRepinApply(bench, requestHint(isvc, { rolloutRepin: true })).then(
      () => undefined,
      (e: unknown) => e,
    );

    // Assess
    bench.stores.idempotency = real;
    expect(error).toBeInstanceOf(IdempotencyPayloadMismatchError);
    expect(isRetryable(error)).toBe(false);
    expect(await settled('collide')).toEqual([]);
  });

  it('does not repin twice when the record expired and a redelivery finds the annotation left behind (case 18)', async () => {
    // Prepare: applied, but removing the annotation failed, so the request still shows.
    const digest = await driftedRun('expired');
    const isvc = await annotate(bench, 'expired', 'ome.io/rollout-repin', digest);
    const hint = requestHint(isvc, { rolloutRepin: true });
    bench.cluster.faults.inject({ verb: 'patch', resource: 'inferenceservices', name: 'expired', count: 1, status: 500 });
    const first = await deliverToRepinApply(bench, hint).then(outcomeOf, () => 'failed');
    expect((await getIsvc(bench, 'expired')).metadata.annotations?.['ome.io/rollout-repin']).toBe(digest);

    // Act: eight days later (the 7-day record is gone), the same hint comes again, twice.
    bench.clock.tick(8 * DAY);
    const again = await Promise.all([1, 2].map(() => deliverToRepinApply(bench, hint).then(outcomeOf, () => 'retry')));

    // Assess: one repin in all.
    expect(first).toBe('failed');
    expect(again.filter((outcome) => outcome === 'applied')).toEqual([]);
    expect(await settled('expired')).toHaveLength(1);
  });

  it('applies a dead-lettered request once when it is redriven three days later (case 19)', async () => {
    // Prepare: the delivery and both retries fail (500 on the status write): dead-lettered.
    const digest = await driftedRun('redriven');
    const isvc = await annotate(bench, 'redriven', 'ome.io/rollout-repin', digest);
    const hint = requestHint(isvc, { rolloutRepin: true });
    bench.cluster.faults.inject({ verb: 'update', resource: 'inferenceservices/status', name: 'redriven', count: 3, status: 500 });
    const failures = [];
    for (let attempt = 0; attempt < 3; attempt += 1) failures.push(await deliverToRepinApply(bench, hint).then(() => undefined, (e: unknown) => e));
    expect(await settled('redriven')).toEqual([]);

    // Act: three days later the queue is redriven with a stray copy; then once more.
    bench.clock.tick(3 * DAY);
    const redriven = await Promise.all([1, 2].map(() => deliverToRepinApply(bench, hint).then(outcomeOf, () => 'retry')));
    const afterRetry = redriven.includes('retry') ? outcomeOf(await deliverToRepinApply(bench, hint)) : 'none';
    const once = outcomeOf(await deliverToRepinApply(bench, hint));

    // Assess
    expect(failures.every((e) => isRetryable(e))).toBe(true);
    expect([...redriven, afterRetry].filter((outcome) => outcome === 'applied')).toHaveLength(1);
    expect(once).not.toBe('applied');
    expect(await settled('redriven')).toHaveLength(1);
    expect((await getIsvc(bench, 'redriven')).metadata.annotations?.['ome.io/rollout-repin']).toBeUndefined();
  });
});
