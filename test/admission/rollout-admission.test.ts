/**
 * The rollout shapes upstream's InferenceService webhook refuses, as one table over the
 * pure rule (each row a shape and upstream's message), plus the review wiring: rollout
 * refusals come before the pin rules, UPDATE ratchets the ordering rules, and an object
 * being deleted is admitted.
 */
import { describe, expect, it } from 'vitest';
import { reviewAdmission } from '../../shared/use-cases/admission/review-admission';
import { checkCanaryPlan, checkRolloutShape } from '../../shared/domain/rollout/admission';

type Json = Record<string, unknown>;

const lastStep = { capacity: '100%', traffic: 100 };
const gate = (capacity: unknown, traffic: number) => ({ capacity, traffic, pause: {} });
const canary = (components: string[], steps: unknown[] = [gate('25%', 10), lastStep], extra: Json = {}) => ({ components, canary: { steps }, ...extra });

function isvc(groups: unknown[], spec: Json = {}, annotations?: Record<string, string>): Json {
  return {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name: 'chat', namespace: 'prod', ...(annotations ? { annotations } : {}) },
    spec: { model: { name: 'm' }, runtime: { name: 'srt' }, engine: {}, ...spec, rollout: { groups } },
  };
}

/** Groups under `spec.rollout.groupOrdering: Concurrent`. */
function concurrent(groups: unknown[], spec: Json = {}): Json {
  const object = isvc(groups, spec);
  ((object.spec as Json).rollout as Json).groupOrdering = 'Concurrent';
  return object;
}

describe('Function: checkRolloutShape', () => {
  it.each<[string, Json]>([
    ['no rollout', { spec: { engine: {} } }],
    ['one canary group on an undeclared (default OMENative) engine', isvc([canary(['engine'])])],
    ['one canary group on a declared OMENative engine', isvc([canary(['engine'])], { deploymentMode: 'OMENative' })],
    ['a default blue-green group', isvc([{ components: ['engine'] }])],
    ['a policyRef group', isvc([{ components: ['engine'], policyRef: { name: 'guarded', progression: 'canary' } }])],
    ['router and engine canaries declared concurrent', concurrent([canary(['router']), canary(['engine'])], { router: {} })],
    ['a sequence of single-component blue-green groups with soak', isvc([{ components: ['router'], soak: '5m' }, { components: ['engine'] }], { router: {} })],
    ['engine and decoder in one canary group', isvc([canary(['engine', 'decoder'])], { decoder: {} })],
    ['a rollingUpdate with one non-zero budget', isvc([{ components: ['engine'], rollingUpdate: { maxSurge: 0, maxUnavailable: '25%' } }])],
    ['an integer capacity', isvc([canary(['engine'], [gate(1, 10), { capacity: 4, traffic: 100 }])])],
  ])('admits %s', (_name, object) => {
    expect(checkRolloutShape(object)).toBeUndefined();
  });

  it.each<[string, Json, string]>([
    [
      'two progressions in one group',
      isvc([{ components: ['engine'], canary: { steps: [lastStep] }, blueGreen: {} }]),
      'spec.rollout.groups[0]: at most one of canary, blueGreen, or rollingUpdate may be set on a rollout group',
    ],
    [
      'a canary on a RawDeployment component',
      isvc([canary(['engine'])], { deploymentMode: 'RawDeployment' }),
      'spec.rollout.groups[0]: component "engine" has deploymentMode="RawDeployment"; canary requires OMENative (CanaryRequiresOMENative)',
    ],
    [
      'a canary on a component annotated RawDeployment',
      isvc([canary(['engine'])], { deploymentMode: 'OMENative', engine: { annotations: { 'ome.io/deploymentMode': 'RawDeployment' } } }),
      'spec.rollout.groups[0]: component "engine" has deploymentMode="RawDeployment"; canary requires OMENative (CanaryRequiresOMENative)',
    ],
    [
      'a canary on an InferenceService annotated RawDeployment',
      isvc([canary(['engine'])], {}, { 'ome.io/deploymentMode': 'RawDeployment' }),
      'spec.rollout.groups[0]: component "engine" has deploymentMode="RawDeployment"; canary requires OMENative (CanaryRequiresOMENative)',
    ],
    [
      'a blue-green group on a RawDeployment component',
      isvc([{ components: ['engine'] }], { deploymentMode: 'RawDeployment' }),
      'spec.rollout.groups[0]: component "engine" has deploymentMode="RawDeployment"; coordination requires OMENative (CoordinationRequiresOMENative)',
    ],
    [
      'a component in two groups',
      isvc([{ components: ['engine'] }, { components: ['engine'] }]),
      'spec.rollout.groups: component "engine" appears in groups[0] and groups[1] (DuplicateComponentInCoordinationGroups)',
    ],
    [
      'an unknown component in a blue-green group',
      isvc([{ components: ['sidecar'] }]),
      'spec.rollout.groups[0]: component "sidecar" is not one of router/engine/decoder (InvalidComponentInCoordinationGroup)',
    ],
    [
      'an unknown component in a canary group',
      isvc([canary(['sidecar'])]),
      'spec.rollout.groups[0]: canary component "sidecar" is not one of router/engine/decoder (CanaryInvalid)',
    ],
    [
      'a group component the InferenceService does not declare',
      isvc([{ components: ['router'] }]),
      'spec.rollout.groups[0]: component(s) "router" not declared on the InferenceService (OrphanCoordinationGroup)',
    ],
    [
      'a canary component the InferenceService does not declare',
      isvc([canary(['router'])]),
      'spec.rollout.groups[0]: canary component "router" is not declared on the InferenceService (CanaryInvalid)',
    ],
    [
      'two canary groups on one unit',
      concurrent([canary(['engine']), canary(['decoder'])], { decoder: {} }),
      'spec.rollout.groups: canary unit "engine" is driven by both groups[0] and groups[1]; a unit may have at most one canary run (MultipleCanaryGroups)',
    ],
    [
      'a canary on the decoder without its engine',
      isvc([canary(['decoder'])], { decoder: {} }),
      'spec.rollout.groups[0]: a canary group covering the "engine" unit must include its entrypoint Component "engine" — that is what the step machine and traffic weight are driven through (CanaryInvalid)',
    ],
    [
      'a canary splitting engine from a declared decoder',
      isvc([canary(['engine'])], { decoder: {} }),
      'spec.rollout.groups[0]: this InferenceService declares both engine and decoder, so a canary group naming either must name both — they roll as one unit (CanaryInvalid)',
    ],
    [
      'maintainRatio on a canary',
      isvc([canary(['engine'], undefined, { maintainRatio: { tolerance: 5 } })]),
      'spec.rollout.groups[0]: maintainRatio is not honored on a canary group (the canary engine does not enforce it) — remove it, or use a blueGreen/rollingUpdate group for ratio-guarded rollout (CanaryInvalid)',
    ],
    [
      'a canary whose last step is not at 100% traffic',
      isvc([canary(['engine'], [gate('25%', 10)])]),
      'spec.rollout.groups[0].canary final step traffic must be 100, got 10 (CanaryInvalid)',
    ],
    [
      'soak on a canary group',
      isvc([canary(['engine'], undefined, { soak: '5m' })]),
      'spec.rollout.groups[0]: soak is not honored on a canary group (the canary engine does not gate on it) (SoakNotHonored)',
    ],
    [
      'soak where the groups run concurrently',
      isvc([{ components: ['engine'], soak: '5m' }]),
      'spec.rollout.groups[0]: soak is honored only when the rollout is a sequence of single-Component groups (which roll one-at-a-time); this rollout runs groups concurrently, so the soak would be dropped (SoakNotHonored)',
    ],
    [
      'an order entry outside the components',
      isvc([{ components: ['engine'], order: ['router'] }]),
      'spec.rollout.groups[0]: order entry "router" is not in components (InvalidCoordinationOrder)',
    ],
    [
      'an order upstream never applies',
      isvc([{ components: ['engine'], order: ['engine'] }]),
      'spec.rollout.groups[0]: order is not applied by any progression — the Components in a group advance together; to roll Components one at a time, declare one single-Component blueGreen group per Component, in the desired sequence (OrderNotHonored)',
    ],
    [
      'two groups whose order would be dropped',
      isvc([canary(['router']), canary(['engine'])], { router: {} }),
      'spec.rollout.groups: groups[] is ordered (group N completes before group N+1 begins), but that is enforced only for a run of single-Component blueGreen groups; groups[0] is a canary group, so the groups would run concurrently and the declared order would be dropped — set spec.rollout.groupOrdering: Concurrent if the groups are independent and running them at the same time is what you want (GroupOrderingNotHonored)',
    ],
    [
      'a reserved policyRef kind',
      isvc([{ components: ['engine'], policyRef: { name: 'p', progression: 'canary', kind: 'ClusterRolloutPolicy' } }]),
      'spec.rollout.groups[0].policyRef.kind: "ClusterRolloutPolicy" is a reserved shape; only "RolloutPolicy" is supported (RolloutPolicyRefInvalid)',
    ],
    [
      'a policyRef with an unknown progression',
      isvc([{ components: ['engine'], policyRef: { name: 'p', progression: 'linear' } }]),
      'spec.rollout.groups[0].policyRef.progression: "linear" must be one of canary, blueGreen, or rollingUpdate (RolloutPolicyRefInvalid)',
    ],
    [
      'a negative rollingUpdate budget',
      isvc([{ components: ['engine'], rollingUpdate: { maxSurge: -1 } }]),
      'spec.rollout.groups[0].rollingUpdate.maxSurge=-1 must be >= 0 (InvalidRollingUpdateInteger)',
    ],
    [
      'a rollingUpdate with both budgets zero',
      isvc([{ components: ['engine'], rollingUpdate: { maxSurge: 0, maxUnavailable: '0%' } }]),
      'spec.rollout.groups[0].rollingUpdate: maxSurge and maxUnavailable both resolve to zero, which deadlocks the rollout — set at least one non-zero (ZeroBudgetPacingUnstartable)',
    ],
    [
      'a maintainRatio tolerance out of range',
      isvc([{ components: ['engine'], maintainRatio: { tolerance: 101 } }]),
      'spec.rollout.groups[0]: maintainRatio.tolerance=101 must be between 0 and 100 (RatioToleranceOutOfRange)',
    ],
  ])('refuses %s', (_name, object, message) => {
    expect(checkRolloutShape(object)).toBe(message);
  });
});

describe('Function: checkCanaryPlan', () => {
  const where = 'spec.rollout.groups[0].canary';
  const analysisStep = (analysis: Json) => ({ capacity: '25%', traffic: 10, analysis });
  const metric = { name: 'errors', query: 'sum(x)', operator: 'LT', threshold: '0.05' };
  it.each<[string, Json, string | undefined]>([
    ['no steps', { steps: [] }, `${where}.steps must not be empty (CanaryInvalid)`],
    ['a quoted count', { steps: [gate('3', 10), lastStep] }, `${where}.steps[0].capacity: capacity "3" is not a percentage — use "<N>%" for a fraction of desired replicas, or an unquoted integer for an absolute count (CanaryInvalid)`],
    ['a capacity over 100%', { steps: [gate('120%', 10), lastStep] }, `${where}.steps[0].capacity: capacity "120%" must not exceed 100% (capacity is a fraction of desired replicas) (CanaryInvalid)`],
    ['falling traffic', { steps: [gate('50%', 50), gate('50%', 20), lastStep] }, `${where}.steps[1].traffic: traffic 20 must be >= the previous step's 50 (canary weights are non-decreasing) (CanaryInvalid)`],
    ['traffic to zero capacity', { steps: [gate('0%', 10), lastStep] }, `${where}.steps[0].capacity: capacity "0%" resolves to zero new capacity but traffic is 10 — a step cannot send traffic to zero capacity (CanaryInvalid)`],
    ['a last step below full capacity', { steps: [gate('25%', 10), { capacity: '50%', traffic: 100 }] }, `${where}.steps[1].capacity: final step capacity must be 100% (rollout completes at full capacity), got "50%" (CanaryInvalid)`],
    ['a zero readyTimeout', { steps: [lastStep], readyTimeout: '0s' }, `${where}.readyTimeout must be > 0 when set (CanaryInvalid)`],
    ['an analysis without interval', { steps: [analysisStep({ failureLimit: 1, metrics: [metric] }), lastStep] }, `${where}.steps[0].analysis: interval must be > 0 (AnalysisInvalid)`],
    ['an analysis with failureLimit 0', { steps: [analysisStep({ interval: '1m', failureLimit: 0, metrics: [metric] }), lastStep] }, `${where}.steps[0].analysis: failureLimit must be >= 1 (AnalysisInvalid)`],
    ['an analysis without metrics', { steps: [analysisStep({ interval: '1m', failureLimit: 1, metrics: [] }), lastStep] }, `${where}.steps[0].analysis: at least one metric is required (AnalysisInvalid)`],
    ['a duplicate metric', { steps: [analysisStep({ interval: '1m', failureLimit: 1, metrics: [metric, metric] }), lastStep] }, `${where}.steps[0].analysis.metrics[1]: duplicate metric name "errors" (AnalysisInvalid)`],
    ['a threshold that is not a number', { steps: [analysisStep({ interval: '1m', failureLimit: 1, metrics: [{ ...metric, threshold: 'low' }] }), lastStep] }, `${where}.steps[0].analysis.metrics[0] ("errors"): threshold "low" must be numeric (AnalysisInvalid)`],
    ['an unknown operator', { steps: [analysisStep({ interval: '1m', failureLimit: 1, metrics: [{ ...metric, operator: 'EQ' }] }), lastStep] }, `${where}.steps[0].analysis.metrics[0] ("errors"): operator "EQ" must be one of LT/LTE/GT/GTE (AnalysisInvalid)`],
    ['a well-formed analysis ladder', { steps: [analysisStep({ interval: '1m30s', failureLimit: 2, metrics: [metric] }), lastStep], readyTimeout: '10m' }, undefined],
  ])('%s', (_name, body, message) => {
    expect(checkCanaryPlan(where, body)).toBe(message);
  });
});

describe('Function: reviewAdmission, rollout shapes', () => {
  const lookupRuntime = async () => ({ found: true as const, kind: 'ServingRuntime' as const, disabled: false });
  const review = (operation: string, object: Json, oldObject?: Json) => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'u-1', kind: { group: 'ome.io', version: 'v1beta1', kind: 'InferenceService' }, operation, namespace: 'prod', object, ...(oldObject ? { oldObject } : {}) },
  });
  const raw = isvc([canary(['engine'])], { deploymentMode: 'RawDeployment' });
  const unordered = isvc([canary(['router']), canary(['engine'])], { router: {} });

  it('denies a refused shape with 403 Forbidden and upstream\'s message, before the pin rules', async () => {
    const pinnedToo = { ...raw, spec: { ...(raw.spec as Json), runtime: { name: 'srt', revision: 'r-prod-srt-0123abcd' } } };
    const { response } = await reviewAdmission(review('CREATE', pinnedToo), { lookupRuntime });
    expect(response).toEqual({
      uid: 'u-1',
      allowed: false,
      status: { code: 403, reason: 'Forbidden', message: 'spec.rollout.groups[0]: component "engine" has deploymentMode="RawDeployment"; canary requires OMENative (CanaryRequiresOMENative)' },
    });
  });

  it('applies the ordering rules on UPDATE only when spec.rollout changed', async () => {
    const relabelled = { ...unordered, metadata: { ...(unordered.metadata as Json), labels: { team: 'a' } } };
    expect((await reviewAdmission(review('UPDATE', relabelled, unordered), { lookupRuntime })).response.allowed).toBe(true);
    const before = isvc([canary(['router'])], { router: {} });
    const { response } = await reviewAdmission(review('UPDATE', unordered, before), { lookupRuntime });
    expect(response.allowed).toBe(false);
    expect(response.status?.message).toMatch(/\(GroupOrderingNotHonored\)$/);
    // The structural rules hold on every UPDATE.
    expect((await reviewAdmission(review('UPDATE', raw, raw), { lookupRuntime })).response.allowed).toBe(false);
  });

  it('admits any UPDATE of an object already being deleted, as upstream does', async () => {
    const deleting = { ...raw, metadata: { ...(raw.metadata as Json), deletionTimestamp: '2026-09-28T14:15:57Z' } };
    expect((await reviewAdmission(review('UPDATE', raw, deleting), { lookupRuntime })).response.allowed).toBe(true);
  });
});
