/**
 * Parity with upstream's run layer (OP `.../omenative/rolloutrun/rolloutrun.go`@227e4861):
 * RolloutPlanReady stays Pinned for a whole run even when the live plan stops rendering,
 * and the RolloutRunOpened, RolloutRunClosed (superseded), RolloutPlanParked and
 * NoActiveRun texts are upstream's, as are the drift texts and RolloutGroupRemovedMidRun
 * Warning of groups removed mid-run (`updateDrift`, `Reconcile`), through the real
 * use-cases on the embedded API server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '../../shared/domain/model/resources';
import { digestPlan } from '../../shared/domain/rollout/digest';
import {
  activeRunOf,
  advanceUntil,
  condition,
  createIsvc,
  createPolicy,
  eventsOf,
  getIsvc,
  manualCanary,
  NAMESPACE,
  openRunOn,
  renderEngine,
  type Bench,
  startBench,
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

describe('RolloutPlanReady during a run', () => {
  it('stays True/Pinned when the policy behind the live plan disappears mid-run; drift reports it', async () => {
    await createPolicy(bench, 'vanishing', { canary: { steps: [{ capacity: '50%', traffic: 50, pause: {} }, { capacity: '100%', traffic: 100 }] } });
    const opened = await openRunOn(bench, 'vanish', [{ components: ['engine'], policyRef: { name: 'vanishing', progression: 'canary' } }]);
    const run = activeRunOf(opened);
    await bench.client.delete(Resources.rolloutPolicies, NAMESPACE, 'vanishing');
    bench.clock.tick();

    const after = await advanceUntil(bench, 'vanish', () => true);
    expect(condition(after, 'RolloutPlanReady')).toMatchObject({ status: 'True', reason: 'Pinned', message: `run ${run.runID} pinned` });
    expect(condition(after, 'RolloutPlanDrift')).toMatchObject({
      status: 'True',
      reason: 'PolicyNewerThanRun',
      message: `groups[0]: live render (unresolvable) differs from pinned ${run.plan.groups?.[0]?.portableDigest}; the edit applies at the next run (or via ome.io/rollout-repin)`,
    });
  });
});

describe('groups removed mid-run, as upstream\'s run layer reports them', () => {
  it('spec.rollout removed: the pinned plan continues, DRIFT says how to abort, and one RolloutGroupRemovedMidRun Warning', async () => {
    const opened = await openRunOn(bench, 'ungrouped', [twoSteps]);
    const run = activeRunOf(opened);
    await bench.client.patch(Resources.inferenceServices, NAMESPACE, 'ungrouped', { spec: { rollout: null } }, { type: 'merge' });
    bench.clock.tick();
    const after = await advanceUntil(bench, 'ungrouped', () => true);
    await advanceUntil(bench, 'ungrouped', () => true);
    expect(activeRunOf(after).runID).toBe(run.runID);
    expect(condition(after, 'RolloutPlanDrift')).toMatchObject({
      status: 'True',
      reason: 'SpecNewerThanRun',
      message: 'spec.rollout removed mid-run; the pinned plan continues — abort with ome.io/rollout-rollback, or repin to the empty plan with ome.io/rollout-repin',
    });
    // Two passes, one Warning: only the write that turned the condition records it.
    expect(await eventsOf(bench, 'ungrouped', 'RolloutGroupRemovedMidRun')).toEqual([
      expect.objectContaining({
        type: 'Warning',
        message: `spec.rollout was removed while run ${run.runID} is pinned; the run continues on its pinned plan (use ome.io/rollout-rollback or ome.io/rollout-repin to abort)`,
        count: 1,
      }),
    ]);
  });

  it('the canary group removed beside another: DRIFT and the Warning name the canary', async () => {
    const opened = await openRunOn(bench, 'decanaried', [twoSteps, { components: ['router'], blueGreen: {} }]);
    const run = activeRunOf(opened);
    await bench.client.patch(Resources.inferenceServices, NAMESPACE, 'decanaried', { spec: { rollout: { groups: [{ components: ['router'], blueGreen: {} }] } } }, { type: 'merge' });
    bench.clock.tick();
    const after = await advanceUntil(bench, 'decanaried', () => true);
    expect(condition(after, 'RolloutPlanDrift')).toMatchObject({
      status: 'True',
      reason: 'SpecNewerThanRun',
      message: 'the canary group was removed mid-run; the pinned canary continues — abort with ome.io/rollout-rollback, or repin with ome.io/rollout-repin',
    });
    expect(await eventsOf(bench, 'decanaried', 'RolloutGroupRemovedMidRun')).toEqual([
      expect.objectContaining({
        type: 'Warning',
        message: `canary group removed while run ${run.runID} is pinned; deleting the group does not abort a pinned run — use ome.io/rollout-rollback or ome.io/rollout-repin`,
      }),
    ]);
  });
});

describe('event and condition texts', () => {
  it('opens with `run <id> opened (<plan digest>)`', async () => {
    const isvc = await openRunOn(bench, 'texts', [twoSteps]);
    const run = activeRunOf(isvc);
    const digests = (run.plan.groups ?? []).map((group) => group.portableDigest ?? '');
    const opened = await eventsOf(bench, 'texts', 'RolloutRunOpened');
    expect(opened.map((event) => [event.type, event.message])).toEqual([['Normal', `run ${run.runID} opened (${digestPlan(digests)})`]]);
  });

  it('closes a replaced run with upstream\'s superseded text', async () => {
    const first = activeRunOf(await openRunOn(bench, 'replaced', [twoSteps])).runID;
    bench.clock.tick();
    expect(await renderEngine(bench, 'replaced', 'srt:v3')).toBe('run-opened');
    const closed = await eventsOf(bench, 'replaced', 'RolloutRunClosed');
    expect(closed.map((event) => event.message)).toEqual([`run ${first} superseded by a new target revision; opening a fresh run`]);
  });

  it('says `last run closed Completed` in the write that closes a run, and `no rollout in progress` after', async () => {
    await openRunOn(bench, 'closing', [{ components: ['engine'] }]);
    const done = await advanceUntil(bench, 'closing', (result) => result.outcome === 'closed');
    expect(condition(done, 'RolloutPlanReady')).toMatchObject({ status: 'True', reason: 'NoActiveRun', message: 'last run closed Completed' });

    // A later pass with no run restates upstream's idle text.
    bench.clock.tick();
    await bench.client.patch(Resources.inferenceServices, NAMESPACE, 'closing', { spec: { engine: { minReplicas: 5 } } }, { type: 'merge' });
    const idle = await advanceUntil(bench, 'closing', () => true);
    expect(condition(idle, 'RolloutPlanReady')).toMatchObject({ status: 'True', reason: 'NoActiveRun', message: 'no rollout in progress' });
  });

  it('parks with upstream\'s RolloutPlanParked text, one Event however often the new revision is rendered', async () => {
    await createIsvc(bench, 'parked', [{ components: ['engine'], policyRef: { name: 'absent', progression: 'canary' } }]);
    await renderEngine(bench, 'parked', 'srt:v1');
    bench.clock.tick();
    expect(await renderEngine(bench, 'parked', 'srt:v2')).toBe('unchanged');
    bench.clock.tick();
    expect(await renderEngine(bench, 'parked', 'srt:v2')).toBe('unchanged');

    const isvc = await getIsvc(bench, 'parked');
    const message = 'groups[0]: RolloutPolicy "absent" not found';
    expect(condition(isvc, 'RolloutPlanReady')).toMatchObject({ status: 'False', reason: 'PolicyNotFound', message });
    const parked = await eventsOf(bench, 'parked', 'RolloutPlanParked');
    expect(parked).toHaveLength(1);
    expect(parked[0]).toMatchObject({
      type: 'Warning',
      message: `rollout parked (PolicyNotFound): ${message} — the new revision is held, the previous revision keeps serving`,
    });
    expect(parked[0]?.count).toBe(2);
  });
});
