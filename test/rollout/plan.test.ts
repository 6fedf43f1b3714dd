import { describe, expect, it } from 'vitest';
import { DEFAULT_GROUP_DIGEST, digestPolicySpec } from '../../shared/domain/rollout/digest';
import { parseCapacity, resolveLivePlan, sameTopology, topologyOf } from '../../shared/domain/rollout/plan';
import type { RolloutGroup } from '../../shared/domain/rollout/types';
import { manualCanary, policies, policy } from './fixtures';

const guardedBody = { canary: { steps: [{ capacity: '50%', traffic: 20, pause: {} }, { capacity: '100%', traffic: 100 }] } };
const guarded = policy('guarded', guardedBody);

describe('Function: resolveLivePlan', () => {
  it('renders a group with no progression and no policy as the default blue-green', () => {
    const result = resolveLivePlan([{ components: ['engine'] }], policies());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.plan.groups[0]).toEqual({
      source: 'Inline',
      portableDigest: DEFAULT_GROUP_DIGEST,
      group: { components: ['engine'], blueGreen: {} },
    });
    expect(result.groups[0]?.declaredSource).toBe('Defaulted');
  });

  it('renders a policy group from the policy body, without the ref inside the group', () => {
    const result = resolveLivePlan(
      [{ components: ['engine'], policyRef: { name: 'guarded', progression: 'canary' } }],
      policies(guarded),
    );
    expect(result.ok && result.plan.groups[0]).toEqual({
      source: 'Policy',
      policyRef: { name: 'guarded', progression: 'canary' },
      policyGeneration: 4,
      portableDigest: digestPolicySpec(guardedBody),
      group: { components: ['engine'], ...guardedBody },
    });
  });

  it('lets an inline progression win over a policyRef and previews the shadowed policy', () => {
    const group: RolloutGroup = { ...manualCanary(), policyRef: { name: 'guarded', progression: 'canary' } };
    const result = resolveLivePlan([group], policies(guarded));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.plan.groups[0]?.source).toBe('Inline');
    expect(result.plan.groups[0]?.group.policyRef).toBeUndefined();
    expect(result.groups[0]?.shadowed).toEqual({ name: 'guarded', wouldPinDigest: digestPolicySpec(guardedBody) });
  });

  it('digests the plan as the group digests joined by |', () => {
    const result = resolveLivePlan([{ components: ['router'] }, manualCanary()], policies());
    expect(result.ok && result.plan.groupDigests[0]).toBe(DEFAULT_GROUP_DIGEST);
    expect(result.ok && result.plan.digest).toMatch(/^rp1:[0-9a-f]{12}$/);
  });

  it.each<[string, RolloutGroup, string, RegExp]>([
    ['missing policy', { components: ['engine'], policyRef: { name: 'gone', progression: 'canary' } }, 'PolicyNotFound', /groups\[0\]: RolloutPolicy "gone" not found/],
    ['unready policy', { components: ['engine'], policyRef: { name: 'sick', progression: 'canary' } }, 'PolicyNotReady', /RolloutPolicy "sick" is not Ready: body invalid/],
    ['kind mismatch', { components: ['engine'], policyRef: { name: 'guarded', progression: 'blueGreen' } }, 'ProgressionMismatch', /declares progression "blueGreen" but the policy body is "canary"/],
    ['two progressions', { components: ['engine'], blueGreen: {}, rollingUpdate: {} }, 'PlanInvalid', /at most one of canary/],
    ['no components', { components: [] }, 'PlanInvalid', /at least one component/],
    ['bad soak', { components: ['engine'], soak: 'soon' }, 'PlanInvalid', /soak: time: /],
    ['bad traffic', { components: ['engine'], canary: { steps: [{ capacity: 1, traffic: 101 }] } }, 'PlanInvalid', /traffic must be 0-100/],
    ['bad capacity', { components: ['engine'], canary: { steps: [{ capacity: 'half', traffic: 1 }] } }, 'PlanInvalid', /capacity "half" is invalid/],
  ])('fails on %s with %s', (_name, group, reason, message) => {
    const result = resolveLivePlan([group], policies(guarded, policy('sick', guardedBody, { ready: false, readyMessage: 'body invalid' })));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toBe(reason);
    expect(result.message).toMatch(message);
  });

  it('keeps every group outcome when one fails, for the resolution view', () => {
    const result = resolveLivePlan(
      [{ components: ['router'] }, { components: ['engine'], policyRef: { name: 'gone', progression: 'canary' } }],
      policies(),
    );
    expect(result.groups.map((group) => group.ok)).toEqual([true, false]);
  });

  it('renders an empty plan for no groups', () => {
    const result = resolveLivePlan(undefined, policies());
    expect(result.ok && result.plan.groups).toEqual([]);
  });
});

describe('Function: parseCapacity', () => {
  it.each([
    ['25%', { percent: 25 }],
    ['100%', { percent: 100 }],
    ['3', { count: 3 }],
    [3, { count: 3 }],
    ['101%', undefined],
    ['x', undefined],
    [-1, undefined],
  ])('%j -> %j', (input, expected) => {
    expect(parseCapacity(input)).toEqual(expected);
  });
});

describe('Function: topologyOf', () => {
  const base: RolloutGroup = { components: ['engine', 'decoder'], blueGreen: {}, soak: '60s', maintainRatio: { tolerance: 5 } };
  it.each<[string, RolloutGroup, boolean]>([
    ['same group', base, true],
    ['equal soak spelled differently', { ...base, soak: '1m' }, true],
    ['progression body only', { ...base, blueGreen: undefined, policyRef: { name: 'p', progression: 'blueGreen' } }, true],
    ['components', { ...base, components: ['engine'] }, false],
    ['order', { ...base, order: ['decoder', 'engine'] }, false],
    ['soak', { ...base, soak: '2m' }, false],
    ['maintainRatio', { ...base, maintainRatio: { tolerance: 6 } }, false],
    ['progression kind', { ...base, blueGreen: undefined, rollingUpdate: {} }, false],
  ])('%s -> same shape %s', (_name, group, same) => {
    expect(sameTopology(topologyOf([base]), topologyOf([group]))).toBe(same);
  });

  /** Two-group plans: a difference in any one group, first or last, changes the shape. */
  const other: RolloutGroup = { components: ['router'], rollingUpdate: {} };
  it.each<[string, RolloutGroup[], RolloutGroup[], boolean]>([
    ['both groups equal', [base, other], [base, other], true],
    ['the second group differs', [base, other], [base, { ...other, components: ['router', 'engine'] }], false],
    ['the first group differs', [base, other], [{ ...base, soak: '2m' }, other], false],
    ['the groups swapped', [base, other], [other, base], false],
    ['hasMaintainRatio alone differs', [{ components: ['engine'], maintainRatio: {} }], [{ components: ['engine'] }], false],
    ['an unparsable soak compares as written', [{ components: ['engine'], soak: 'soon' }], [{ components: ['engine'], soak: 'soon' }], true],
    ['an unparsable soak differs from a parsable one', [{ components: ['engine'], soak: 'soon' }], [{ components: ['engine'], soak: '1m' }], false],
    ['no soak differs from a zero soak', [{ components: ['engine'] }], [{ components: ['engine'], soak: '0s' }], false],
  ])('%s -> same shape %s', (_name, a, b, same) => {
    expect(sameTopology(topologyOf(a), topologyOf(b))).toBe(same);
    expect(sameTopology(topologyOf(b), topologyOf(a))).toBe(same);
  });

  it('writes each group shape out in full', () => {
    expect(topologyOf([base, { components: ['engine'], soak: 'soon' }])).toEqual({
      groupCount: 2,
      groups: [
        { progression: 'blueGreen', components: ['engine', 'decoder'], order: [], soak: '1m0s', maintainRatio: 5, hasMaintainRatio: true },
        { progression: 'blueGreen', components: ['engine'], order: [], soak: 'soon', maintainRatio: null, hasMaintainRatio: false },
      ],
    });
  });

  it('counts groups', () => {
    expect(topologyOf([base, base]).groupCount).toBe(2);
    expect(sameTopology(topologyOf([base]), topologyOf([base, base]))).toBe(false);
  });

  it('reports each group progression kind, defaulting to blue-green', () => {
    expect(topologyOf([{ components: ['engine'] }, manualCanary()]).groups.map((g) => g.progression)).toEqual(['blueGreen', 'canary']);
  });
});

/** Every render failure, exactly as RolloutPlanReady reports it. */
describe('Function: resolveLivePlan, failures word for word', () => {
  const metric = { name: 'err', query: 'q', operator: 'LTE', threshold: '0.05' };
  const step = (extra: Record<string, unknown>) => ({ components: ['engine'], canary: { steps: [{ capacity: 1, traffic: 1, ...extra }] } }) as RolloutGroup;
  it.each<[string, RolloutGroup, string, string]>([
    ['no components field', {} as RolloutGroup, 'PlanInvalid', 'groups[0]: a group needs at least one component'],
    ['an unknown component', { components: ['engine', 'gpu'] } as unknown as RolloutGroup, 'PlanInvalid', 'groups[0]: unknown component "gpu"'],
    ['two arms', { components: ['engine'], canary: { steps: [] }, blueGreen: {} }, 'PlanInvalid', 'groups[0]: at most one of canary, blueGreen, or rollingUpdate may be set on a rollout group'],
    ['an unknown declared progression', { components: ['engine'], policyRef: { name: 'p', progression: 'shadow' } } as unknown as RolloutGroup, 'PlanInvalid', 'groups[0]: policyRef "p" declares unknown progression "shadow"'],
    ['another policy kind', { components: ['engine'], policyRef: { name: 'p', progression: 'canary', kind: 'Other' } } as unknown as RolloutGroup, 'PlanInvalid', 'groups[0]: policyRef kind "Other" is not supported'],
    ['negative traffic', step({ traffic: -1 }), 'PlanInvalid', 'groups[0]: canary.steps[0].traffic must be 0-100'],
    ['fractional traffic', step({ traffic: 1.5 }), 'PlanInvalid', 'groups[0]: canary.steps[0].traffic must be 0-100'],
    ['a bad capacity in the second step', { components: ['engine'], canary: { steps: [{ capacity: 1, traffic: 1 }, { capacity: '1.5', traffic: 2 }] } }, 'PlanInvalid', 'groups[0]: canary.steps[1].capacity "1.5" is invalid'],
    ['a bad pause', step({ pause: { duration: 'x' } }), 'PlanInvalid', 'groups[0]: canary.steps[0].pause.duration: time: invalid duration "x"'],
    ['a bad analysis interval', step({ analysis: { interval: '1', failureLimit: 1, metrics: [] } }), 'PlanInvalid', 'groups[0]: canary.steps[0].analysis.interval: time: missing unit in duration "1"'],
    ['a bad analysis delay', step({ analysis: { interval: '1m', initialDelay: 'y', failureLimit: 1, metrics: [] } }), 'PlanInvalid', 'groups[0]: canary.steps[0].analysis.initialDelay: time: invalid duration "y"'],
    ['a bad readyTimeout', { components: ['engine'], canary: { steps: [], readyTimeout: 'z' } }, 'PlanInvalid', 'groups[0]: canary.readyTimeout: time: invalid duration "z"'],
    ['both providerRef and serverAddress', { components: ['engine'], canary: { steps: [], prometheus: { providerRef: { name: 'p' }, serverAddress: 'http://x' } } }, 'PlanInvalid', 'groups[0]: canary.prometheus: at most one of providerRef and serverAddress may be set'],
    ['an analysis with no metrics', step({ analysis: { interval: '1m', failureLimit: 1, metrics: [] } }), 'PlanInvalid', 'groups[0]: canary.steps[0].analysis: at least one metric is required'],
    ['an unknown onInconclusive', step({ analysis: { interval: '1m', failureLimit: 1, onInconclusive: 'Pause', metrics: [metric] } }), 'PlanInvalid', 'groups[0]: canary.steps[0].analysis: onInconclusive "Pause" must be one of Hold, Rollback, RollbackOnStall'],
    ['an unbound providerRef', { components: ['engine'], canary: { steps: [{ capacity: 1, traffic: 1 }], prometheus: { providerRef: { name: 'mimir' } } } }, 'ProviderUnbound', 'groups[0]: metric provider "mimir" is not bound in this cluster\'s metricProviders configuration'],
    ['an analysis step with nothing to evaluate it', step({ analysis: { interval: '1m', failureLimit: 1, onInconclusive: 'RollbackOnStall', metrics: [metric] } }), 'ProviderUnbound', 'groups[0]: canary.steps[0] is an analysis step, and no metrics provider is bound in this cluster to evaluate it'],
    ['a policy not Ready without a message', { components: ['engine'], policyRef: { name: 'quiet', progression: 'canary' } }, 'PolicyNotReady', 'groups[0]: RolloutPolicy "quiet" is not Ready'],
    ['a policy with two bodies', { components: ['engine'], policyRef: { name: 'double', progression: 'canary' } }, 'PolicyNotReady', 'groups[0]: RolloutPolicy "double" must carry exactly one of canary, blueGreen or rollingUpdate'],
    ['a policy with no body', { components: ['engine'], policyRef: { name: 'empty', progression: 'canary' } }, 'PolicyNotReady', 'groups[0]: RolloutPolicy "empty" must carry exactly one of canary, blueGreen or rollingUpdate'],
    ['a policy whose steps are invalid', { components: ['engine'], policyRef: { name: 'broken', progression: 'canary' } }, 'PlanInvalid', 'groups[0]: RolloutPolicy "broken": canary.steps[0].traffic must be 0-100'],
  ])('%s', (_name, group, reason, message) => {
    const views = policies(
      policy('quiet', guardedBody, { ready: false }),
      policy('double', { blueGreen: {}, rollingUpdate: {} }),
      policy('empty', {}),
      policy('broken', { canary: { steps: [{ capacity: 1, traffic: 200 }] } }),
    );
    const result = resolveLivePlan([group], views);
    expect(result).toMatchObject({ ok: false, reason, message });
  });

  it('names the failing group by its index, and reports the first failure', () => {
    const result = resolveLivePlan([{ components: ['router'] }, { components: [] }, { components: ['gpu'] } as unknown as RolloutGroup], policies());
    expect(result).toMatchObject({ ok: false, reason: 'PlanInvalid', message: 'groups[1]: a group needs at least one component' });
    expect(result.groups.map((group) => group.ok)).toEqual([true, false, false]);
  });

  it('renders a policy group without a generation when the policy has none', () => {
    const result = resolveLivePlan([{ components: ['engine'], policyRef: { name: 'guarded', progression: 'canary' } }], policies(policy('guarded', guardedBody, { generation: 0 })));
    expect(result.ok && result.plan.groups[0]).not.toHaveProperty('policyGeneration');
  });

  it('previews a shadowed policy without a digest when it would not render', () => {
    const group: RolloutGroup = { ...manualCanary(), policyRef: { name: 'broken', progression: 'canary' } };
    const missing = resolveLivePlan([group], policies());
    const broken = resolveLivePlan([group], policies(policy('broken', { canary: { steps: [{ capacity: 1, traffic: 200 }] } })));
    const twoBodies = resolveLivePlan([group], policies(policy('broken', { blueGreen: {}, rollingUpdate: {} })));
    for (const result of [missing, broken, twoBodies]) expect(result.ok && result.groups[0]?.shadowed).toEqual({ name: 'broken' });
  });

  it('keeps the shape fields of a policy group and takes its progression from the body', () => {
    const result = resolveLivePlan([{ components: ['engine'], order: ['engine'], soak: '1m', policyRef: { name: 'guarded', progression: 'canary' } }], policies(guarded));
    expect(result.ok && result.plan.groups[0]?.group).toEqual({ components: ['engine'], order: ['engine'], soak: '1m', ...guardedBody });
  });
});
