/**
 * Plan status on spec and policy changes: `status.rollout.groups[]`, RolloutPlanReady and
 * RolloutPlanDrift recomputed from a fresh render. A RolloutPolicy change fans out to
 * every InferenceService in its namespace whose groups name it (in the spec, or in the
 * plan its active run pinned).
 */
import { Resources } from '../../domain/model/resources';
import type { Clock } from '../../ports/clock';
import type { ClusterClient } from '../../ports/cluster';
import type { MetricsBinding } from '../../domain/rollout/analysis';
import { applyPlanStatus, commitStatus, getRolloutIsvc, hasRolloutState, renderLivePlan, specGroupsOf, type RolloutIsvc, type RolloutIsvcStatus } from './rollout-status';

export interface RefreshPlanStatusDeps {
  client: ClusterClient;
  clock: Clock;
  /** What the cluster binds for analysis steps (see renderLivePlan); nothing by default. */
  metrics?: MetricsBinding;
}

export type RefreshPlanStatusResult = 'gone' | 'not-rolled-out' | 'unchanged' | 'updated';

/** Recomputes one ISVC's plan status. Call under the object's lease. */
export async function refreshPlanStatus(
  deps: RefreshPlanStatusDeps,
  key: { namespace: string; name: string; uid?: string },
): Promise<RefreshPlanStatusResult> {
  const isvc = await getRolloutIsvc(deps.client, key.namespace, key.name);
  if (!isvc || (key.uid && isvc.metadata.uid !== key.uid)) return 'gone';
  if (!hasRolloutState(isvc)) return 'not-rolled-out';
  const status: RolloutIsvcStatus = structuredClone(isvc.status ?? {});
  applyPlanStatus(status, isvc, await renderLivePlan(deps.client, isvc, deps.metrics), new Date(deps.clock.now()));
  if (JSON.stringify(status) === JSON.stringify(isvc.status ?? {})) return 'unchanged';
  await commitStatus(deps.client, isvc, status);
  return 'updated';
}

/** Whether an ISVC's spec groups or its active run's pinned groups name the policy. */
export function referencesPolicy(isvc: RolloutIsvc, policyName: string): boolean {
  const spec = specGroupsOf(isvc).some((group) => group.policyRef?.name === policyName);
  const pinned = (isvc.status?.rollout?.activeRun?.plan.groups ?? []).some((group) => group.policyRef?.name === policyName);
  return spec || pinned;
}

/** The InferenceServices a change of RolloutPolicy `namespace/name` concerns. */
export async function listPolicyConsumers(client: ClusterClient, namespace: string, policyName: string): Promise<RolloutIsvc[]> {
  const consumers: RolloutIsvc[] = [];
  let continueToken: string | undefined;
  do {
    const page = await client.list<RolloutIsvc>(Resources.inferenceServices, {
      namespace,
      limit: 500,
      ...(continueToken ? { continue: continueToken } : {}),
    });
    consumers.push(...page.items.filter((isvc) => referencesPolicy(isvc, policyName)));
    continueToken = page.continue;
  } while (continueToken);
  return consumers;
}
