/**
 * The rollout shapes upstream OME's InferenceService webhook refuses, with its words.
 *
 * Upstream's validator runs, in this order: `ValidateRolloutPolicyRefs`, `ValidateCanary`,
 * `ValidateCoordination`, then `ValidateRolloutOrderingEnforced` (on UPDATE only when
 * `spec.rollout` changed). Sources, OP = ome-projects/ome: `pkg/validation/{rolloutpolicyref,
 * canary,coordination}.go`@4ff3b6e3/dcfb4135, `pkg/validation/lifecycle.go` (budgets),
 * `pkg/rollout` (`CanaryUnitsOf`) and `pkg/webhook/admission/isvc/inference_service_validation.go`.
 * Each message ends with upstream's reason in parentheses, as upstream's do.
 *
 * Two deliberate differences (docs/pinning.md, "Differences from upstream OME"):
 * - A component with no declared deployment mode counts as OMENative, the plane's
 *   default; upstream refuses it (its defaulter declares OMENative only for
 *   leader/worker engines). A declared mode other than OMENative is refused as upstream
 *   does, read from the component's `ome.io/deploymentMode` annotation, then the
 *   InferenceService's, then `spec.deploymentMode`.
 * - The inline plan-size cap (`RolloutMaxPlanBytes`) and the UPDATE-only lockstep and
 *   pairing-protocol rules are not checked: the cap is upstream operator configuration
 *   (uncapped by default), and lockstep needs upstream's revision-affecting spec view.
 *
 * The object arrives as parsed JSON that the API server's schema has checked (or not,
 * for callers that bypass it), so every rule reads it defensively.
 */
import { Annotation } from '../vocabulary';

export const RolloutAdmissionReason = {
  rolloutPolicyInvalid: 'RolloutPolicyInvalid',
  rolloutPolicyRefInvalid: 'RolloutPolicyRefInvalid',
  canaryInvalid: 'CanaryInvalid',
  canaryRequiresOMENative: 'CanaryRequiresOMENative',
  multipleCanaryGroups: 'MultipleCanaryGroups',
  analysisInvalid: 'AnalysisInvalid',
  duplicateComponent: 'DuplicateComponentInCoordinationGroups',
  invalidComponent: 'InvalidComponentInCoordinationGroup',
  coordinationRequiresOMENative: 'CoordinationRequiresOMENative',
  ratioToleranceOutOfRange: 'RatioToleranceOutOfRange',
  orphanGroup: 'OrphanCoordinationGroup',
  invalidOrder: 'InvalidCoordinationOrder',
  duplicateOrder: 'SequentialDuplicateOrder',
  soakNotHonored: 'SoakNotHonored',
  groupOrderingNotHonored: 'GroupOrderingNotHonored',
  orderNotHonored: 'OrderNotHonored',
  invalidRollingUpdateInteger: 'InvalidRollingUpdateInteger',
  invalidRollingUpdatePercent: 'InvalidRollingUpdatePercent',
  zeroBudget: 'ZeroBudgetPacingUnstartable',
} as const;

const OME_NATIVE = 'OMENative';
const COMPONENTS = ['router', 'engine', 'decoder'] as const;
const PROGRESSIONS = ['canary', 'blueGreen', 'rollingUpdate'] as const;
const CONCURRENT = 'Concurrent';

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function recordAt(value: unknown, key: string): Json | undefined {
  return isRecord(value) && isRecord(value[key]) ? value[key] : undefined;
}

function listAt(value: unknown, key: string): unknown[] {
  return isRecord(value) && Array.isArray(value[key]) ? value[key] : [];
}

function textAt(value: unknown, key: string): string | undefined {
  return isRecord(value) && typeof value[key] === 'string' ? value[key] : undefined;
}

/** Go's `%q` for the plain strings these messages quote. */
const q = (value: unknown): string => JSON.stringify(typeof value === 'string' ? value : String(value));

/** A group as the rules read it: components as strings, everything else as stored. */
interface Group {
  readonly raw: Json;
  readonly components: string[];
  readonly order: string[];
}

function groupsOf(spec: Json | undefined): Group[] {
  return listAt(recordAt(spec, 'rollout'), 'groups').map((raw) => {
    const group = isRecord(raw) ? raw : {};
    return {
      raw: group,
      components: listAt(group, 'components').map(String),
      order: listAt(group, 'order').map(String),
    };
  });
}

/** Upstream's declared kind: the inline arm, else the policyRef's progression, else blueGreen. */
function kindOf(group: Group): string {
  const inline = PROGRESSIONS.find((kind) => group.raw[kind] !== undefined && group.raw[kind] !== null);
  return inline ?? textAt(group.raw.policyRef, 'progression') ?? 'blueGreen';
}

/** The components the InferenceService declares (a `spec.<component>` section). */
function declaredComponents(spec: Json | undefined): Set<string> {
  return new Set(COMPONENTS.filter((component) => recordAt(spec, component) !== undefined));
}

/**
 * A declared component's deployment mode: its own annotation, then the InferenceService's,
 * then `spec.deploymentMode`; empty when none is declared (the plane's OMENative default).
 */
function declaredModeOf(isvc: Json, component: string): string {
  const spec = recordAt(isvc, 'spec');
  const own = textAt(recordAt(recordAt(spec, component), 'annotations'), Annotation.deploymentMode);
  const top = textAt(recordAt(recordAt(isvc, 'metadata'), 'annotations'), Annotation.deploymentMode);
  return own || top || textAt(spec, 'deploymentMode') || '';
}

function refusesMode(mode: string): boolean {
  return mode !== '' && mode !== OME_NATIVE;
}

/** `CanaryUnit`: the router is its own unit; engine and decoder are one, named engine. */
function canaryUnitsOf(group: Group): string[] {
  return [...new Set(group.components.map((component) => (component === 'decoder' ? 'engine' : component)))];
}

type IntOrString = number | string;

function intOrStringAt(value: unknown, key: string): IntOrString | undefined {
  if (!isRecord(value)) return undefined;
  const field = value[key];
  return typeof field === 'number' || typeof field === 'string' ? field : undefined;
}

/** `parseCanaryCapacity`: an integer >= 0 or `"<N>%"` with N in [0,100]. */
function parseCanaryCapacity(capacity: IntOrString | undefined): { value: number; percent: boolean } | { error: string } {
  if (capacity === undefined || typeof capacity === 'number') {
    const n = capacity ?? 0;
    return n < 0 ? { error: `capacity ${n} must not be negative` } : { value: n, percent: false };
  }
  if (!capacity.endsWith('%')) {
    return { error: `capacity ${q(capacity)} is not a percentage — use "<N>%" for a fraction of desired replicas, or an unquoted integer for an absolute count` };
  }
  const digits = capacity.slice(0, -1);
  if (!/^[+-]?\d+$/.test(digits)) return { error: `capacity ${q(capacity)} is not a valid percentage — use "<N>%" with integer N in [0,100]` };
  const n = Number(digits);
  if (n < 0) return { error: `capacity ${q(capacity)} must not be negative` };
  if (n > 100) return { error: `capacity ${q(capacity)} must not exceed 100% (capacity is a fraction of desired replicas)` };
  return { value: n, percent: true };
}

/** Go's time.ParseDuration sign, enough to tell `> 0`: undefined when it does not parse. */
function durationIsPositive(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const match = /^([+-]?)((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$/.exec(value);
  if (!match || match[1] === '-') return false;
  return /[1-9]/.test(value.replace(/(ns|us|µs|ms|s|m|h)/g, ''));
}

/** `ValidateCanaryPlan`: the body rules of one canary progression, `where` naming its path. */
export function checkCanaryPlan(where: string, canary: Json): string | undefined {
  const steps = listAt(canary, 'steps');
  const reason = RolloutAdmissionReason.canaryInvalid;
  if (steps.length === 0) return `${where}.steps must not be empty (${reason})`;
  const analysis = checkCanaryAnalysis(where, steps);
  if (analysis) return analysis;
  if (canary.readyTimeout !== undefined && !durationIsPositive(canary.readyTimeout)) return `${where}.readyTimeout must be > 0 when set (${reason})`;
  const lastTraffic = Number((steps[steps.length - 1] as Json | undefined)?.traffic ?? 0);
  if (lastTraffic !== 100) return `${where} final step traffic must be 100, got ${lastTraffic} (${reason})`;
  let previous = 0;
  for (const [i, step] of steps.entries()) {
    const capacity = intOrStringAt(step, 'capacity');
    const parsed = parseCanaryCapacity(capacity);
    if ('error' in parsed) return `${where}.steps[${i}].capacity: ${parsed.error} (${reason})`;
    const traffic = Number((step as Json).traffic ?? 0);
    if (traffic < 0 || traffic > 100) return `${where}.steps[${i}].traffic: traffic ${traffic} must be in [0,100] (${reason})`;
    if (traffic < previous) {
      return `${where}.steps[${i}].traffic: traffic ${traffic} must be >= the previous step's ${previous} (canary weights are non-decreasing) (${reason})`;
    }
    previous = traffic;
    if (traffic > 0 && parsed.value === 0) {
      return `${where}.steps[${i}].capacity: capacity ${q(String(capacity ?? 0))} resolves to zero new capacity but traffic is ${traffic} — a step cannot send traffic to zero capacity (${reason})`;
    }
    if (i === steps.length - 1 && parsed.percent && parsed.value !== 100) {
      return `${where}.steps[${i}].capacity: final step capacity must be 100% (rollout completes at full capacity), got ${q(String(capacity))} (${reason})`;
    }
  }
  return undefined;
}

function checkCanaryAnalysis(where: string, steps: readonly unknown[]): string | undefined {
  const reason = RolloutAdmissionReason.analysisInvalid;
  for (const [si, step] of steps.entries()) {
    const analysis = recordAt(step, 'analysis');
    if (!analysis) continue;
    const at = `${where}.steps[${si}].analysis`;
    if (!durationIsPositive(analysis.interval)) return `${at}: interval must be > 0 (${reason})`;
    if (!(Number(analysis.failureLimit ?? 0) >= 1)) return `${at}: failureLimit must be >= 1 (${reason})`;
    const metrics = listAt(analysis, 'metrics');
    if (metrics.length === 0) return `${at}: at least one metric is required (${reason})`;
    const seen = new Set<string>();
    for (const [mi, raw] of metrics.entries()) {
      const metric = isRecord(raw) ? raw : {};
      const name = typeof metric.name === 'string' ? metric.name : '';
      if (name === '') return `${at}.metrics[${mi}].name must not be empty (${reason})`;
      if (seen.has(name)) return `${at}.metrics[${mi}]: duplicate metric name ${q(name)} (${reason})`;
      seen.add(name);
      if (typeof metric.query !== 'string' || metric.query.trim() === '') return `${at}.metrics[${mi}] (${q(name)}): query must not be empty (${reason})`;
      const threshold = typeof metric.threshold === 'string' ? metric.threshold : '';
      if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$|^[+-]?(inf|infinity|nan)$/i.test(threshold)) {
        return `${at}.metrics[${mi}] (${q(name)}): threshold ${q(threshold)} must be numeric (${reason})`;
      }
      if (!['LT', 'LTE', 'GT', 'GTE'].includes(String(metric.operator))) {
        return `${at}.metrics[${mi}] (${q(name)}): operator ${q(metric.operator ?? '')} must be one of LT/LTE/GT/GTE (${reason})`;
      }
    }
  }
  return undefined;
}

/** `ValidateRolloutPolicyRefs` (the feature is on wherever the plane serves RolloutPolicy). */
function checkPolicyRefs(groups: readonly Group[]): string | undefined {
  const reason = RolloutAdmissionReason.rolloutPolicyRefInvalid;
  for (const [i, group] of groups.entries()) {
    const ref = recordAt(group.raw, 'policyRef');
    if (!ref) continue;
    const kind = textAt(ref, 'kind') ?? '';
    if (kind !== '' && kind !== 'RolloutPolicy') {
      return `spec.rollout.groups[${i}].policyRef.kind: ${q(kind)} is a reserved shape; only "RolloutPolicy" is supported (${reason})`;
    }
    if (!textAt(ref, 'name')) return `spec.rollout.groups[${i}].policyRef.name must not be empty (${reason})`;
    const progression = textAt(ref, 'progression') ?? '';
    if (!(PROGRESSIONS as readonly string[]).includes(progression)) {
      return `spec.rollout.groups[${i}].policyRef.progression: ${q(progression)} must be one of canary, blueGreen, or rollingUpdate (${reason})`;
    }
  }
  return undefined;
}

/** The CRD's one-of rule (its CEL message; the API server applies it before any webhook), for callers that bypass the schema. */
function checkOneProgression(groups: readonly Group[]): string | undefined {
  for (const [i, group] of groups.entries()) {
    const set = PROGRESSIONS.filter((kind) => group.raw[kind] !== undefined && group.raw[kind] !== null);
    if (set.length > 1) {
      return `spec.rollout.groups[${i}]: at most one of canary, blueGreen, or rollingUpdate may be set on a rollout group`;
    }
  }
  return undefined;
}

/** `ValidateCanary`: one canary run per unit, the inline body, and each canary group's shape. */
function checkCanaryGroups(isvc: Json, groups: readonly Group[]): string | undefined {
  const spec = recordAt(isvc, 'spec');
  const declared = declaredComponents(spec);
  const reason = RolloutAdmissionReason.canaryInvalid;
  const ownerOf = new Map<string, number>();
  for (const [gi, group] of groups.entries()) {
    if (kindOf(group) !== 'canary') continue;
    for (const unit of canaryUnitsOf(group)) {
      const previous = ownerOf.get(unit);
      if (previous !== undefined) {
        return `spec.rollout.groups: canary unit ${q(unit)} is driven by both groups[${previous}] and groups[${gi}]; a unit may have at most one canary run (${RolloutAdmissionReason.multipleCanaryGroups})`;
      }
      ownerOf.set(unit, gi);
    }
  }
  for (const [gi, group] of groups.entries()) {
    if (kindOf(group) !== 'canary') continue;
    const inline = recordAt(group.raw, 'canary');
    if (inline) {
      const body = checkCanaryPlan(`spec.rollout.groups[${gi}].canary`, inline);
      if (body) return body;
    }
    for (const component of group.components) {
      if (!(COMPONENTS as readonly string[]).includes(component)) {
        return `spec.rollout.groups[${gi}]: canary component ${q(component)} is not one of router/engine/decoder (${reason})`;
      }
      if (!declared.has(component)) return `spec.rollout.groups[${gi}]: canary component ${q(component)} is not declared on the InferenceService (${reason})`;
      const mode = declaredModeOf(isvc, component);
      if (refusesMode(mode)) {
        return `spec.rollout.groups[${gi}]: component ${q(component)} has deploymentMode=${q(mode)}; canary requires OMENative (${RolloutAdmissionReason.canaryRequiresOMENative})`;
      }
    }
    for (const unit of canaryUnitsOf(group)) {
      if (!group.components.includes(unit)) {
        return `spec.rollout.groups[${gi}]: a canary group covering the ${q(unit)} unit must include its entrypoint Component ${q(unit)} — that is what the step machine and traffic weight are driven through (${reason})`;
      }
    }
    if (declared.has('engine') && declared.has('decoder') && group.components.includes('engine') !== group.components.includes('decoder')) {
      return `spec.rollout.groups[${gi}]: this InferenceService declares both engine and decoder, so a canary group naming either must name both — they roll as one unit (${reason})`;
    }
    if (group.raw.maintainRatio !== undefined && group.raw.maintainRatio !== null) {
      return `spec.rollout.groups[${gi}]: maintainRatio is not honored on a canary group (the canary engine does not enforce it) — remove it, or use a blueGreen/rollingUpdate group for ratio-guarded rollout (${reason})`;
    }
  }
  return undefined;
}

/** `validateBudgetIntOrString`: an integer >= 0 or `"<n>%"` with 0 <= n <= 100. */
function checkBudget(path: string, value: IntOrString | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') {
    return value < 0 ? `${path}=${value} must be >= 0 (${RolloutAdmissionReason.invalidRollingUpdateInteger})` : undefined;
  }
  const reason = RolloutAdmissionReason.invalidRollingUpdatePercent;
  if (!value.endsWith('%')) return `${path}=${q(value)} must be an integer count or a percent string like "25%" (${reason})`;
  const digits = value.slice(0, -1);
  if (!/^[+-]?\d+$/.test(digits)) return `${path}=${q(value)} has a malformed percent value (${reason})`;
  const n = Number(digits);
  if (n < 0 || n > 100) return `${path}=${q(value)} percent must be between 0% and 100% (${reason})`;
  return undefined;
}

/** `budgetResolvesToZero` for a value that passed checkBudget: unset defaults to 25%. */
function budgetIsZero(value: IntOrString | undefined): boolean {
  if (value === undefined) return false;
  return typeof value === 'number' ? value === 0 : Number(value.slice(0, -1)) === 0;
}

/** The coordination (non-canary) groups collapse to upstream's Sequential machine. */
function collapsesToSequential(groups: readonly Group[]): boolean {
  const coordination = groups.filter((group) => kindOf(group) !== 'canary');
  return coordination.length >= 2 && coordination.every((group) => group.components.length === 1 && kindOf(group) === 'blueGreen');
}

/** `ValidateCoordination`: components and order, membership, mode, budgets, tolerance, soak. */
function checkCoordination(isvc: Json, groups: readonly Group[]): string | undefined {
  return checkCoordinationComponents(groups) ?? checkMembership(isvc, groups) ?? checkPacing(groups) ?? checkSoak(groups);
}

/** `validateGroupComponents`: valid components and an order that is a duplicate-free subset. */
function checkCoordinationComponents(groups: readonly Group[]): string | undefined {
  for (const [i, group] of groups.entries()) {
    if (kindOf(group) === 'canary') continue;
    for (const component of group.components) {
      if (!(COMPONENTS as readonly string[]).includes(component)) {
        return `spec.rollout.groups[${i}]: component ${q(component)} is not one of router/engine/decoder (${RolloutAdmissionReason.invalidComponent})`;
      }
    }
    const seen = new Set<string>();
    for (const entry of group.order) {
      if (!group.components.includes(entry)) return `spec.rollout.groups[${i}]: order entry ${q(entry)} is not in components (${RolloutAdmissionReason.invalidOrder})`;
      if (seen.has(entry)) return `spec.rollout.groups[${i}]: order entry ${q(entry)} appears more than once (${RolloutAdmissionReason.duplicateOrder})`;
      seen.add(entry);
    }
  }
  return undefined;
}

/** `validateNoDuplicateMembership`, `validateOrphanGroups`, `validateComponentsAreOMENative`. */
function checkMembership(isvc: Json, groups: readonly Group[]): string | undefined {
  const memberOf = new Map<string, number>();
  for (const [i, group] of groups.entries()) {
    for (const component of group.components) {
      const previous = memberOf.get(component);
      if (previous !== undefined) {
        return `spec.rollout.groups: component ${q(component)} appears in groups[${previous}] and groups[${i}] (${RolloutAdmissionReason.duplicateComponent})`;
      }
      memberOf.set(component, i);
    }
  }
  const declared = declaredComponents(recordAt(isvc, 'spec'));
  for (const [i, group] of groups.entries()) {
    const missing = group.components.filter((component) => !declared.has(component)).map((component) => q(component));
    if (missing.length > 0) {
      return `spec.rollout.groups[${i}]: component(s) ${missing.join(', ')} not declared on the InferenceService (${RolloutAdmissionReason.orphanGroup})`;
    }
  }
  for (const [i, group] of groups.entries()) {
    if (kindOf(group) === 'canary') continue;
    for (const component of group.components) {
      const mode = declaredModeOf(isvc, component);
      if (refusesMode(mode)) {
        return `spec.rollout.groups[${i}]: component ${q(component)} has deploymentMode=${q(mode)}; coordination requires OMENative (${RolloutAdmissionReason.coordinationRequiresOMENative})`;
      }
    }
  }
  return undefined;
}

/** `validateGroupRollingUpdateBudgets`, `validateRatioToleranceRange`, `validatePacingNotZeroBudget`. */
function checkPacing(groups: readonly Group[]): string | undefined {
  for (const [i, group] of groups.entries()) {
    const rolling = recordAt(group.raw, 'rollingUpdate');
    if (!rolling) continue;
    const base = `spec.rollout.groups[${i}].rollingUpdate.`;
    const problem = checkBudget(`${base}maxSurge`, intOrStringAt(rolling, 'maxSurge')) ?? checkBudget(`${base}maxUnavailable`, intOrStringAt(rolling, 'maxUnavailable'));
    if (problem) return problem;
  }
  for (const [i, group] of groups.entries()) {
    const tolerance = recordAt(group.raw, 'maintainRatio')?.tolerance;
    if (typeof tolerance === 'number' && (tolerance < 0 || tolerance > 100)) {
      return `spec.rollout.groups[${i}]: maintainRatio.tolerance=${tolerance} must be between 0 and 100 (${RolloutAdmissionReason.ratioToleranceOutOfRange})`;
    }
  }
  for (const [i, group] of groups.entries()) {
    const rolling = recordAt(group.raw, 'rollingUpdate');
    if (rolling && budgetIsZero(intOrStringAt(rolling, 'maxSurge')) && budgetIsZero(intOrStringAt(rolling, 'maxUnavailable'))) {
      return `spec.rollout.groups[${i}].rollingUpdate: maxSurge and maxUnavailable both resolve to zero, which deadlocks the rollout — set at least one non-zero (${RolloutAdmissionReason.zeroBudget})`;
    }
  }
  return undefined;
}

/** `validateSoakOnlyWhenSequenced`. */
function checkSoak(groups: readonly Group[]): string | undefined {
  const collapses = collapsesToSequential(groups);
  for (const [i, group] of groups.entries()) {
    if (group.raw.soak === undefined || group.raw.soak === null) continue;
    if (kindOf(group) === 'canary') {
      return `spec.rollout.groups[${i}]: soak is not honored on a canary group (the canary engine does not gate on it) (${RolloutAdmissionReason.soakNotHonored})`;
    }
    if (!collapses) {
      return `spec.rollout.groups[${i}]: soak is honored only when the rollout is a sequence of single-Component groups (which roll one-at-a-time); this rollout runs groups concurrently, so the soak would be dropped (${RolloutAdmissionReason.soakNotHonored})`;
    }
  }
  return undefined;
}

/** `ValidateRolloutOrderingEnforced`: no `order`, and a multi-group list upstream runs in order. */
function checkOrderingEnforced(spec: Json | undefined, groups: readonly Group[]): string | undefined {
  for (const [i, group] of groups.entries()) {
    if (group.order.length > 0) {
      return `spec.rollout.groups[${i}]: order is not applied by any progression — the Components in a group advance together; to roll Components one at a time, declare one single-Component blueGreen group per Component, in the desired sequence (${RolloutAdmissionReason.orderNotHonored})`;
    }
  }
  if (groups.length < 2 || textAt(recordAt(spec, 'rollout'), 'groupOrdering') === CONCURRENT) return undefined;
  for (const [i, group] of groups.entries()) {
    const kind = kindOf(group);
    const shape =
      kind === 'canary' ? 'a canary group'
      : kind === 'rollingUpdate' ? 'a rollingUpdate group'
      : group.components.length !== 1 ? 'a multi-Component group'
      : undefined;
    if (shape) {
      return `spec.rollout.groups: groups[] is ordered (group N completes before group N+1 begins), but that is enforced only for a run of single-Component blueGreen groups; groups[${i}] is ${shape}, so the groups would run concurrently and the declared order would be dropped — set spec.rollout.groupOrdering: Concurrent if the groups are independent and running them at the same time is what you want (${RolloutAdmissionReason.groupOrderingNotHonored})`;
    }
  }
  return undefined;
}

/** Deep equality of two parsed JSON values, whatever their key order. */
function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => sameJson(item, b[i]));
  }
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => key in b && sameJson(a[key], b[key]));
  }
  return a === b;
}

/**
 * The first rollout refusal for an InferenceService CREATE (`previous` undefined) or
 * UPDATE, in upstream's order, or undefined when the rollout shape is admissible. On
 * UPDATE the ordering rules apply only when `spec.rollout` changed, so a stored object
 * keeps accepting unrelated edits (upstream's ratchet).
 */
export function checkRolloutShape(isvc: unknown, previous?: unknown): string | undefined {
  const object = isRecord(isvc) ? isvc : {};
  const spec = recordAt(object, 'spec');
  const groups = groupsOf(spec);
  if (groups.length === 0) return undefined;
  const structural =
    checkOneProgression(groups) ?? checkPolicyRefs(groups) ?? checkCanaryGroups(object, groups) ?? checkCoordination(object, groups);
  if (structural) return structural;
  if (previous !== undefined && sameJson(recordAt(recordAt(previous, 'spec'), 'rollout'), recordAt(spec, 'rollout'))) return undefined;
  return checkOrderingEnforced(spec, groups);
}

/**
 * `ValidateRolloutPolicySpec` (OP `pkg/validation` @dcfb4135): a RolloutPolicy body must set
 * exactly one progression and pass the plan rules an inline body faces, plus the rules that
 * keep a body portable across services and clusters: percentage capacities only, no
 * `serverAddress` or `authRef`, and a `providerRef` when any step declares analysis.
 * Returns the first problem with upstream's message, or undefined.
 */
export function checkRolloutPolicySpec(spec: unknown): string | undefined {
  const reason = RolloutAdmissionReason.rolloutPolicyInvalid;
  if (!isRecord(spec)) return `spec must not be empty (${reason})`;
  const set = PROGRESSIONS.filter((kind) => spec[kind] !== undefined && spec[kind] !== null).length;
  if (set !== 1) return `spec must set exactly one of canary, blueGreen, or rollingUpdate; got ${set} (${reason})`;
  const canary = recordAt(spec, 'canary');
  if (canary) return checkPolicyCanary(canary);
  const rolling = recordAt(spec, 'rollingUpdate');
  if (!rolling) return undefined;
  const maxSurge = intOrStringAt(rolling, 'maxSurge');
  const maxUnavailable = intOrStringAt(rolling, 'maxUnavailable');
  const budget = checkBudget('spec.rollingUpdate.maxSurge', maxSurge) ?? checkBudget('spec.rollingUpdate.maxUnavailable', maxUnavailable);
  if (budget) return budget;
  if (budgetIsZero(maxSurge) && budgetIsZero(maxUnavailable)) {
    return `spec.rollingUpdate: maxSurge and maxUnavailable both resolve to zero, which deadlocks the rollout — set at least one non-zero (${RolloutAdmissionReason.zeroBudget})`;
  }
  return undefined;
}

function checkPolicyCanary(canary: Json): string | undefined {
  const plan = checkCanaryPlan('spec.canary', canary);
  if (plan) return plan;
  const reason = RolloutAdmissionReason.rolloutPolicyInvalid;
  const steps = listAt(canary, 'steps');
  for (const [i, step] of steps.entries()) {
    const capacity = intOrStringAt(step, 'capacity');
    if (typeof capacity !== 'string') {
      return `spec.canary.steps[${i}].capacity: a policy capacity must be a percentage (${q(String(capacity ?? 0))} is an absolute count, which is service-specific — services needing absolute counts keep their canary inline) (${reason})`;
    }
  }
  const prometheus = recordAt(canary, 'prometheus');
  if (textAt(prometheus, 'serverAddress')) {
    return `spec.canary.prometheus.serverAddress is not allowed in a policy body — a cluster-local URL defeats portability; name a providerRef bound in the operator's metricProviders configuration instead (${reason})`;
  }
  if (prometheus?.authRef !== undefined && prometheus.authRef !== null) {
    return `spec.canary.prometheus.authRef is not allowed in a policy body — auth comes from the providerRef's cluster binding (${reason})`;
  }
  const hasAnalysis = steps.some((step) => recordAt(step, 'analysis') !== undefined);
  if (hasAnalysis && !providerRefNameOf(canary)) {
    return `spec.canary.prometheus.providerRef is required when any step declares analysis — a policy must never ship a gate with no resolvable metrics source (${reason})`;
  }
  return undefined;
}

/** `spec.canary.prometheus.providerRef.name` of a canary body, or undefined. */
export function providerRefNameOf(canary: unknown): string | undefined {
  return textAt(recordAt(recordAt(canary, 'prometheus'), 'providerRef'), 'name') || undefined;
}
