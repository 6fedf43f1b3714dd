/** Rollout runs: opening, executing and closing them, plan status, repin and promote. */
export { createRolloutWorkloadWriter, RolloutRunMessage, type RolloutWorkloadWriterDeps } from './rollout-workload-writer';
export { advanceRolloutRun, type AdvanceRolloutRunDeps, type AdvanceRolloutRunResult } from './advance-rollout-run';
export { refreshPlanStatus, listPolicyConsumers, referencesPolicy, type RefreshPlanStatusResult } from './refresh-plan-status';
export {
  applyRepin,
  RepinInProgressError,
  type ApplyRepinDeps,
  type ApplyRepinResult,
  type RepinMetrics,
  type RepinRequestKey,
} from './apply-repin';
export { policyConsumerOf, refreshPolicyStatus, refreshPolicyStatuses, type RefreshPolicyStatusDeps, type RefreshPolicyStatusResult } from './refresh-policy-status';
export { commitStatus, ROLLOUT_CONTROLLER } from './rollout-status';
export {
  canaryDeploymentName,
  computeWorkloadRevision,
  CANARY_ROLE,
  ROLLOUT_ROLE_LABEL,
  WORKLOAD_REVISION_ANNOTATION,
} from './workloads';
