/**
 * RolloutPolicy status as upstream's RolloutPolicy status controller writes it (OP
 * `pkg/controller/v1beta1/rolloutpolicy` status reconciler; fields and reasons from
 * `pkg/apis/ome/v1beta1/rolloutpolicy_types.go`): `observedGeneration`, `portableDigest`,
 * `attachedGroups` and the Ready and InUse conditions, nothing else. Pure observation: a
 * policy's status never moves a run.
 */
import { checkRolloutPolicySpec, providerRefNameOf } from './admission';
import { digestPolicySpec } from './digest';
import { formatKubeTime } from './run';
import type { RolloutPolicySpec } from './types';

export const PolicyConditionType = { ready: 'Ready', inUse: 'InUse' } as const;

export const PolicyConditionReason = {
  bodyValid: 'BodyValid',
  bodyInvalid: 'BodyInvalid',
  providerUnbound: 'ProviderUnbound',
  attached: 'Attached',
  noConsumers: 'NoConsumers',
} as const;

/** A `metav1.Condition`, keys in Go's order. */
export interface PolicyCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** `RolloutPolicyStatus`: Go's omitempty drops a zero generation, digest or count. */
export interface PolicyStatus {
  observedGeneration?: number;
  portableDigest?: string;
  attachedGroups?: number;
  conditions?: PolicyCondition[];
}

/** The groups of one InferenceService, as attachment counting reads them. */
export interface PolicyConsumer {
  namespace: string;
  groups: readonly { policyRef?: { name?: string } }[];
}

/**
 * How many rollout groups in the policy's namespace name it — groups, not
 * InferenceServices: one service referencing the policy from two groups counts twice.
 */
export function countAttachedGroups(consumers: readonly PolicyConsumer[], namespace: string, policyName: string): number {
  return consumers
    .filter((consumer) => consumer.namespace === namespace)
    .reduce((count, consumer) => count + consumer.groups.filter((group) => group.policyRef?.name === policyName).length, 0);
}

type NewCondition = Omit<PolicyCondition, 'lastTransitionTime'>;

/** The portable digest of the spec, or the error that kept it from digesting. */
function digestOf(spec: RolloutPolicySpec): { digest: string } | { error: string } {
  try {
    return { digest: digestPolicySpec(spec) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

function readyCondition(
  spec: RolloutPolicySpec,
  generation: number | undefined,
  digested: { digest: string } | { error: string },
  boundProviders: ReadonlySet<string>,
): NewCondition {
  const base = { type: PolicyConditionType.ready, ...(generation ? { observedGeneration: generation } : {}) };
  const problem = checkRolloutPolicySpec(spec);
  if (problem) return { ...base, status: 'False', reason: PolicyConditionReason.bodyInvalid, message: problem };
  if ('error' in digested) return { ...base, status: 'False', reason: PolicyConditionReason.bodyInvalid, message: `compute portable digest: ${digested.error}` };
  const provider = providerRefNameOf(spec.canary);
  if (!provider) return { ...base, status: 'True', reason: PolicyConditionReason.bodyValid, message: 'progression body passes plan validation' };
  if (!boundProviders.has(provider)) {
    return {
      ...base,
      status: 'True',
      reason: PolicyConditionReason.providerUnbound,
      message: `progression body is valid, but metric provider ${JSON.stringify(provider)} is not bound on this cluster — a rollout opened here parks at run open until the binding exists`,
    };
  }
  return { ...base, status: 'True', reason: PolicyConditionReason.bodyValid, message: 'progression body passes plan validation and its metric provider is bound' };
}

function inUseCondition(generation: number | undefined, attached: number): NewCondition {
  const base = { type: PolicyConditionType.inUse, ...(generation ? { observedGeneration: generation } : {}) };
  if (attached > 0) return { ...base, status: 'True', reason: PolicyConditionReason.attached, message: `${attached} rollout group(s) reference this policy` };
  return { ...base, status: 'False', reason: PolicyConditionReason.noConsumers, message: 'no rollout group references this policy' };
}

/**
 * apimachinery's `SetStatusCondition`: a new condition is stamped now; an existing one
 * keeps its lastTransitionTime unless its status changes, and takes the new reason,
 * message and observedGeneration. Other conditions stay as they are, in place.
 */
export function setPolicyCondition(conditions: readonly PolicyCondition[], next: NewCondition, now: Date): PolicyCondition[] {
  const index = conditions.findIndex((condition) => condition.type === next.type);
  const previous = conditions[index];
  const lastTransitionTime = previous && previous.status === next.status && previous.lastTransitionTime ? previous.lastTransitionTime : formatKubeTime(now);
  const stamped: PolicyCondition = {
    type: next.type,
    status: next.status,
    ...(next.observedGeneration ? { observedGeneration: next.observedGeneration } : {}),
    lastTransitionTime,
    reason: next.reason,
    message: next.message,
  };
  if (index < 0) return [...conditions, stamped];
  return conditions.map((condition, i) => (i === index ? stamped : condition));
}

/**
 * The status upstream's controller would write for one policy: observed generation, the
 * portable digest of its spec (also of an invalid body; none when it does not digest), the
 * attached-group count and the Ready/InUse conditions. `boundProviders` are the metric
 * providers bound on the cluster; a body naming another stays Ready with ProviderUnbound.
 */
export function computePolicyStatus(input: {
  generation?: number;
  spec: RolloutPolicySpec;
  previous?: PolicyStatus;
  attachedGroups: number;
  boundProviders: ReadonlySet<string>;
  now: Date;
}): PolicyStatus {
  const { generation, previous, attachedGroups, now } = input;
  const digested = digestOf(input.spec);
  const digest = 'digest' in digested ? digested.digest : undefined;
  let conditions = setPolicyCondition(previous?.conditions ?? [], readyCondition(input.spec, generation, digested, input.boundProviders), now);
  conditions = setPolicyCondition(conditions, inUseCondition(generation, attachedGroups), now);
  return {
    ...(generation ? { observedGeneration: generation } : {}),
    ...(digest ? { portableDigest: digest } : {}),
    ...(attachedGroups > 0 ? { attachedGroups } : {}),
    conditions,
  };
}
