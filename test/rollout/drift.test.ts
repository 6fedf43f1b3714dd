import { describe, expect, it } from 'vitest';
import { DEFAULT_GROUP_DIGEST } from '../../shared/rollout/digest';
import { buildGroupResolutions, evaluatePlanDrift, evaluatePlanReady } from '../../shared/rollout/drift';
import { resolveLivePlan } from '../../shared/rollout/plan';
import { openRun } from '../../shared/rollout/run';
import type { RolloutGroup, RolloutPolicyView } from '../../shared/rollout/types';
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
    ['group added', [manualCanary()], [manualCanary(), { components: ['router'] }], [], [], 'SpecNewerThanRun', `groups[1]: live render ${DEFAULT_GROUP_DIGEST} differs from pinned (none); the edit applies at the next run (or via ome.io/rollout-repin)`],
    ['components only', [{ components: ['engine'], blueGreen: {} }], [{ components: ['engine', 'decoder'], blueGreen: {} }], [], [], 'InSync', /follows/],
    ['soak only', [{ components: ['engine'] }], [{ components: ['engine'], soak: '5m' }], [], [], 'InSync', /follows/],
    ['default group vs explicit blueGreen', [{ components: ['engine'] }], [{ components: ['engine'], blueGreen: {} }], [], [], 'InSync', /follows/],
    ['explicit blueGreen vs default group', [{ components: ['engine'], blueGreen: {} }], [{ components: ['engine'] }], [], [], 'InSync', /follows/],
  ])('%s -> %s', (_name, pinnedGroups, liveGroups, pinnedPolicies, livePolicies, reason, message) => {
    const run = pinnedRun(pinnedGroups, pinnedPolicies);
    const resolutions = buildGroupResolutions(resolveLivePlan(liveGroups, policies(...livePolicies)));
    const drift = evaluatePlanDrift(run, resolutions);
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

  it('is InSync without an active run', () => {
    expect(evaluatePlanDrift(undefined, []).reason).toBe('InSync');
  });
});

describe('Function: evaluatePlanReady', () => {
  it.each<[string, boolean, RolloutGroup[], string, string, string | RegExp]>([
    ['active run', true, [manualCanary()], 'True', 'Pinned', /^run chat-[0-9a-f]{12} pinned$/],
    ['no run', false, [manualCanary()], 'True', 'NoActiveRun', /no rollout run/],
    ['policy missing during a run', true, [viaPolicy], 'False', 'PolicyNotFound', 'groups[0]: RolloutPolicy "guarded" not found'],
    ['policy missing without a run', false, [viaPolicy], 'False', 'PolicyNotFound', /not found/],
  ])('%s -> %s/%s', (_name, active, groups, status, reason, message) => {
    const run = active ? pinnedRun([manualCanary()]) : undefined;
    const ready = evaluatePlanReady(run, resolveLivePlan(groups, policies()));
    expect([ready.type, ready.status, ready.reason]).toEqual(['RolloutPlanReady', status, reason]);
    if (typeof message === 'string') expect(ready.message).toBe(message);
    else expect(ready.message).toMatch(message);
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
