import { describe, expect, it } from 'vitest';
import { checkRolloutPolicySpec } from '../../shared/domain/rollout/admission';
import { digestPolicySpec } from '../../shared/domain/rollout/digest';
import { computePolicyStatus, countAttachedGroups, setPolicyCondition, type PolicyCondition } from '../../shared/domain/rollout/policy-status';
import type { RolloutPolicySpec } from '../../shared/domain/rollout/types';

const NOW = new Date('2026-09-28T14:15:57Z');
const EARLIER = '2026-09-28T13:00:00Z';
const canary: RolloutPolicySpec = { canary: { steps: [{ capacity: '25%', traffic: 10, pause: {} }, { capacity: '100%', traffic: 100 }] } };
const withProvider = (name: string): RolloutPolicySpec =>
  ({ canary: { ...canary.canary, prometheus: { providerRef: { name } } } }) as unknown as RolloutPolicySpec;

describe('Function: countAttachedGroups', () => {
  it('counts groups, not services, in the policy namespace only', () => {
    const consumers = [
      { namespace: 'prod', groups: [{ policyRef: { name: 'guarded' } }, { policyRef: { name: 'guarded' } }] },
      { namespace: 'prod', groups: [{ policyRef: { name: 'other' } }, {}] },
      { namespace: 'dev', groups: [{ policyRef: { name: 'guarded' } }] },
    ];
    expect(countAttachedGroups(consumers, 'prod', 'guarded')).toBe(2);
    expect(countAttachedGroups(consumers, 'dev', 'guarded')).toBe(1);
    expect(countAttachedGroups(consumers, 'prod', 'unused')).toBe(0);
  });
});

describe('Function: computePolicyStatus', () => {
  const compute = (spec: RolloutPolicySpec, attachedGroups = 0, previous?: Parameters<typeof computePolicyStatus>[0]['previous'], bound: string[] = []) =>
    computePolicyStatus({ generation: 3, spec, attachedGroups, boundProviders: new Set(bound), now: NOW, ...(previous ? { previous } : {}) });

  it('reports a valid body: generation, digest, count, Ready BodyValid and InUse Attached', () => {
    expect(compute(canary, 2)).toEqual({
      observedGeneration: 3,
      portableDigest: digestPolicySpec(canary),
      attachedGroups: 2,
      conditions: [
        { type: 'Ready', status: 'True', observedGeneration: 3, lastTransitionTime: '2026-09-28T14:15:57Z', reason: 'BodyValid', message: 'progression body passes plan validation' },
        { type: 'InUse', status: 'True', observedGeneration: 3, lastTransitionTime: '2026-09-28T14:15:57Z', reason: 'Attached', message: '2 rollout group(s) reference this policy' },
      ],
    });
  });

  it('omits a zero attachedGroups (Go omitempty) and reports NoConsumers', () => {
    const status = compute({ blueGreen: {} });
    expect(status).not.toHaveProperty('attachedGroups');
    expect(status.conditions?.[1]).toMatchObject({ type: 'InUse', status: 'False', reason: 'NoConsumers', message: 'no rollout group references this policy' });
  });

  it.each<[string, RolloutPolicySpec, string, string]>([
    ['an invalid body', { canary: { steps: [{ capacity: '25%', traffic: 10 }] } }, 'False/BodyInvalid', 'spec.canary final step traffic must be 100, got 10 (CanaryInvalid)'],
    ['an absolute count', { canary: { steps: [{ capacity: 4, traffic: 100 }] } }, 'False/BodyInvalid', 'spec.canary.steps[0].capacity: a policy capacity must be a percentage ("4" is an absolute count, which is service-specific — services needing absolute counts keep their canary inline) (RolloutPolicyInvalid)'],
    ['two progressions', { canary: canary.canary, blueGreen: {} }, 'False/BodyInvalid', 'spec must set exactly one of canary, blueGreen, or rollingUpdate; got 2 (RolloutPolicyInvalid)'],
    ['an unbound provider', withProvider('prom'), 'True/ProviderUnbound', 'progression body is valid, but metric provider "prom" is not bound on this cluster — a rollout opened here parks at run open until the binding exists'],
  ])('reports %s on Ready', (_name, spec, expected, message) => {
    const ready = compute(spec).conditions?.[0];
    expect(`${ready?.status}/${ready?.reason}`).toBe(expected);
    expect(ready?.message).toBe(message);
  });

  it('keeps the digest of an invalid body that still digests, as upstream computes it apart from validity', () => {
    const invalid: RolloutPolicySpec = { canary: { steps: [{ capacity: '25%', traffic: 10 }] } };
    expect(compute(invalid).portableDigest).toBe(digestPolicySpec(invalid));
  });

  it('reports a bound provider as valid and bound', () => {
    expect(compute(withProvider('prom'), 0, undefined, ['prom']).conditions?.[0]).toMatchObject({
      status: 'True',
      reason: 'BodyValid',
      message: 'progression body passes plan validation and its metric provider is bound',
    });
  });

  it('moves lastTransitionTime only when a condition status changes', () => {
    const previous = {
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: EARLIER, reason: 'BodyValid', message: 'old' },
        { type: 'InUse', status: 'False', lastTransitionTime: EARLIER, reason: 'NoConsumers', message: 'no rollout group references this policy' },
      ] as PolicyCondition[],
    };
    const [ready, inUse] = compute(withProvider('prom'), 1, previous).conditions ?? [];
    expect(ready).toMatchObject({ status: 'True', reason: 'ProviderUnbound', lastTransitionTime: EARLIER });
    expect(inUse).toMatchObject({ status: 'True', reason: 'Attached', lastTransitionTime: '2026-09-28T14:15:57Z' });
  });
});

describe('Function: setPolicyCondition', () => {
  it('keeps other conditions in place and appends a new type', () => {
    const other: PolicyCondition = { type: 'Other', status: 'True', lastTransitionTime: EARLIER, reason: 'X', message: 'x' };
    const next = setPolicyCondition([other], { type: 'Ready', status: 'True', reason: 'BodyValid', message: 'm' }, NOW);
    expect(next.map((condition) => condition.type)).toEqual(['Other', 'Ready']);
    expect(next[0]).toBe(other);
  });
});

describe('Function: checkRolloutPolicySpec', () => {
  it.each<[string, unknown, string | undefined]>([
    ['blue-green', { blueGreen: {} }, undefined],
    ['nothing set', {}, 'spec must set exactly one of canary, blueGreen, or rollingUpdate; got 0 (RolloutPolicyInvalid)'],
    ['a serverAddress', { canary: { ...canary.canary, prometheus: { serverAddress: 'http://prom:9090' } } }, "spec.canary.prometheus.serverAddress is not allowed in a policy body — a cluster-local URL defeats portability; name a providerRef bound in the operator's metricProviders configuration instead (RolloutPolicyInvalid)"],
    ['an authRef', { canary: { ...canary.canary, prometheus: { authRef: { name: 's', key: 'k' } } } }, "spec.canary.prometheus.authRef is not allowed in a policy body — auth comes from the providerRef's cluster binding (RolloutPolicyInvalid)"],
    [
      'analysis without a providerRef',
      { canary: { steps: [{ capacity: '25%', traffic: 10, analysis: { interval: '1m', failureLimit: 1, metrics: [{ name: 'e', query: 'q', operator: 'LT', threshold: '1' }] } }, { capacity: '100%', traffic: 100 }] } },
      'spec.canary.prometheus.providerRef is required when any step declares analysis — a policy must never ship a gate with no resolvable metrics source (RolloutPolicyInvalid)',
    ],
    ['a rollingUpdate with both budgets zero', { rollingUpdate: { maxSurge: '0%', maxUnavailable: 0 } }, 'spec.rollingUpdate: maxSurge and maxUnavailable both resolve to zero, which deadlocks the rollout — set at least one non-zero (ZeroBudgetPacingUnstartable)'],
    ['a malformed budget', { rollingUpdate: { maxSurge: 'a lot' } }, 'spec.rollingUpdate.maxSurge="a lot" must be an integer count or a percent string like "25%" (InvalidRollingUpdatePercent)'],
  ])('%s', (_name, spec, message) => {
    expect(checkRolloutPolicySpec(spec)).toBe(message);
  });
});
