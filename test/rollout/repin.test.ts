import { describe, expect, it } from 'vitest';
import { buildGroupResolutions, evaluatePlanDrift, evaluatePlanReady } from '../../shared/domain/rollout/drift';
import { digestPlan } from '../../shared/domain/rollout/digest';
import { resolveLivePlan } from '../../shared/domain/rollout/plan';
import { checkRepinRefusal, decideRepin, digestPinnedPlan, fitCanaryToSteps, type RepinCheckInput } from '../../shared/domain/rollout/repin';
import { openRun } from '../../shared/domain/rollout/run';
import type { CanaryState, GroupResolutionStatus, PinnedGroup, RolloutGroup, RolloutPolicyRef, RolloutRun, StatusCondition } from '../../shared/domain/rollout/types';
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
    ['a finished canary (one past its 4 pinned steps) stays finished, one past the new last step', canary({ currentStep: 4, observedTrafficWeight: 100 }), { currentStep: 2, observedTrafficWeight: 100 }],
    ['a negative step is clamped to the first', canary({ currentStep: -2, observedTrafficWeight: 10 }), { currentStep: 0, preStepHold: false }],
    ['traffic equal to the recorded weight does not hold', canary({ currentStep: 1, observedTrafficWeight: 40 }), { currentStep: 1, preStepHold: false }],
  ])('%s', (_name, given, expected) => {
    expect(fitCanaryToSteps(given, steps, 4)).toMatchObject(expected);
  });

  it('fits to no steps at all: step 0, no hold', () => {
    expect(fitCanaryToSteps(canary({ currentStep: 2 }), [], 4)).toMatchObject({ currentStep: 0, preStepHold: false });
  });
});

describe('Function: digestPinnedPlan', () => {
  it('digests the pinned group digests, an absent one as empty', () => {
    const [group] = pin([manualCanary(10)]).plan.groups ?? [];
    const withDigest = group as PinnedGroup;
    const run = pin([manualCanary(10)]);
    expect(digestPinnedPlan(run)).toBe(digestPlan([withDigest.portableDigest ?? '']));
    expect(digestPinnedPlan({ ...run, plan: { groups: [{ ...withDigest, portableDigest: undefined }] } })).toBe(digestPlan(['']));
    expect(digestPinnedPlan({ ...run, plan: {} })).toBe(digestPlan([]));
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
    ['order', [{ ...manualCanary(20), order: ['engine'] }], 'groups[0].order changed'],
    ['soak', [{ ...manualCanary(20), soak: '5m' }], 'groups[0].soak changed'],
    ['maintainRatio tolerance', [{ ...manualCanary(20), maintainRatio: { tolerance: 5 } }], 'groups[0].maintainRatio changed'],
    ['an empty maintainRatio added', [{ ...manualCanary(20), maintainRatio: {} }], 'groups[0].maintainRatio changed'],
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
    expect(decision.removeAnnotation).toBe(true);
    expect([decision.fromDigest, decision.toDigest]).toEqual([digestPinnedPlan(run), fresh]);
  });

  it('rejects a run pinned without a groups list as a change of group count', () => {
    const bare = { ...run, plan: {} };
    expect(decide('now', liveEdited, bare)).toMatchObject({
      action: 'reject',
      event: { message: 'repin rejected: live and pinned rollout topology differ (group count 0 -> 1); the edit applies at the next run' },
    });
  });

  it('fits only canary states whose group exists in the new plan', () => {
    const decision = decideRepin({ annotationValue: 'now', run, live: liveEdited, canaries: new Map([[0, canary()], [3, canary()]]), now: NOW });
    expect(decision.action === 'apply' && [...decision.canaries.keys()]).toEqual([0]);
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

  /**
   * Each row is the accepted snapshot with one defect, and its conditions are worked out
   * from the defective run and resolutions, so only the guard the row names can refuse
   * it. Most guards share the evidence message, so a row refused by a different guard
   * would pass unnoticed; with one defect per row, removing the guard lets the row
   * through (or reaches a different message). Rows marked "before" pair two defects on
   * purpose: they pin down which guard speaks first.
   */
  const base = snapshot();
  const groups0 = base.rollout?.groups ?? [];
  const withCondition = (type: string, patch: Partial<StatusCondition>): StatusCondition[] =>
    (base.conditions ?? []).map((c) => (c.type === type ? { ...c, ...patch } : c));
  const withoutCondition = (type: string): StatusCondition[] => (base.conditions ?? []).filter((c) => c.type !== type);
  const EVIDENCE = 'rollout repin refused: controller plan evidence is missing, stale or inconsistent';
  const ALREADY_PINNED = 'rollout repin refused: the current plan is already pinned';
  const MAILBOX = 'rollout repin refused: a rollout action mailbox is already present';
  const TOPOLOGY = 'rollout repin refused: live and pinned rollout topology differ';
  const guardedRef: RolloutPolicyRef = { name: 'guarded', progression: 'canary' };
  /** An inline canary that also names a policy: the policy is shadowed, not used. */
  const shadowing: RolloutGroup = { ...manualCanary(20), policyRef: guardedRef };
  const twoCanaries: RolloutGroup[] = [manualCanary(20), { ...manualCanary(20), components: ['decoder'] }];
  const pinnedTwoCanaries: RolloutGroup[] = [manualCanary(10), { ...manualCanary(10), components: ['decoder'] }];
  it.each<[string, RepinCheckInput, string]>([
    // The mailboxes.
    ['a repin annotation waits', { ...base, annotations: { 'ome.io/rollout-repin': 'rp1:1d153db2a5df' } }, MAILBOX],
    ['a promote annotation waits', { ...base, annotations: { 'ome.io/rollout-promote': 'bbbbbbbb' } }, MAILBOX],
    ['a rollback annotation remains', { ...base, annotations: { 'ome.io/rollout-rollback': 'true' } }, MAILBOX],
    ['an empty repin annotation still occupies the mailbox', { ...base, annotations: { 'ome.io/rollout-repin': '' } }, MAILBOX],
    // The run and the spec.
    ['no active run', { ...base, rollout: { groups: groups0 } }, 'rollout repin refused: no active pinned run'],
    ['no rollout status at all', { ...base, rollout: undefined }, 'rollout repin refused: no active pinned run'],
    ['no spec groups at all', { ...base, specGroups: undefined }, 'rollout repin refused: empty live plans are not supported by this command'],
    ['empty live plan', { ...base, specGroups: [] }, 'rollout repin refused: empty live plans are not supported by this command'],
    ['pinned plan is empty', consistent({ run: (r) => ({ ...r, plan: { groups: [] } }) }), EVIDENCE],
    ['pinned plan has no groups list', consistent({ run: (r) => ({ ...r, plan: {} }) }), EVIDENCE],
    ['the run has no ID', consistent({ run: (r) => ({ ...r, runID: '' }) }), EVIDENCE],
    ['a pinned group of an unknown source', consistent({ run: (r) => pinnedGroupPatch(r, { source: 'Other' as 'Inline', policyRef: { name: 'p', progression: 'canary' } }) }), EVIDENCE],
    ['a malformed second pinned group', consistent({ live: [{ components: ['router'] }, manualCanary(20)], pinned: [{ components: ['router'] }, manualCanary(10)], run: (r) => pinnedGroupPatch(r, { source: 'Policy' }, 1) }), EVIDENCE],
    ['a second pinned group with a digest of the wrong form', consistent({ live: [{ components: ['router'] }, manualCanary(20)], pinned: [{ components: ['router'] }, manualCanary(10)], run: (r) => pinnedGroupPatch(r, { portableDigest: 'x' }, 1) }), EVIDENCE],
    ['a pinned policy group without its policyRef', consistent({ run: (r) => pinnedGroupPatch(r, { source: 'Policy' }) }), EVIDENCE],
    ['a pinned group with two progressions', consistent({ run: (r) => pinnedGroupPatch(r, { group: { ...manualCanary(10), blueGreen: {} } }) }), EVIDENCE],
    ['a pinned group with no progression', consistent({ run: (r) => pinnedGroupPatch(r, { group: { components: ['engine'] } }) }), EVIDENCE],
    ['a pinned group with an empty components list', consistent({ run: (r) => pinnedGroupPatch(r, { group: { ...manualCanary(10), components: [] } }) }), EVIDENCE],
    ['a pinned group without components', consistent({ run: (r) => pinnedGroupPatch(r, { group: { canary: manualCanary(10).canary } as RolloutGroup }) }), EVIDENCE],
    ['a pinned group with no digest', consistent({ run: (r) => pinnedGroupPatch(r, { portableDigest: undefined }) }), EVIDENCE],
    ['a pinned group with a digest of the wrong form', consistent({ run: (r) => pinnedGroupPatch(r, { portableDigest: 'rp1:XYZ' }) }), EVIDENCE],
    ['an unparsable openedAt, before a shape change', consistent({ live: [{ ...manualCanary(20), components: ['decoder'] }], run: (r) => ({ ...r, openedAt: 'never' }) }), EVIDENCE],
    ['an unparsable pinnedAt, before a shape change', consistent({ live: [{ ...manualCanary(20), components: ['decoder'] }], run: (r) => ({ ...r, pinnedAt: 'never' }) }), EVIDENCE],
    ['topology changed', consistent({ live: [{ ...manualCanary(20), components: ['decoder'] }] }), TOPOLOGY],
    ['group added', consistent({ live: [manualCanary(20), { components: ['router'] }] }), TOPOLOGY],
    ['an invalid live group, before the canary count', consistent({ live: [{ ...manualCanary(20), soak: 'x' }, { ...manualCanary(20), components: ['decoder'] }], pinned: [{ ...manualCanary(10), soak: 'x' }, { ...manualCanary(10), components: ['decoder'] }] }), EVIDENCE],
    ['more than three groups, before the canary count', consistent({ live: [...twoCanaries, { components: ['router'] }, { components: ['router'] }], pinned: [...pinnedTwoCanaries, { components: ['router'] }, { components: ['router'] }] }), EVIDENCE],
    ['two canary groups', consistent({ live: twoCanaries, pinned: pinnedTwoCanaries }), 'rollout repin refused: this command supports at most one canary group'],
    // The controller's evidence.
    ['a resolution for a group the spec does not have', consistent({ resolutions: (g) => [...g, { index: 1, source: 'Inline', observedDigest: 'rp1:000000000000' }] }), EVIDENCE],
    ['resolution view missing', consistent({ resolutions: () => [] }), EVIDENCE],
    ['no generation and no observedGeneration', { ...base, generation: undefined, observedGeneration: undefined }, EVIDENCE],
    ['observedGeneration behind', { ...base, observedGeneration: 2 }, EVIDENCE],
    ['conditions missing', { ...base, conditions: [] }, EVIDENCE],
    ['READY missing', { ...base, conditions: withoutCondition('RolloutPlanReady') }, EVIDENCE],
    ['DRIFT missing', { ...base, conditions: withoutCondition('RolloutPlanDrift') }, EVIDENCE],
    ['READY twice', { ...base, conditions: [...(base.conditions ?? []), ...withCondition('RolloutPlanDrift', {}).filter((c) => c.type === 'RolloutPlanReady')] }, EVIDENCE],
    ['DRIFT twice', { ...base, conditions: [...(base.conditions ?? []), ...(base.conditions ?? []).filter((c) => c.type === 'RolloutPlanDrift')] }, EVIDENCE],
    ['READY False', { ...base, conditions: withCondition('RolloutPlanReady', { status: 'False' }) }, EVIDENCE],
    ['READY with another reason', { ...base, conditions: withCondition('RolloutPlanReady', { reason: 'NoActiveRun' }) }, EVIDENCE],
    ['READY names another run', { ...base, conditions: withCondition('RolloutPlanReady', { message: 'run chat-000000000000 pinned' }) }, EVIDENCE],
    ['READY stamped before the run opened', { ...base, conditions: withCondition('RolloutPlanReady', { lastTransitionTime: '2026-08-31T17:59:59Z' }) }, EVIDENCE],
    ['READY stamped in the future', { ...base, conditions: withCondition('RolloutPlanReady', { lastTransitionTime: '2026-08-31T18:30:01Z' }) }, EVIDENCE],
    ['READY without a time', { ...base, conditions: withCondition('RolloutPlanReady', { lastTransitionTime: undefined }) }, EVIDENCE],
    ['READY with an unparsable time', { ...base, conditions: withCondition('RolloutPlanReady', { lastTransitionTime: 'yesterday' }) }, EVIDENCE],
    ['DRIFT stamped before the run was pinned', consistent({ run: (r) => ({ ...r, pinnedAt: '2026-08-31T18:20:00Z' }), driftTime: '2026-08-31T18:19:59Z' }), EVIDENCE],
    ['DRIFT stamped in the future (clock skew)', { ...base, conditions: withCondition('RolloutPlanDrift', { lastTransitionTime: '2026-08-31T18:30:01Z' }) }, EVIDENCE],
    ['DRIFT True with the InSync reason', { ...base, conditions: withCondition('RolloutPlanDrift', { reason: 'InSync' }) }, EVIDENCE],
    ['DRIFT True with the InSync reason, on a plan already pinned', { ...snapshot({}, [manualCanary(10)]), conditions: withCondition('RolloutPlanDrift', { reason: 'InSync' }) }, EVIDENCE],
    ['DRIFT False with a drift reason', { ...base, conditions: withCondition('RolloutPlanDrift', { status: 'False' }) }, EVIDENCE],
    ['DRIFT Unknown', { ...base, conditions: withCondition('RolloutPlanDrift', { status: 'Unknown' as 'True', reason: 'InSync' }) }, EVIDENCE],
    ['DRIFT not yet reporting the edit', { ...base, conditions: withCondition('RolloutPlanDrift', { status: 'False', reason: 'InSync', message: '' }) }, ALREADY_PINNED],
    ['already pinned, with DRIFT still True', { ...snapshot({}, [manualCanary(10)]), conditions: base.conditions }, ALREADY_PINNED],
    ['a resolution at another index', consistent({ resolutions: (g) => g.map((r) => ({ ...r, index: 1 })) }), EVIDENCE],
    ['a resolution of another source', consistent({ resolutions: (g) => g.map((r) => ({ ...r, source: 'Policy' as const })) }), EVIDENCE],
    ['a resolution naming a policy the spec does not', consistent({ resolutions: (g) => g.map((r) => ({ ...r, policyRef: { name: 'p', progression: 'canary' } })) }), EVIDENCE],
    ['a shadowing group whose resolution shadows nothing', consistent({ live: [shadowing], pinned: [{ ...manualCanary(10), policyRef: guardedRef }], resolutions: (g) => g.map(({ shadowedPolicyRef: _drop, ...r }) => r) }), EVIDENCE],
    ['a shadowing group whose resolution shadows another policy', consistent({ live: [shadowing], pinned: [{ ...manualCanary(10), policyRef: guardedRef }], resolutions: (g) => g.map((r) => ({ ...r, shadowedPolicyRef: { name: 'other', wouldPinDigest: 'rp1:000000000000' } })) }), EVIDENCE],
    ['a resolution shadowing a policy the spec does not name', consistent({ resolutions: (g) => g.map((r) => ({ ...r, shadowedPolicyRef: { name: 'p', wouldPinDigest: 'rp1:000000000000' } })) }), EVIDENCE],
    ['a reported digest of the wrong form', consistent({ resolutions: (g) => g.map((r) => ({ ...r, observedDigest: 'rp1:XYZ' })) }), EVIDENCE],
    ['a reported digest that disagrees with the spec', consistent({ resolutions: (g) => g.map((r) => ({ ...r, observedDigest: 'rp1:000000000000' })) }), EVIDENCE],
    ['DRIFT message stale', { ...base, conditions: withCondition('RolloutPlanDrift', { message: 'groups[0]: something else' }) }, EVIDENCE],
    ['DRIFT reason wrong', { ...base, conditions: withCondition('RolloutPlanDrift', { reason: 'PolicyNewerThanRun' }) }, EVIDENCE],
  ])('refuses when %s', (_name, input, message) => {
    expect(checkRepinRefusal(input)).toEqual({ refused: true, message });
  });

  it('accepts every consistent snapshot the refusal rows start from', () => {
    expect(checkRepinRefusal(base).refused).toBe(false);
    expect(checkRepinRefusal(consistent({})).refused).toBe(false);
    expect(checkRepinRefusal(consistent({ run: (r) => ({ ...r, pinnedAt: '2026-08-31T18:20:00Z' }), driftTime: '2026-08-31T18:20:00Z' })).refused).toBe(false);
    expect(checkRepinRefusal({ ...base, conditions: withCondition('RolloutPlanReady', { lastTransitionTime: '2026-08-31T18:00:00Z' }) }).refused).toBe(false);
    expect(checkRepinRefusal({ ...base, conditions: withCondition('RolloutPlanDrift', { lastTransitionTime: '2026-08-31T18:30:00Z' }) }).refused).toBe(false);
    expect(checkRepinRefusal({ ...base, annotations: { 'ome.io/other': 'x' } }).refused).toBe(false);
    expect(checkRepinRefusal(consistent({ live: [shadowing], pinned: [{ ...manualCanary(10), policyRef: guardedRef }] })).refused).toBe(false);
    const three: RolloutGroup[] = [{ components: ['router'] }, { components: ['decoder'] }, manualCanary(20)];
    const pinnedThree: RolloutGroup[] = [{ components: ['router'] }, { components: ['decoder'] }, manualCanary(10)];
    expect(checkRepinRefusal(consistent({ live: three, pinned: pinnedThree }))).toMatchObject({ refused: false, groupCount: 3 });
  });
});

/** The first pinned group of a run, patched. */
function pinnedGroupPatch(run: RolloutRun, patch: Partial<PinnedGroup>, index = 0): RolloutRun {
  const groups = (run.plan.groups ?? []).map((group, i) => (i === index ? { ...group, ...patch } : group));
  return { ...run, plan: { groups } };
}

/**
 * A snapshot whose conditions the controller would have written for exactly this run and
 * these resolutions (drift edit 10 -> 20 by default), so a defect put into the run or
 * the resolutions is not also visible as stale conditions.
 */
function consistent(options: {
  live?: RolloutGroup[];
  pinned?: RolloutGroup[];
  run?: (run: RolloutRun) => RolloutRun;
  resolutions?: (groups: GroupResolutionStatus[]) => GroupResolutionStatus[];
  driftTime?: string;
}): RepinCheckInput {
  const liveGroups = options.live ?? [manualCanary(20)];
  const pinnedGroups = options.pinned ?? [manualCanary(10)];
  const run = (options.run ?? ((r) => r))(pinForce(pinnedGroups));
  const live = resolveLivePlan(liveGroups, policies(policy('guarded', { canary: { steps: [{ capacity: '50%', traffic: 20, pause: {} }] } })));
  const groups = (options.resolutions ?? ((g) => g))(buildGroupResolutions(live));
  const at = (condition: StatusCondition, time = '2026-08-31T18:10:00Z'): StatusCondition => ({ ...condition, lastTransitionTime: time });
  return {
    annotations: {},
    generation: 3,
    observedGeneration: 3,
    specGroups: liveGroups,
    rollout: { activeRun: run, groups },
    conditions: [at({ ...evaluatePlanReady(run, live), type: 'RolloutPlanReady', status: 'True', reason: 'Pinned', message: `run ${run.runID} pinned` }), at(evaluatePlanDrift(run, groups), options.driftTime)],
    now: NOW,
  };
}

/** Pins groups even when the live plan would not render them (for invalid-group rows). */
function pinForce(groups: RolloutGroup[]): RolloutRun {
  const live = resolveLivePlan(groups, policies());
  if (live.ok) return pin(groups);
  const plan = resolveLivePlan(groups.map((g) => ({ ...g, soak: undefined })), policies());
  if (!plan.ok) throw new Error('fixture');
  const run = openRun({ isvcName: 'chat', targetRevisions: [], plan: plan.plan, now: OPENED });
  return { ...run, plan: { groups: (run.plan.groups ?? []).map((g, i) => ({ ...g, group: groups[i] as RolloutGroup })) } };
}
