/**
 * Go-JSON schemas for the rollout structs, in upstream's declaration order with its
 * json tags (`pkg/apis/ome/v1beta1/rollout_types.go`, `rolloutpolicy_types.go`).
 * A field added upstream must be added here in the same position, or digests diverge.
 */
import {
  goBool,
  goDuration,
  goInt,
  goIntOrString,
  goMap,
  goPointer,
  goSlice,
  goString,
  goStruct,
  type GoType,
} from '../go-json';

const rolloutPause = goStruct([{ name: 'duration', type: goPointer(goDuration), omitempty: true }]);

const analysisMetric = goStruct([
  { name: 'name', type: goString },
  { name: 'query', type: goString },
  { name: 'operator', type: goString },
  { name: 'threshold', type: goString },
]);

const rolloutAnalysis = goStruct([
  { name: 'interval', type: goDuration },
  { name: 'initialDelay', type: goPointer(goDuration), omitempty: true },
  { name: 'failureLimit', type: goInt },
  { name: 'onInconclusive', type: goPointer(goString), omitempty: true },
  { name: 'metrics', type: goSlice(analysisMetric) },
]);

const canaryStep = goStruct([
  { name: 'capacity', type: goIntOrString },
  { name: 'traffic', type: goInt },
  { name: 'pause', type: goPointer(rolloutPause), omitempty: true },
  { name: 'analysis', type: goPointer(rolloutAnalysis), omitempty: true },
]);

const secretKeySelector = goStruct([
  // corev1.LocalObjectReference is inlined: its `name,omitempty` comes first.
  { name: 'name', type: goString, omitempty: true },
  { name: 'key', type: goString },
  { name: 'optional', type: goPointer(goBool), omitempty: true },
]);

const analysisPrometheus = goStruct([
  { name: 'providerRef', type: goPointer(goStruct([{ name: 'name', type: goString }])), omitempty: true },
  { name: 'serverAddress', type: goString, omitempty: true },
  { name: 'authRef', type: goPointer(secretKeySelector), omitempty: true },
  { name: 'headers', type: goMap(goString), omitempty: true },
]);

export const groupCanarySchema: GoType = goStruct([
  { name: 'steps', type: goSlice(canaryStep), omitempty: true },
  { name: 'prometheus', type: goPointer(analysisPrometheus), omitempty: true },
  { name: 'scaleDownDelaySeconds', type: goPointer(goInt), omitempty: true },
  { name: 'readyTimeout', type: goPointer(goDuration), omitempty: true },
]);

export const groupBlueGreenSchema: GoType = goStruct([]);

export const groupRollingUpdateSchema: GoType = goStruct([
  { name: 'maxSurge', type: goPointer(goIntOrString), omitempty: true },
  { name: 'maxUnavailable', type: goPointer(goIntOrString), omitempty: true },
]);

export const policyRefSchema: GoType = goStruct([
  { name: 'name', type: goString },
  { name: 'progression', type: goString },
  { name: 'kind', type: goString, omitempty: true },
]);

const maintainRatio = goStruct([{ name: 'tolerance', type: goPointer(goInt), omitempty: true }]);

/** `RolloutPolicySpec`: the struct every progression digest is computed over. */
export const rolloutPolicySpecSchema: GoType = goStruct([
  { name: 'canary', type: goPointer(groupCanarySchema), omitempty: true },
  { name: 'blueGreen', type: goPointer(groupBlueGreenSchema), omitempty: true },
  { name: 'rollingUpdate', type: goPointer(groupRollingUpdateSchema), omitempty: true },
]);

/** `RolloutGroup`, as spec.rollout.groups[] and the pinned plan carry it. */
export const rolloutGroupSchema: GoType = goStruct([
  { name: 'components', type: goSlice(goString) },
  { name: 'order', type: goSlice(goString), omitempty: true },
  { name: 'canary', type: goPointer(groupCanarySchema), omitempty: true },
  { name: 'blueGreen', type: goPointer(groupBlueGreenSchema), omitempty: true },
  { name: 'rollingUpdate', type: goPointer(groupRollingUpdateSchema), omitempty: true },
  { name: 'policyRef', type: goPointer(policyRefSchema), omitempty: true },
  { name: 'soak', type: goPointer(goDuration), omitempty: true },
  { name: 'maintainRatio', type: goPointer(maintainRatio), omitempty: true },
]);

/** `RolloutSpec.groups` alone; used to compare plan shapes after Go normalisation. */
export const durationSchema: GoType = goPointer(goDuration);
