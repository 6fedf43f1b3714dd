/**
 * Conditions as OME writes them. InferenceService status uses knative's duck type
 * (`severity`, no per-condition `observedGeneration`); RolloutPolicy and runtime status use
 * `metav1.Condition`.
 */

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** knative `apis.Condition`: the conditions of `InferenceService.status.conditions`. */
export interface Condition {
  type: string;
  status: ConditionStatus;
  /** '' (or absent) means Error; OME's informational conditions carry `Info` or `Warning`. */
  severity?: '' | 'Error' | 'Warning' | 'Info';
  /** RFC 3339, second precision. */
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

/** `metav1.Condition`, used by RolloutPolicy and runtime status. */
export interface MetaCondition {
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}
