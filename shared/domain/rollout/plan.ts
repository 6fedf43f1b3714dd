/**
 * Live plan resolution: what a run opened now would pin. Each group takes its inline
 * progression (which wins over a policyRef), else its RolloutPolicy's body, else the
 * default blue-green. A group whose policy cannot be used fails the whole render —
 * never a silent fall back to blue-green, which would drop a gate nobody removed.
 */
import { PlanReadyReason } from '../vocabulary';
import { findAnalysisProblem, findUnboundProvider, NO_METRICS, type MetricsBinding } from './analysis';
import { digestGroupProgression, digestPlan, digestPolicySpec } from './digest';
import { marshalGoJson } from '../go-json';
import { durationSchema } from './schema';
import {
  PROGRESSION_KINDS,
  type PinnedGroup,
  type ProgressionKind,
  type RolloutGroup,
  type RolloutPolicyRef,
  type RolloutPolicySpec,
  type RolloutPolicyView,
} from './types';

export type PlanFailureReason =
  | typeof PlanReadyReason.policyNotFound
  | typeof PlanReadyReason.policyNotReady
  | typeof PlanReadyReason.progressionMismatch
  | typeof PlanReadyReason.planInvalid
  | typeof PlanReadyReason.providerUnbound;

/** Where a spec group's progression comes from, before resolution. */
export type DeclaredSource = 'Inline' | 'Policy' | 'Defaulted';

/** One group that rendered: the pinned form plus what status.rollout.groups[] reports. */
export interface ResolvedGroup {
  readonly ok: true;
  readonly index: number;
  readonly declaredSource: DeclaredSource;
  readonly pinned: PinnedGroup & { portableDigest: string };
  /** The spec group's policyRef, also when an inline progression shadows it. */
  readonly policyRef?: RolloutPolicyRef;
  /** Set when an inline progression outranks a policyRef: what the policy would pin. */
  readonly shadowed?: { name: string; wouldPinDigest?: string };
}

/** One group that did not render, with upstream's RolloutPlanReady reason. */
export interface FailedGroup {
  readonly ok: false;
  readonly index: number;
  readonly declaredSource: DeclaredSource;
  readonly policyRef?: RolloutPolicyRef;
  readonly reason: PlanFailureReason;
  readonly message: string;
}

export type GroupResolution = ResolvedGroup | FailedGroup;

/** The rendered live plan: pinned groups, their digests and the whole-plan digest. */
export interface RenderedPlan {
  readonly groups: readonly (PinnedGroup & { portableDigest: string })[];
  readonly groupDigests: readonly string[];
  readonly digest: string;
}

export type LivePlanResult =
  | { readonly ok: true; readonly plan: RenderedPlan; readonly groups: readonly ResolvedGroup[] }
  | {
      readonly ok: false;
      readonly reason: PlanFailureReason;
      readonly message: string;
      readonly groups: readonly GroupResolution[];
    };

/** The progression arms a group sets inline, in declaration order. */
export function inlineKinds(group: { canary?: unknown; blueGreen?: unknown; rollingUpdate?: unknown }): ProgressionKind[] {
  return PROGRESSION_KINDS.filter((kind) => group[kind] !== undefined && group[kind] !== null);
}

/** Inline wins; a lone policyRef makes it Policy; neither is the default blue-green. */
export function declaredSourceOf(group: RolloutGroup): DeclaredSource {
  if (inlineKinds(group).length > 0) return 'Inline';
  return group.policyRef ? 'Policy' : 'Defaulted';
}

/**
 * The progression kind a group runs as admission sees it: its inline arm, else the kind
 * its policyRef declares, else blue-green. Takes a Partial group because pinned groups
 * are read back from `status.rollout.activeRun.plan`, which the CRD stores unvalidated
 * (x-kubernetes-preserve-unknown-fields), and callers stand in `{}` for a missing one.
 */
export function declaredKindOf(group: Partial<RolloutGroup>): string {
  return inlineKinds(group)[0] ?? group.policyRef?.progression ?? 'blueGreen';
}

/**
 * Resolves every group of `spec.rollout.groups` against the namespace's policies.
 * The result is `ok` only when every group renders; failures report the first failing
 * group's reason, and every group's own outcome is kept for `status.rollout.groups[]`.
 * A canary whose analysis cannot sample in this cluster (`metrics`) fails as
 * ProviderUnbound, as upstream parks an unbound providerRef at run open.
 */
export function resolveLivePlan(
  groups: readonly RolloutGroup[] | undefined,
  policiesByName: ReadonlyMap<string, RolloutPolicyView>,
  metrics: MetricsBinding = NO_METRICS,
): LivePlanResult {
  const outcomes = (groups ?? []).map((group, index) => withBoundProvider(resolveGroup(group, index, policiesByName), metrics));
  const failure = outcomes.find((outcome): outcome is FailedGroup => !outcome.ok);
  if (failure) {
    return { ok: false, reason: failure.reason, message: failure.message, groups: outcomes };
  }
  const resolved = outcomes as ResolvedGroup[];
  const pinned = resolved.map((outcome) => outcome.pinned);
  const groupDigests = pinned.map((group) => group.portableDigest);
  return { ok: true, plan: { groups: pinned, groupDigests, digest: digestPlan(groupDigests) }, groups: resolved };
}

function withBoundProvider(outcome: GroupResolution, metrics: MetricsBinding): GroupResolution {
  if (!outcome.ok) return outcome;
  const unbound = findUnboundProvider(outcome.pinned.group.canary, metrics, outcome.index);
  if (!unbound) return outcome;
  const { pinned: _pinned, shadowed: _shadowed, ok: _ok, ...base } = outcome;
  return { ...base, ok: false, reason: PlanReadyReason.providerUnbound, message: unbound };
}

function resolveGroup(
  group: RolloutGroup,
  index: number,
  policiesByName: ReadonlyMap<string, RolloutPolicyView>,
): GroupResolution {
  const declaredSource = declaredSourceOf(group);
  const base = { index, declaredSource, ...(group.policyRef ? { policyRef: group.policyRef } : {}) };
  const fail = (reason: PlanFailureReason, message: string): FailedGroup => ({
    ok: false,
    ...base,
    reason,
    message: `groups[${index}]: ${message}`,
  });

  const invalid = findGroupProblem(group);
  if (invalid) return fail(PlanReadyReason.planInvalid, invalid);

  const shape = withoutProgression(group);
  if (declaredSource !== 'Policy') {
    const resolvedGroup: RolloutGroup =
      declaredSource === 'Defaulted' ? { ...shape, blueGreen: {} } : { ...shape, ...pickProgression(group) };
    const shadowed = group.policyRef ? shadowedPreview(group.policyRef, policiesByName) : undefined;
    return {
      ok: true,
      ...base,
      pinned: { source: 'Inline', portableDigest: digestGroupProgression(resolvedGroup), group: resolvedGroup },
      ...(shadowed ? { shadowed } : {}),
    };
  }

  const ref = group.policyRef as RolloutPolicyRef;
  const policy = policiesByName.get(ref.name);
  if (!policy) return fail(PlanReadyReason.policyNotFound, `RolloutPolicy "${ref.name}" not found`);
  if (policy.ready === false) {
    const detail = policy.readyMessage ? `: ${policy.readyMessage}` : '';
    return fail(PlanReadyReason.policyNotReady, `RolloutPolicy "${ref.name}" is not Ready${detail}`);
  }
  const bodyKinds = inlineKinds(policy.spec);
  if (bodyKinds.length !== 1) {
    return fail(
      PlanReadyReason.policyNotReady,
      `RolloutPolicy "${ref.name}" must carry exactly one of canary, blueGreen or rollingUpdate`,
    );
  }
  const actual = bodyKinds[0] as ProgressionKind;
  if (actual !== ref.progression) {
    return fail(
      PlanReadyReason.progressionMismatch,
      `policyRef "${ref.name}" declares progression "${ref.progression}" but the policy body is "${actual}"`,
    );
  }
  const policyProblem = findProgressionProblem(policy.spec);
  if (policyProblem) return fail(PlanReadyReason.planInvalid, `RolloutPolicy "${ref.name}": ${policyProblem}`);

  const resolvedGroup: RolloutGroup = { ...shape, ...pickProgression(policy.spec) };
  return {
    ok: true,
    ...base,
    pinned: {
      source: 'Policy',
      policyRef: ref,
      ...(policy.generation ? { policyGeneration: policy.generation } : {}),
      portableDigest: digestPolicySpec(pickProgression(policy.spec)),
      group: resolvedGroup,
    },
  };
}

function shadowedPreview(
  ref: RolloutPolicyRef,
  policiesByName: ReadonlyMap<string, RolloutPolicyView>,
): { name: string; wouldPinDigest?: string } {
  const policy = policiesByName.get(ref.name);
  if (!policy || inlineKinds(policy.spec).length !== 1 || findProgressionProblem(policy.spec)) return { name: ref.name };
  return { name: ref.name, wouldPinDigest: digestPolicySpec(pickProgression(policy.spec)) };
}

/** The group's consumer-owned shape with every progression arm and the policyRef removed. */
function withoutProgression(group: RolloutGroup): RolloutGroup {
  const { canary: _c, blueGreen: _b, rollingUpdate: _r, policyRef: _p, ...shape } = group;
  return shape;
}

function pickProgression(body: RolloutPolicySpec): RolloutPolicySpec {
  const out: RolloutPolicySpec = {};
  if (body.canary) out.canary = body.canary;
  if (body.blueGreen) out.blueGreen = body.blueGreen;
  if (body.rollingUpdate) out.rollingUpdate = body.rollingUpdate;
  return out;
}

const COMPONENTS = new Set(['router', 'engine', 'decoder']);

/**
 * Checks a group must pass to render; returns the first problem, or nothing. The group
 * is typed as the API stores it, but it arrives as parsed JSON that nothing here has
 * checked, so each rule (components, progression, traffic, durations) still guards it.
 */
export function findGroupProblem(group: RolloutGroup): string | undefined {
  const components = group.components ?? [];
  if (components.length === 0) return 'a group needs at least one component';
  const unknown = components.find((component) => !COMPONENTS.has(component));
  if (unknown !== undefined) return `unknown component "${unknown}"`;
  if (inlineKinds(group).length > 1) return 'at most one of canary, blueGreen, or rollingUpdate may be set on a rollout group';
  if (group.policyRef && !(PROGRESSION_KINDS as readonly string[]).includes(group.policyRef.progression)) {
    return `policyRef "${group.policyRef.name}" declares unknown progression "${group.policyRef.progression}"`;
  }
  if (group.policyRef?.kind && group.policyRef.kind !== 'RolloutPolicy') {
    return `policyRef kind "${group.policyRef.kind}" is not supported`;
  }
  const soakProblem = durationProblem(group.soak, 'soak');
  if (soakProblem) return soakProblem;
  return findProgressionProblem(group);
}

function findProgressionProblem(body: RolloutPolicySpec): string | undefined {
  const steps = body.canary?.steps ?? [];
  for (const [i, step] of steps.entries()) {
    const traffic = step.traffic ?? 0;
    if (!Number.isInteger(traffic) || traffic < 0 || traffic > 100) return `canary.steps[${i}].traffic must be 0-100`;
    if (parseCapacity(step.capacity ?? 0) === undefined) return `canary.steps[${i}].capacity "${step.capacity}" is invalid`;
    const problem =
      durationProblem(step.pause?.duration, `canary.steps[${i}].pause.duration`) ??
      durationProblem(step.analysis?.interval, `canary.steps[${i}].analysis.interval`) ??
      durationProblem(step.analysis?.initialDelay, `canary.steps[${i}].analysis.initialDelay`);
    if (problem) return problem;
  }
  return durationProblem(body.canary?.readyTimeout, 'canary.readyTimeout') ?? findAnalysisProblem(body.canary);
}

function durationProblem(value: string | undefined, field: string): string | undefined {
  if (value === undefined) return undefined;
  try {
    marshalGoJson(value, durationSchema);
    return undefined;
  } catch (error) {
    return `${field}: ${(error as Error).message}`;
  }
}

/** A step capacity: `{percent}` for "25%", `{count}` for 3 or "3"; undefined if malformed. */
export function parseCapacity(capacity: number | string): { percent: number } | { count: number } | undefined {
  if (typeof capacity === 'number') return Number.isInteger(capacity) && capacity >= 0 ? { count: capacity } : undefined;
  const percent = /^(\d+)%$/.exec(capacity);
  if (percent) {
    const value = Number(percent[1]);
    return value <= 100 ? { percent: value } : undefined;
  }
  return /^\d+$/.test(capacity) ? { count: Number(capacity) } : undefined;
}

/** The shape of one group that only the next run may change. */
export interface GroupTopology {
  readonly progression: string;
  readonly components: readonly string[];
  readonly order: readonly string[];
  readonly soak: string | null;
  readonly maintainRatio: number | null;
  readonly hasMaintainRatio: boolean;
}

/** The "shape" a repin must keep: the number of groups and each group's topology. */
export interface PlanTopology {
  readonly groupCount: number;
  readonly groups: readonly GroupTopology[];
}

/**
 * The topology of a list of groups (spec or pinned). Durations compare after Go's
 * normalisation, so `soak: 60s` and `soak: 1m` are the same shape.
 */
export function topologyOf(groups: readonly RolloutGroup[]): PlanTopology {
  return {
    groupCount: groups.length,
    groups: groups.map((group) => ({
      progression: declaredKindOf(group),
      components: group.components ?? [],
      order: group.order ?? [],
      soak: group.soak === undefined ? null : safeNormalise(group.soak),
      maintainRatio: group.maintainRatio?.tolerance ?? null,
      hasMaintainRatio: group.maintainRatio !== undefined,
    })),
  };
}

function safeNormalise(duration: string): string {
  try {
    return JSON.parse(marshalGoJson(duration, durationSchema)) as string;
  } catch {
    return duration;
  }
}

/** True when two topologies are the same shape (group count, and per group every field). */
export function sameTopology(a: PlanTopology, b: PlanTopology): boolean {
  return a.groupCount === b.groupCount && a.groups.every((group, i) => JSON.stringify(group) === JSON.stringify(b.groups[i]));
}
