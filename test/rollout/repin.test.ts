import { describe, expect, it } from 'vitest';
import { buildGroupResolutions, evaluatePlanDrift, evaluatePlanReady } from '../../shared/rollout/drift';
import { resolveLivePlan } from '../../shared/rollout/plan';
import { checkRepinRefusal, decideRepin, digestPinnedPlan, fitCanaryToSteps, type RepinCheckInput } from '../../shared/rollout/repin';
import { openRun } from '../../shared/rollout/run';
import type { CanaryState, RolloutGroup, RolloutPolicyRef, RolloutRun, StatusCondition } from '../../shared/rollout/types';
import { manualCanary, NOW, policies, policy } from './fixtures';

const OPENED = new Date('2026-08-31T18:00:00Z');
function pin(groups: RolloutGroup[]): RolloutRun {
  const live = resolveLivePlan(groups, policies());
  if (!live.ok) throw new Error('fixture');
  return openRun({ isvcName: 'chat', targetRevisions: [{ component: 'engine', revision: 'bbbbbbbb', stableRevision: 'aaaaaaaa' }], plan: live.plan, now: OPENED });
}
const canary = (extra: Partial<CanaryState> = {}): CanaryState => ({ canaryRevisionHash: 'bbbbbbbb', currentStep: 0, observedTrafficWeight: 10, ...extra });

describe('Function: fitCanaryToSteps', () => {
  const steps = [{ capacity: '25%', traffic: 10 }, { capacity: '50%', traffic: 40 }];
  it.each<[string, CanaryState, Partial<CanaryState>]>([
    ['keeps its step', canary({ currentStep: 0 }), { currentStep: 0, preStepHold: false }],
    ['clamps to the last step', canary({ currentStep: 5, observedTrafficWeight: 60 }), { currentStep: 1, preStepHold: false }],
    ['holds when the step traffic rises above the recorded weight', canary({ currentStep: 1, observedTrafficWeight: 30 }), { currentStep: 1, preStepHold: true }],
    ['a finished canary stays finished', canary({ currentStep: 4, finished: true }), { currentStep: 4, finished: true }],
  ])('%s', (_name, given, expected) => {
    expect(fitCanaryToSteps(given, steps)).toMatchObject(expected);
  });
});

describe('Function: decideRepin', () => {
  const run = pin([manualCanary(10)]);
  const liveEdited = resolveLivePlan([manualCanary(20)], policies());
  const fresh = liveEdited.ok ? liveEdited.plan.digest : '';
  const decide = (value: string | undefined, live = liveEdited, activeRun: RolloutRun | undefined = run) =>
    decideRepin({ annotationValue: value, run: activeRun, live, canaries: new Map([[0, canary()]]), now: NOW });

  it('does nothing without the annotation', () => {
    expect(decide(undefined)).toEqual({ action: 'none' });
  });

  it.each(['later', 'rp1:ABCDEF012345', 'rp1:1d153db2a5d', '1d153db2a5df', ''])('rejects the malformed value %j', (value) => {
    const decision = decide(value);
    expect(decision).toMatchObject({ action: 'reject', removeAnnotation: true, outcome: 'rejected', event: { type: 'Warning', reason: 'RolloutRepinRejected' } });
    expect(decision.action === 'reject' && decision.event.message).toBe(
      `repin rejected: annotation value "${value}" is neither "now" nor a plan digest (rp1: followed by 12 lowercase hex characters)`,
    );
  });

  it('rejects without an active run', () => {
    const decision = decideRepin({ annotationValue: fresh, run: undefined, live: liveEdited, canaries: new Map(), now: NOW });
    expect(decision).toMatchObject({ action: 'reject', event: { message: 'repin rejected: no active rollout run to repin' } });
  });

  it('rejects a live plan that does not render, naming the reason', () => {
    const broken = resolveLivePlan([{ components: ['engine'], policyRef: { name: 'guarded', progression: 'canary' } }], policies());
    expect(decide('now', broken)).toMatchObject({
      action: 'reject',
      event: { message: 'repin rejected: the current source does not render (PolicyNotFound): groups[0]: RolloutPolicy "guarded" not found' },
    });
  });

  it('drops the annotation silently when the render equals the pinned plan', () => {
    const same = resolveLivePlan([manualCanary(10)], policies());
    expect(decide('now', same)).toEqual({ action: 'discard', removeAnnotation: true });
  });

  it('rejects a digest other than the fresh render', () => {
    expect(decide('rp1:1d153db2a5df')).toMatchObject({
      action: 'reject',
      event: { message: `repin rejected: expected render digest rp1:1d153db2a5df but the current render is ${fresh} (a concurrent edit landed; re-issue with the current digest)` },
    });
  });

  it.each<[string, RolloutGroup[], string]>([
    ['group count', [manualCanary(20), { components: ['router'] }], 'group count 1 -> 2'],
    ['progression kind', [{ components: ['engine'], rollingUpdate: {} }], 'groups[0].progression changed'],
    ['components', [{ ...manualCanary(20), components: ['engine', 'decoder'] }], 'groups[0].components changed'],
  ])('rejects a change of %s', (_name, groups, detail) => {
    expect(decide('now', resolveLivePlan(groups, policies()))).toMatchObject({
      action: 'reject',
      event: { message: `repin rejected: live and pinned rollout topology differ (${detail}); the edit applies at the next run` },
    });
  });

  it.each(['now', 'fresh'])('applies with %s: swaps the plan, keeps identity, fits the canary', (value) => {
    const decision = decide(value === 'fresh' ? fresh : 'now');
    expect(decision.action).toBe('apply');
    if (decision.action !== 'apply' || !liveEdited.ok) return;
    expect(decision.run).toMatchObject({ runID: run.runID, openedAt: run.openedAt, targetRevisions: run.targetRevisions, pinnedAt: '2026-08-31T18:30:00Z' });
    expect(decision.run.plan.groups).toEqual(liveEdited.plan.groups);
    expect(decision.canaries.get(0)).toMatchObject({ currentStep: 0, preStepHold: true });
    expect(decision.event).toEqual({
      type: 'Normal',
      reason: 'RolloutPlanRepinned',
      message: `run ${run.runID} repinned: ${digestPinnedPlan(run)} -> ${fresh}`,
    });
    expect(decision.outcome).toBe('applied');
  });

  it('never moves pinnedAt backwards', () => {
    const future = { ...run, pinnedAt: '2026-09-01T00:00:00Z' };
    const decision = decide('now', liveEdited, future);
    expect(decision.action === 'apply' && decision.run.pinnedAt).toBe('2026-09-01T00:00:00Z');
  });

  it('fits every canary group, not only the first', () => {
    const two = pin([{ ...manualCanary(10), components: ['engine'] }, { ...manualCanary(10), components: ['decoder'] }]);
    const live = resolveLivePlan([{ ...manualCanary(20), components: ['engine'] }, { ...manualCanary(30), components: ['decoder'] }], policies());
    const decision = decideRepin({ annotationValue: 'now', run: two, live, canaries: new Map([[0, canary()], [1, canary()]]), now: NOW });
    expect(decision.action === 'apply' && [...decision.canaries.values()].map((c) => c.preStepHold)).toEqual([true, true]);
  });

  it('applies at most once: the same annotation after the apply is dropped silently', () => {
    const first = decide('now');
    if (first.action !== 'apply') throw new Error('expected apply');
    expect(decide('now', liveEdited, first.run)).toEqual({ action: 'discard', removeAnnotation: true });
  });
});

/** A consistent snapshot of `chat` mid-run after the spec's canary traffic was edited 10 -> 20. */
function snapshot(overrides: Partial<RepinCheckInput> = {}, liveGroups: RolloutGroup[] = [manualCanary(20)], pinnedGroups: RolloutGroup[] = [manualCanary(10)]): RepinCheckInput {
  const run = pin(pinnedGroups);
  const live = resolveLivePlan(liveGroups, policies());
  const groups = buildGroupResolutions(live);
  const stamp = (condition: { type: string; status: 'True' | 'False'; reason: string; message: string }): StatusCondition => ({
    ...condition,
    lastTransitionTime: '2026-08-31T18:10:00Z',
  });
  return {
    annotations: {},
    generation: 3,
    observedGeneration: 3,
    specGroups: liveGroups,
    rollout: { activeRun: run, groups },
    conditions: [stamp(evaluatePlanReady(run, live)), stamp(evaluatePlanDrift(run, groups))],
    now: NOW,
    ...overrides,
  };
}

describe('Function: checkRepinRefusal', () => {
  it('accepts a consistent drifted snapshot and names the digests', () => {
    const input = snapshot();
    const live = resolveLivePlan([manualCanary(20)], policies());
    const run = input.rollout?.activeRun as RolloutRun;
    expect(checkRepinRefusal(input)).toEqual({
      refused: false,
      runID: run.runID,
      pinnedPlanDigest: digestPinnedPlan(run),
      requestedPlanDigest: live.ok ? live.plan.digest : '',
      groupCount: 1,
    });
  });

  it('accepts a default blue-green group beside the edited canary (no stuck drift)', () => {
    const input = snapshot({}, [{ components: ['router'] }, manualCanary(20)], [{ components: ['router'] }, manualCanary(10)]);
    expect(checkRepinRefusal(input).refused).toBe(false);
  });

  it('accepts a policy group using the reported digest when policies are not readable', () => {
    const ref: RolloutPolicyRef = { name: 'guarded', progression: 'canary' };
    const old = policy('guarded', { canary: { steps: [{ capacity: '50%', traffic: 20, pause: {} }] } });
    const edited = policy('guarded', { canary: { steps: [{ capacity: '25%', traffic: 10, pause: {} }] } });
    const pinnedLive = resolveLivePlan([{ components: ['engine'], policyRef: ref }], policies(old));
    const live = resolveLivePlan([{ components: ['engine'], policyRef: ref }], policies(edited));
    if (!pinnedLive.ok || !live.ok) throw new Error('fixture');
    const run = openRun({ isvcName: 'chat', targetRevisions: [], plan: pinnedLive.plan, now: OPENED });
    const groups = buildGroupResolutions(live);
    const drift = evaluatePlanDrift(run, groups);
    expect(drift.reason).toBe('PolicyNewerThanRun');
    const input = snapshot({
      specGroups: [{ components: ['engine'], policyRef: ref }],
      rollout: { activeRun: run, groups },
      conditions: [
        { ...evaluatePlanReady(run, live), lastTransitionTime: '2026-08-31T18:10:00Z' },
        { ...drift, lastTransitionTime: '2026-08-31T18:10:00Z' },
      ],
    });
    expect(checkRepinRefusal(input)).toMatchObject({ refused: false, requestedPlanDigest: live.plan.digest });
    expect(checkRepinRefusal({ ...input, policiesByName: policies(old) })).toEqual({
      refused: true,
      message: 'rollout repin refused: controller plan evidence is missing, stale or inconsistent',
    });
  });

  const base = snapshot();
  const run = base.rollout?.activeRun as RolloutRun;
  const withCondition = (type: string, patch: Partial<StatusCondition>): StatusCondition[] =>
    (base.conditions ?? []).map((c) => (c.type === type ? { ...c, ...patch } : c));
  it.each<[string, RepinCheckInput, string]>([
    ['a repin annotation waits', { ...base, annotations: { 'ome.io/rollout-repin': 'rp1:1d153db2a5df' } }, 'rollout repin refused: a rollout action mailbox is already present'],
    ['a promote annotation waits', { ...base, annotations: { 'ome.io/rollout-promote': 'bbbbbbbb' } }, 'rollout repin refused: a rollout action mailbox is already present'],
    ['a rollback annotation remains', { ...base, annotations: { 'ome.io/rollout-rollback': 'true' }, rollout: {} }, 'rollout repin refused: a rollout action mailbox is already present'],
    ['no active run', { ...base, rollout: { groups: base.rollout?.groups ?? [] } }, 'rollout repin refused: no active pinned run'],
    ['empty live plan', { ...base, specGroups: [] }, 'rollout repin refused: empty live plans are not supported by this command'],
    ['pinned plan is empty', { ...base, rollout: { ...base.rollout, activeRun: { ...run, plan: { groups: [] } } } }, 'rollout repin refused: controller plan evidence is missing, stale or inconsistent'],
    ['topology changed', snapshot({}, [{ ...manualCanary(20), components: ['decoder'] }]), 'rollout repin refused: live and pinned rollout topology differ'],
    ['group added', snapshot({}, [manualCanary(20), { components: ['router'] }]), 'rollout repin refused: live and pinned rollout topology differ'],
    ['two canary groups', snapshot({}, [manualCanary(20), { ...manualCanary(20), components: ['decoder'] }], [manualCanary(10), { ...manualCanary(10), components: ['decoder'] }]), 'rollout repin refused: this command supports at most one canary group'],
    ['observedGeneration behind', { ...base, observedGeneration: 2 }, 'rollout repin refused: controller plan evidence is missing, stale or inconsistent'],
    ['resolution view missing', { ...base, rollout: { activeRun: run } }, 'rollout repin refused: controller plan evidence is missing, stale or inconsistent'],
    ['conditions missing', { ...base, conditions: [] }, 'rollout repin refused: controller plan evidence is missing, stale or inconsistent'],
    ['READY names another run', { ...base, conditions: withCondition('RolloutPlanReady', { message: 'run chat-000000000000 pinned' }) }, 'rollout repin refused: controller plan evidence is missing, stale or inconsistent'],
    ['DRIFT stamped in the future (clock skew)', { ...base, conditions: withCondition('RolloutPlanDrift', { lastTransitionTime: '2026-08-31T19:00:00Z' }) }, 'rollout repin refused: controller plan evidence is missing, stale or inconsistent'],
    ['DRIFT not yet reporting the edit', { ...base, conditions: withCondition('RolloutPlanDrift', { status: 'False', reason: 'InSync', message: '' }) }, 'rollout repin refused: the current plan is already pinned'],
    ['already pinned', snapshot({}, [manualCanary(10)]), 'rollout repin refused: the current plan is already pinned'],
    ['reported digest disagrees with the spec', { ...base, rollout: { ...base.rollout, groups: [{ index: 0, source: 'Inline', observedDigest: 'rp1:000000000000' }] } }, 'rollout repin refused: controller plan evidence is missing, stale or inconsistent'],
    ['DRIFT message stale', { ...base, conditions: withCondition('RolloutPlanDrift', { message: 'groups[0]: something else' }) }, 'rollout repin refused: controller plan evidence is missing, stale or inconsistent'],
    ['DRIFT reason wrong', { ...base, conditions: withCondition('RolloutPlanDrift', { reason: 'PolicyNewerThanRun' }) }, 'rollout repin refused: controller plan evidence is missing, stale or inconsistent'],
  ])('refuses when %s', (_name, input, message) => {
    expect(checkRepinRefusal(input)).toEqual({ refused: true, message });
  });
});
