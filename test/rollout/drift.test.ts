import { describe, expect, it } from 'vitest';
import { buildGroupResolutions, evaluatePlanDrift, evaluatePlanReady, findDriftedGroup } from '../../shared/domain/rollout/drift';
import { declaredKindOf, resolveLivePlan } from '../../shared/domain/rollout/plan';
import { openRun } from '../../shared/domain/rollout/run';
import type { GroupResolutionStatus, PinnedGroup, RolloutGroup, RolloutPolicyView } from '../../shared/domain/rollout/types';
import { manualCanary, NOW, policies, policy } from './fixtures';

const guarded = policy('guarded', { canary: { steps: [{ capacity: '50%', traffic: 20, pause: {} }] } });
const edited = policy('guarded', { canary: { steps: [{ capacity: '25%', traffic: 10, pause: {} }] } }, { generation: 5 });
const viaPolicy: RolloutGroup = { components: ['engine'], policyRef: { name: 'guarded', progression: 'canary' } };

function pinnedRun(groups: RolloutGroup[], views: RolloutPolicyView[] = []) {
  const live = resolveLivePlan(groups, policies(...views));
  if (!live.ok) throw new Error('fixture does not render');
  return openRun({ isvcName: 'chat', targetRevisions: [{ component: 'engine', revision: 'bbbbbbbb' }], plan: live.plan, now: NOW });
}

describe('Function: evaluatePlanDrift', () => {
  it.each<[string, RolloutGroup[], RolloutGroup[], RolloutPolicyView[], RolloutPolicyView[], string, string | RegExp]>([
    ['unchanged', [manualCanary()], [manualCanary()], [], [], 'InSync', /follows the live plan/],
    ['inline steps edited', [manualCanary(10)], [manualCanary(20)], [], [], 'SpecNewerThanRun', /^groups\[0\]: live render rp1:[0-9a-f]{12} differs from pinned rp1:[0-9a-f]{12}; the edit applies at the next run \(or via ome.io\/rollout-repin\)$/],
    ['policy edited', [viaPolicy], [viaPolicy], [guarded], [edited], 'PolicyNewerThanRun', /^groups\[0\]: live render/],
    ['policy deleted', [viaPolicy], [viaPolicy], [guarded], [], 'PolicyNewerThanRun', /live render \(unresolvable\) differs from pinned/],
    // A change in the number of groups reads as upstream's run layer says it, before any group.
    ['group added', [manualCanary()], [manualCanary(), { components: ['router'] }], [], [], 'SpecNewerThanRun', 'spec.rollout group shape changed mid-run; the pinned plan continues until the next run or a repin'],
    [
      'spec.rollout removed',
      [manualCanary()],
      [],
      [],
      [],
      'SpecNewerThanRun',
      'spec.rollout removed mid-run; the pinned plan continues — abort with ome.io/rollout-rollback, or repin to the empty plan with ome.io/rollout-repin',
    ],
    [
      'the canary group removed',
      [{ components: ['router'], blueGreen: {} }, manualCanary()],
      [{ components: ['router'], blueGreen: {} }],
      [],
      [],
      'SpecNewerThanRun',
      'the canary group was removed mid-run; the pinned canary continues — abort with ome.io/rollout-rollback, or repin with ome.io/rollout-repin',
    ],
    ['a blueGreen group removed beside the canary', [manualCanary(), { components: ['router'], blueGreen: {} }], [manualCanary()], [], [], 'SpecNewerThanRun', /^spec.rollout group shape changed mid-run/],
    ['a blueGreen group removed, no canary anywhere', [{ components: ['router'], blueGreen: {} }, { components: ['engine'], blueGreen: {} }], [{ components: ['router'], blueGreen: {} }], [], [], 'SpecNewerThanRun', /^spec.rollout group shape changed mid-run/],
    ['components only', [{ components: ['engine'], blueGreen: {} }], [{ components: ['engine', 'decoder'], blueGreen: {} }], [], [], 'InSync', /follows/],
    ['soak only', [{ components: ['engine'] }], [{ components: ['engine'], soak: '5m' }], [], [], 'InSync', /follows/],
    ['default group vs explicit blueGreen', [{ components: ['engine'] }], [{ components: ['engine'], blueGreen: {} }], [], [], 'InSync', /follows/],
    ['explicit blueGreen vs default group', [{ components: ['engine'], blueGreen: {} }], [{ components: ['engine'] }], [], [], 'InSync', /follows/],
  ])('%s -> %s', (_name, pinnedGroups, liveGroups, pinnedPolicies, livePolicies, reason, message) => {
    const run = pinnedRun(pinnedGroups, pinnedPolicies);
    const resolutions = buildGroupResolutions(resolveLivePlan(liveGroups, policies(...livePolicies)));
    const drift = evaluatePlanDrift(run, resolutions, liveGroups.some((group) => declaredKindOf(group) === 'canary'));
    expect(drift.type).toBe('RolloutPlanDrift');
    expect(drift.reason).toBe(reason);
    expect(drift.status).toBe(reason === 'InSync' ? 'False' : 'True');
    if (typeof message === 'string') expect(drift.message).toBe(message);
    else expect(drift.message).toMatch(message);
  });

  it('never reports a default group as unresolvable', () => {
    const run = pinnedRun([{ components: ['engine'] }, manualCanary()]);
    const resolutions = buildGroupResolutions(resolveLivePlan([{ components: ['engine'] }, manualCanary(30)], policies()));
    expect(evaluatePlanDrift(run, resolutions).message).toMatch(/^groups\[1\]/);
    expect(evaluatePlanDrift(run, resolutions).message).not.toContain('(unresolvable)');
  });

  it('takes the spec for one without a canary group when not told otherwise', () => {
    const run = pinnedRun([manualCanary(), { components: ['router'], blueGreen: {} }]);
    const resolutions = buildGroupResolutions(resolveLivePlan([manualCanary()], policies()));
    expect(evaluatePlanDrift(run, resolutions).message).toMatch(/^the canary group was removed mid-run/);
  });

  it('reads a run pinned without groups as a shape change once the spec has one', () => {
    const run = { ...pinnedRun([manualCanary()]), plan: {} };
    const resolutions = buildGroupResolutions(resolveLivePlan([manualCanary()], policies()));
    expect(evaluatePlanDrift(run, resolutions, true).message).toMatch(/^spec.rollout group shape changed mid-run/);
  });

  it('is InSync without an active run', () => {
    expect(evaluatePlanDrift(undefined, []).reason).toBe('InSync');
  });
});

describe('Function: evaluatePlanReady', () => {
  it.each<[string, boolean, RolloutGroup[], string, string, string | RegExp]>([
    ['active run', true, [manualCanary()], 'True', 'Pinned', /^run chat-[0-9a-f]{12} pinned$/],
    ['no run', false, [manualCanary()], 'True', 'NoActiveRun', 'no rollout in progress'],
    // Upstream keeps Pinned for the whole run; the drift condition reports the live side.
    ['policy missing during a run', true, [viaPolicy], 'True', 'Pinned', /^run chat-[0-9a-f]{12} pinned$/],
    ['policy missing without a run', false, [viaPolicy], 'False', 'PolicyNotFound', 'groups[0]: RolloutPolicy "guarded" not found'],
  ])('%s -> %s/%s', (_name, active, groups, status, reason, message) => {
    const run = active ? pinnedRun([manualCanary()]) : undefined;
    const ready = evaluatePlanReady(run, resolveLivePlan(groups, policies()));
    expect([ready.type, ready.status, ready.reason]).toEqual(['RolloutPlanReady', status, reason]);
    if (typeof message === 'string') expect(ready.message).toBe(message);
    else expect(ready.message).toMatch(message);
  });
});

describe('Function: evaluatePlanReady after a close', () => {
  it.each(['Completed', 'RolledBack'] as const)('names the outcome of the run this write closes (%s)', (outcome) => {
    const ready = evaluatePlanReady(undefined, resolveLivePlan([manualCanary()], policies()), outcome);
    expect(ready).toEqual({ type: 'RolloutPlanReady', status: 'True', reason: 'NoActiveRun', message: `last run closed ${outcome}` });
  });

  it('keeps Pinned while a run is active whatever the close argument says', () => {
    const run = pinnedRun([manualCanary()]);
    expect(evaluatePlanReady(run, resolveLivePlan([viaPolicy], policies()), 'Completed').message).toBe(`run ${run.runID} pinned`);
  });
});

describe('Function: buildGroupResolutions', () => {
  it('reports index, source, policyRef and a digest that is never blank for default groups', () => {
    const shadowing: RolloutGroup = { ...manualCanary(), policyRef: { name: 'guarded', progression: 'canary' } };
    const live = resolveLivePlan([{ components: ['router'] }, viaPolicy, shadowing], policies(guarded));
    const [first, second, third] = buildGroupResolutions(live);
    expect(first).toEqual({ index: 0, source: 'Inline', observedDigest: 'rp1:cca45ec1fb0f' });
    expect(second).toMatchObject({ index: 1, source: 'Policy', policyRef: { name: 'guarded', progression: 'canary' } });
    expect(second?.observedDigest).toMatch(/^rp1:/);
    expect(third).toMatchObject({ index: 2, source: 'Inline', shadowedPolicyRef: { name: 'guarded', wouldPinDigest: second?.observedDigest } });
  });

  it('leaves the digest blank only for a group whose policy does not render', () => {
    const [entry] = buildGroupResolutions(resolveLivePlan([viaPolicy], policies()));
    expect(entry).toEqual({ index: 0, source: 'Policy', policyRef: viaPolicy.policyRef });
  });
});

describe('Function: findDriftedGroup', () => {
  const pinned = (portableDigest: string | undefined, source: 'Inline' | 'Policy' = 'Inline') =>
    ({ source, ...(portableDigest === undefined ? {} : { portableDigest }), group: { components: ['engine'] } }) as PinnedGroup;
  const live = (observedDigest: string | undefined, index = 0, source: 'Inline' | 'Policy' = 'Inline') =>
    ({ index, source, ...(observedDigest === undefined ? {} : { observedDigest }) }) as GroupResolutionStatus;
  it.each<[string, PinnedGroup[], GroupResolutionStatus[], ReturnType<typeof findDriftedGroup>]>([
    ['nothing differs', [pinned('rp1:aaaaaaaaaaaa')], [live('rp1:aaaaaaaaaaaa')], undefined],
    ['no groups on either side', [], [], undefined],
    ['the first group that differs, not a later one', [pinned('rp1:a'), pinned('rp1:b'), pinned('rp1:c')], [live('rp1:a'), live('rp1:x', 1), live('rp1:y', 2)], { index: 1, live: 'rp1:x', pinned: 'rp1:b', source: 'Inline' }],
    ['a live group that does not render', [pinned('rp1:a', 'Policy')], [live(undefined, 0, 'Policy')], { index: 0, live: '(unresolvable)', pinned: 'rp1:a', source: 'Policy' }],
    ['a live group with an empty digest', [pinned('rp1:a')], [live('')], { index: 0, live: '(unresolvable)', pinned: 'rp1:a', source: 'Inline' }],
    ['a group added live', [pinned('rp1:a')], [live('rp1:a'), live('rp1:b', 1, 'Policy')], { index: 1, live: 'rp1:b', pinned: '(none)', source: 'Policy' }],
    ['a group removed live: the pinned source speaks', [pinned('rp1:a'), pinned('rp1:b', 'Policy')], [live('rp1:a')], { index: 1, live: '(none)', pinned: 'rp1:b', source: 'Policy' }],
    ['a pinned group without a digest', [pinned(undefined)], [live('rp1:a')], { index: 0, live: 'rp1:a', pinned: '(none)', source: 'Inline' }],
  ])('%s', (_name, pinnedGroups, resolutions, expected) => {
    expect(findDriftedGroup(pinnedGroups, resolutions)).toEqual(expected);
  });
});
