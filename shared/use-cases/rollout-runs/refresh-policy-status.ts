/**
 * Writes every RolloutPolicy's status in a cluster, as upstream's RolloutPolicy status
 * controller does (see shared/domain/rollout/policy-status.ts). The rollout-run schedule calls it
 * once a minute with the InferenceServices it has just listed, so attaching or detaching a
 * group and editing a policy both show within a minute.
 */
import { ConflictError, NotFoundError } from '../../domain/errors';
import { Resources } from '../../domain/model/resources';
import type { Clock } from '../../ports/clock';
import type { ClusterClient, KubeObject } from '../../ports/cluster';
import { computePolicyStatus, countAttachedGroups, type PolicyConsumer, type PolicyStatus } from '../../domain/rollout/policy-status';
import type { RolloutPolicySpec } from '../../domain/rollout/types';
import { specGroupsOf, type RolloutIsvc } from './rollout-status';

export interface RefreshPolicyStatusDeps {
  client: ClusterClient;
  clock: Clock;
  /**
   * Metric providers bound on this cluster (its inferenceservice-config `metricProviders`).
   * Without them a body naming a providerRef reports Ready/ProviderUnbound, as upstream
   * does with no binding source.
   */
  boundProviders?: ReadonlySet<string>;
}

export interface RefreshPolicyStatusResult {
  updated: number;
  unchanged: number;
  /** Lost to a concurrent write or a delete: the next pass takes them up again. */
  skipped: number;
}

type PolicyObject = KubeObject & { spec?: RolloutPolicySpec; status?: PolicyStatus };

/** What attachment counting needs from an InferenceService: its namespace and spec groups. */
export function policyConsumerOf(isvc: RolloutIsvc): PolicyConsumer {
  return { namespace: isvc.metadata.namespace ?? '', groups: specGroupsOf(isvc) };
}

/**
 * One page of the cluster's RolloutPolicies; none where the API is not served (upstream
 * installs the RolloutPolicy CRD only with `ome.rolloutPolicy.enabled`).
 */
async function listPolicies(client: ClusterClient, continueToken: string | undefined): Promise<{ items: PolicyObject[]; continue?: string }> {
  try {
    return await client.list<PolicyObject>(Resources.rolloutPolicies, { limit: 500, ...(continueToken ? { continue: continueToken } : {}) });
  } catch (error) {
    if (error instanceof NotFoundError) return { items: [] };
    throw error;
  }
}

type PolicyOutcome = 'updated' | 'unchanged' | 'skipped';

/** Computes one policy's status and writes it when it changed. */
async function writePolicyStatus(
  deps: RefreshPolicyStatusDeps,
  policy: PolicyObject,
  consumers: readonly PolicyConsumer[],
  now: Date,
): Promise<PolicyOutcome> {
  const status = computePolicyStatus({
    ...(policy.metadata.generation === undefined ? {} : { generation: policy.metadata.generation }),
    spec: policy.spec ?? {},
    ...(policy.status ? { previous: policy.status } : {}),
    attachedGroups: countAttachedGroups(consumers, policy.metadata.namespace ?? '', policy.metadata.name),
    boundProviders: deps.boundProviders ?? new Set(),
    now,
  });
  if (JSON.stringify(status) === JSON.stringify(policy.status ?? {})) return 'unchanged';
  try {
    // The read's resourceVersion guards the write: a policy edited since is computed again next pass.
    await deps.client.replaceStatus(Resources.rolloutPolicies, { ...policy, status });
    return 'updated';
  } catch (error) {
    if (!(error instanceof ConflictError || error instanceof NotFoundError)) throw error;
    return 'skipped';
  }
}

/** Recomputes and writes each policy's status; a status that would not change is not written. */
export async function refreshPolicyStatuses(deps: RefreshPolicyStatusDeps, consumers: readonly PolicyConsumer[]): Promise<RefreshPolicyStatusResult> {
  const result: RefreshPolicyStatusResult = { updated: 0, unchanged: 0, skipped: 0 };
  const now = new Date(deps.clock.now());
  let continueToken: string | undefined;
  do {
    const page = await listPolicies(deps.client, continueToken);
    for (const policy of page.items) result[await writePolicyStatus(deps, policy, consumers, now)] += 1;
    continueToken = page.continue;
  } while (continueToken);
  return result;
}

/**
 * One policy's status, counting the groups of its namespace's InferenceServices: for a
 * change of the policy itself, so that its consumers, refreshed next, read the Ready it
 * now has rather than the one before the edit.
 */
export async function refreshPolicyStatus(deps: RefreshPolicyStatusDeps, key: { namespace: string; name: string }): Promise<PolicyOutcome | 'gone'> {
  let policy: PolicyObject;
  try {
    policy = await deps.client.get<PolicyObject>(Resources.rolloutPolicies, key.namespace, key.name);
  } catch (error) {
    if (error instanceof NotFoundError) return 'gone';
    throw error;
  }
  const consumers: PolicyConsumer[] = [];
  let continueToken: string | undefined;
  do {
    const page = await deps.client.list<RolloutIsvc>(Resources.inferenceServices, { namespace: key.namespace, limit: 500, ...(continueToken ? { continue: continueToken } : {}) });
    consumers.push(...page.items.map(policyConsumerOf));
    continueToken = page.continue;
  } while (continueToken);
  return writePolicyStatus(deps, policy, consumers, new Date(deps.clock.now()));
}
