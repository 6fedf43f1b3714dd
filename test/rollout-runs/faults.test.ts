/**
 * Faults around rollout runs: a repin hint delivered ten times (also after a failed
 * annotation removal) applies once; an edit between preview and apply is rejected; a
 * status write from a read taken before a repin cannot undo it; a RolloutPolicy deleted
 * mid-run leaves the run on its pinned plan; the default blue-green group never leaves
 * DRIFT stuck True.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, ControlPlaneError } from '../../shared/domain/errors';
import { Resources } from '../../shared/domain/model/resources';
import { commitStatus } from '../../shared/use-cases/rollout-runs';
import { removeAnnotationIfUnchanged } from '../../shared/use-cases/rollout-runs/rollout-status';
import { DEFAULT_GROUP_DIGEST, digestPlan } from '../../shared/domain/rollout/digest';
import { Message } from '../../shared/domain/vocabulary';
import {
  activeRunOf,
  advanceUntil,
  annotate,
  condition,
  createPolicy,
  deliverToRepinApply,
  editGroups,
  eventsOf,
  getIsvc,
  manualCanary,
  NAMESPACE,
  observedDigests,
  openRunOn,
  renderEngine,
  requestHint,
  requestRepin,
  startBench,
  type Bench,
} from './harness';

let bench: Bench;
beforeAll(async () => {
  bench = await startBench();
});
afterAll(async () => {
  await bench.stop();
});

const twoSteps = manualCanary([
  { capacity: '25%', traffic: 10 },
  { capacity: '100%', traffic: 100 },
]);
const edited = manualCanary([
  { capacity: '25%', traffic: 5 },
  { capacity: '100%', traffic: 100 },
]);

async function driftedRun(name: string): Promise<string> {
  await openRunOn(bench, name, [twoSteps]);
  await editGroups(bench, name, [edited]);
  const [live = ''] = observedDigests(await advanceUntil(bench, name, () => true));
  bench.clock.tick();
  return digestPlan([live]);
}

/** A typed, retryable failure (a held lease, a conflict): the bus redelivers it. */
function isTypedRetry(error: unknown): boolean {
  return error instanceof ControlPlaneError && error.retryable;
}

describe('repin delivery', () => {
  it('applies once when the hint is delivered ten times at once', async () => {
    const digest = await driftedRun('tenfold');
    const isvc = await annotate(bench, 'tenfold', 'ome.io/rollout-repin', digest);
    const hint = requestHint(isvc, { rolloutRepin: true });
    const before = bench.repins.length;
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => deliverToRepinApply(bench, hint)));
    // A rejection counts as a retry only when it is one the bus redelivers (a retryable
    // typed error, such as a held lease); anything else (a TypeError) is a crash.
    const outcomes = results.map((result) => {
      if (result.status === 'rejected') return isTypedRetry(result.reason) ? 'retry' : `crash: ${String(result.reason)}`;
      return 'repin' in result.value ? result.value.repin?.outcome : 'no repin';
    });
    expect(outcomes.filter((outcome) => outcome === 'applied')).toHaveLength(1);
    expect(outcomes.filter((outcome) => !['applied', 'none', 'duplicate', 'retry'].includes(outcome ?? ''))).toEqual([]);
    expect(bench.repins.slice(before)).toEqual([{ namespace: NAMESPACE, outcome: 'applied' }]);
    const events = await eventsOf(bench, 'tenfold', 'RolloutPlanRepinned');
    expect(events.map((event) => event.count)).toEqual([1]);
  });

  it('applies once when removing the annotation failed and the hint comes again', async () => {
    const digest = await driftedRun('redelivered');
    const isvc = await annotate(bench, 'redelivered', 'ome.io/rollout-repin', digest);
    const hint = requestHint(isvc, { rolloutRepin: true });
    bench.cluster.faults.inject({ verb: 'patch', resource: 'inferenceservices', name: 'redelivered', count: 1, status: 500 });
    await expect(deliverToRepinApply(bench, hint)).rejects.toThrow();
    const pinnedAt = activeRunOf(await getIsvc(bench, 'redelivered')).pinnedAt;
    expect((await getIsvc(bench, 'redelivered')).metadata.annotations?.['ome.io/rollout-repin']).toBe(digest);

    bench.clock.tick(5);
    const again = [];
    for (let delivery = 0; delivery < 9; delivery += 1) again.push(await deliverToRepinApply(bench, hint));
    expect(again[0]).toMatchObject({ repin: { outcome: 'duplicate', annotationRemoved: true } });
    expect(again.slice(1).every((result) => 'repin' in result && result.repin?.outcome === 'none')).toBe(true);
    const after = await getIsvc(bench, 'redelivered');
    expect(activeRunOf(after).pinnedAt).toBe(pinnedAt);
    expect(after.metadata.annotations?.['ome.io/rollout-repin']).toBeUndefined();
    expect(await eventsOf(bench, 'redelivered', 'RolloutPlanRepinned')).toHaveLength(1);
  });

  it('honours the same digest requested again later for a new edit', async () => {
    const digest = await driftedRun('again');
    expect(await requestRepin(bench, 'again', digest)).toMatchObject({ outcome: 'applied' });
    await editGroups(bench, 'again', [twoSteps]);
    await advanceUntil(bench, 'again', () => true);
    bench.clock.tick();
    expect(await requestRepin(bench, 'again', 'now')).toMatchObject({ outcome: 'applied' });
    await editGroups(bench, 'again', [edited]);
    await advanceUntil(bench, 'again', () => true);
    bench.clock.tick();
    expect(await requestRepin(bench, 'again', digest)).toMatchObject({ outcome: 'applied' });
    expect(activeRunOf(await getIsvc(bench, 'again')).plan.groups?.[0]?.group).toEqual(edited);
  });

  it('rejects a repin when an edit lands between the preview and the apply', async () => {
    const previewed = await driftedRun('raced');
    const later = manualCanary([{ capacity: '25%', traffic: 1 }]);
    await editGroups(bench, 'raced', [later]);
    const result = await requestRepin(bench, 'raced', previewed);
    const [fresh = ''] = observedDigests(await advanceUntil(bench, 'raced', () => true));
    expect(result).toMatchObject({ outcome: 'rejected', message: Message.repinStaleDigest(previewed, digestPlan([fresh])), annotationRemoved: true });
    expect(activeRunOf(await getIsvc(bench, 'raced')).plan.groups?.[0]?.group).toEqual(twoSteps);
  });

  it('acts on the value the annotation holds when a late hint arrives, and never removes a newer request', async () => {
    const digest = await driftedRun('replaced');
    const isvc = await annotate(bench, 'replaced', 'ome.io/rollout-repin', digest);
    await annotate(bench, 'replaced', 'ome.io/rollout-repin', 'now');
    const result = await deliverToRepinApply(bench, requestHint(isvc, { rolloutRepin: true }));
    expect(result).toMatchObject({ repin: { outcome: 'applied' } });

    // The removal tests the value it consumed: a request set meanwhile stays for its own hint.
    await annotate(bench, 'replaced', 'ome.io/rollout-repin', 'now');
    expect(await removeAnnotationIfUnchanged(bench.client, isvc, 'ome.io/rollout-repin', digest)).toBe(false);
    expect((await getIsvc(bench, 'replaced')).metadata.annotations?.['ome.io/rollout-repin']).toBe('now');
  });
});

describe('stale status writes', () => {
  it('cannot undo a repin, from a stale read or from a write that carries no version', async () => {
    const digest = await driftedRun('stale');
    const snapshot = await getIsvc(bench, 'stale');
    expect(await requestRepin(bench, 'stale', digest)).toMatchObject({ outcome: 'applied' });

    await expect(commitStatus(bench.client, snapshot, snapshot.status ?? {})).rejects.toBeInstanceOf(ConflictError);
    const unversioned = { ...snapshot, metadata: { ...snapshot.metadata, resourceVersion: undefined } };
    await expect(commitStatus(bench.client, unversioned, snapshot.status ?? {})).rejects.toBeInstanceOf(ConflictError);
    // The pin use-case handing over an ISVC read before the repin: its status write loses too.
    bench.clock.tick();
    await expect(renderEngine(bench, 'stale', 'srt:v9', snapshot)).rejects.toBeInstanceOf(ConflictError);

    const after = await getIsvc(bench, 'stale');
    expect(activeRunOf(after).plan.groups?.[0]?.group).toEqual(edited);
    expect(condition(after, 'RolloutPlanDrift')).toMatchObject({ status: 'False', reason: 'InSync' });
  });
});

describe('plans that stop rendering', () => {
  it('keeps a run on its pinned plan when its RolloutPolicy is deleted mid-run', async () => {
    await createPolicy(bench, 'doomed', { canary: { steps: [{ capacity: '25%', traffic: 10, pause: {} }, { capacity: '100%', traffic: 100 }] } });
    const opened = await openRunOn(bench, 'orphan', [{ components: ['engine'], policyRef: { name: 'doomed', progression: 'canary' } }]);
    const pinned = activeRunOf(opened).plan;
    await advanceUntil(bench, 'orphan', (result) => result.phase === 'Paused');
    await bench.client.delete(Resources.rolloutPolicies, NAMESPACE, 'doomed');
    const result = await deliverToRepinApply(bench, { ...requestHint(opened, {}), kind: 'RolloutPolicy', apiVersion: 'ome.io/v1beta1', name: 'doomed', change: 'modified' });
    expect(result).toEqual({ refreshed: [{ name: 'orphan', result: 'updated' }], policyStatus: 'gone' });

    const isvc = await getIsvc(bench, 'orphan');
    expect(activeRunOf(isvc).plan).toEqual(pinned);
    // RolloutPlanReady stays Pinned for the whole run, as upstream's; the drift says why.
    expect(condition(isvc, 'RolloutPlanReady')).toMatchObject({ status: 'True', reason: 'Pinned', message: `run ${activeRunOf(isvc).runID} pinned` });
    expect(condition(isvc, 'RolloutPlanDrift')).toMatchObject({
      status: 'True',
      reason: 'PolicyNewerThanRun',
      message: Message.planDrift(0, '(unresolvable)', pinned.groups?.[0]?.portableDigest ?? ''),
    });
    // The run goes on with the steps it pinned.
    await annotate(bench, 'orphan', 'ome.io/rollout-promote', isvc.status?.canary?.canaryRevisionHash ?? '');
    const done = await advanceUntil(bench, 'orphan', (step) => step.outcome === 'closed');
    expect(done.status?.rollout?.lastRun?.outcome).toBe('Completed');
  });

  it('never leaves DRIFT stuck True for the default blue-green group', async () => {
    const opened = await openRunOn(bench, 'plain', [{ components: ['engine'] }]);
    expect(activeRunOf(opened).plan.groups?.[0]).toMatchObject({ source: 'Inline', portableDigest: DEFAULT_GROUP_DIGEST, group: { blueGreen: {} } });
    expect(observedDigests(opened)).toEqual([DEFAULT_GROUP_DIGEST]);
    expect(condition(opened, 'RolloutPlanDrift')).toMatchObject({ status: 'False', reason: 'InSync' });

    await editGroups(bench, 'plain', [{ components: ['engine'], blueGreen: {} }]);
    const same = await advanceUntil(bench, 'plain', () => true);
    expect(condition(same, 'RolloutPlanDrift')).toMatchObject({ status: 'False', reason: 'InSync' });
    expect(await requestRepin(bench, 'plain', 'now')).toMatchObject({ outcome: 'discarded' });
    expect(await eventsOf(bench, 'plain', 'RolloutRepinRejected')).toHaveLength(0);
  });
});

describe('schema parity', () => {
  it('left nothing for the API server to prune: every status write fits the CRDs, which mirror upstream OME', () => {
    expect(bench.cluster.prunedWrites()).toEqual([]);
  });
});
