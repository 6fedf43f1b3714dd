/**
 * Reading and writing the rollout part of an InferenceService's status: the live plan
 * from fresh policy reads, the plan conditions and `status.rollout.groups[]`, the canary
 * state of every canary group, and the one guarded status write every use-case makes.
 */
import { recordEvent } from '../record-event';
import { ConflictError, InvalidInputError, NotFoundError } from '../../domain/errors';
import { Resources } from '../../domain/model/resources';
import type { ClusterClient, KubeObject } from '../../ports/cluster';
import type { StatusTransitions } from '../../ports/notifications';
import { canaryEntrypointOf } from '../../domain/rollout/canary';
import { buildGroupResolutions, evaluatePlanDrift, evaluatePlanReady, type PlanCondition } from '../../domain/rollout/drift';
import { NO_METRICS, type MetricsBindingSource } from '../../domain/rollout/analysis';
import { findUnexecutableGroup, type ComponentShapes } from '../../domain/rollout/executable';
import { declaredKindOf, resolveLivePlan, type LivePlanResult } from '../../domain/rollout/plan';
import { formatKubeTime, keepNewerPin } from '../../domain/rollout/run';
import type {
  CanaryState,
  PinnedGroup,
  RolloutGroup,
  RolloutPolicySpec,
  RolloutPolicyView,
  RolloutRun,
  RolloutStatus,
  RunOutcome,
  StatusCondition,
} from '../../domain/rollout/types';
import { ConditionType, EventReason, Message, PlanReadyReason } from '../../domain/vocabulary';

/** The `reportingController` of the events rollout runs record. */
export const ROLLOUT_CONTROLLER = 'ome-pinning-rollout';

export interface RolloutIsvcStatus {
  observedGeneration?: number;
  conditions?: StatusCondition[];
  components?: Record<string, { rolloutPhase?: string; canary?: CanaryState; [field: string]: unknown }>;
  rollout?: RolloutStatus;
  canary?: CanaryState;
  [field: string]: unknown;
}

export type RolloutIsvc = KubeObject & {
  spec?: { rollout?: { groups?: RolloutGroup[] }; engine?: { minReplicas?: number }; [field: string]: unknown };
  status?: RolloutIsvcStatus;
};

/** The spec's rollout groups (none when the ISVC sets no `spec.rollout`). */
export function specGroupsOf(isvc: RolloutIsvc): RolloutGroup[] {
  return isvc.spec?.rollout?.groups ?? [];
}

/** Index of the group whose components include `component`, or -1. */
export function groupIndexFor(groups: readonly RolloutGroup[], component: string): number {
  return groups.findIndex((group) => (group.components ?? []).some((name) => name === component));
}

/** The namespace's RolloutPolicies as plan resolution sees them, read fresh. */
export async function readPolicies(client: ClusterClient, namespace: string): Promise<Map<string, RolloutPolicyView>> {
  type PolicyObject = KubeObject & {
    spec?: RolloutPolicySpec;
    status?: { conditions?: { type: string; status: string; message?: string }[] };
  };
  const views = new Map<string, RolloutPolicyView>();
  let continueToken: string | undefined;
  do {
    const page = await client.list<PolicyObject>(Resources.rolloutPolicies, {
      namespace,
      limit: 500,
      ...(continueToken ? { continue: continueToken } : {}),
    });
    for (const policy of page.items) {
      const ready = policy.status?.conditions?.find((condition) => condition.type === 'Ready');
      views.set(policy.metadata.name, {
        name: policy.metadata.name,
        ...(policy.metadata.generation === undefined ? {} : { generation: policy.metadata.generation }),
        spec: policy.spec ?? {},
        ...(ready && ready.status !== 'Unknown' ? { ready: ready.status === 'True' } : {}),
        ...(ready?.message ? { readyMessage: ready.message } : {}),
      });
    }
    continueToken = page.continue;
  } while (continueToken);
  return views;
}

/**
 * The live plan of the ISVC's spec groups against freshly read policies; a plan the
 * plane cannot execute on this ISVC fails as PlanInvalid (see findUnexecutableGroup),
 * and one whose analysis cannot sample here as ProviderUnbound (`metrics`: what the
 * cluster binds; nothing by default).
 */
export async function renderLivePlan(client: ClusterClient, isvc: RolloutIsvc, metrics: MetricsBindingSource = NO_METRICS): Promise<LivePlanResult> {
  const groups = specGroupsOf(isvc);
  const policies = await readPolicies(client, isvc.metadata.namespace ?? '');
  let live = resolveLivePlan(groups, policies, typeof metrics === 'function' ? NO_METRICS : metrics);
  // Only a group with analysis steps or a providerRef can be unbound; a lazy binding is read for those alone.
  if (typeof metrics === 'function' && live.groups.some((group) => !group.ok && group.reason === PlanReadyReason.providerUnbound)) {
    live = resolveLivePlan(groups, policies, await metrics());
  }
  if (!live.ok) return live;
  const unexecutable = findUnexecutableGroup(live.plan.groups.map((pinned) => pinned.group), (isvc.spec ?? {}) as ComponentShapes);
  return unexecutable ? { ok: false, reason: PlanReadyReason.planInvalid, message: unexecutable, groups: live.groups } : live;
}

/**
 * Canary state per canary group index, read where upstream keeps it: on the status of
 * the group's entrypoint component (`status.components.<c>.canary`, see
 * `canaryEntrypointOf`). For the group that covers the engine, the alias `status.canary`
 * stands in when its slot is empty (a status written before the per-unit slots).
 */
export function readCanaryStates(status: RolloutIsvcStatus | undefined, pinned: readonly PinnedGroup[]): Map<number, CanaryState> {
  const states = new Map<number, CanaryState>();
  const engineIndex = canaryGroupCovering(pinned, 'engine');
  pinned.forEach((pinnedGroup, index) => {
    if (!pinnedGroup.group.canary) return;
    const state = status?.components?.[canaryEntrypointOf(pinnedGroup.group)]?.canary ?? (index === engineIndex ? status?.canary : undefined);
    if (state) states.set(index, { ...state });
  });
  return states;
}

/** Writes canary states back into their slots, and the alias `status.canary` (see `readCanaryStates`). */
export function writeCanaryStates(status: RolloutIsvcStatus, pinned: readonly PinnedGroup[], states: ReadonlyMap<number, CanaryState>): void {
  for (const [index, state] of states) {
    const group = pinned[index]?.group;
    if (!group?.canary) continue;
    const component = canaryEntrypointOf(group);
    status.components = { ...status.components, [component]: { ...status.components?.[component], canary: { ...state } } };
  }
  // Upstream's alias mirrors the unit owning the ISVC's entrypoint: the router's, else the engine's.
  const aliased = states.get(canaryGroupCovering(pinned, 'router')) ?? states.get(canaryGroupCovering(pinned, 'engine'));
  if (aliased) status.canary = { ...aliased };
}

/** Drops every canary state: the unit slots and the alias (a run opened or closed). */
export function clearCanaryStates(status: RolloutIsvcStatus): void {
  delete status.canary;
  for (const [component, entry] of Object.entries(status.components ?? {})) {
    if (entry.canary === undefined) continue;
    const { canary: _dropped, ...rest } = entry;
    (status.components as NonNullable<RolloutIsvcStatus['components']>)[component] = rest;
  }
}

/** Index of the canary group whose components include `component`, or -1. */
function canaryGroupCovering(pinned: readonly PinnedGroup[], component: string): number {
  return pinned.findIndex(({ group }) => group.canary !== undefined && (group.components ?? []).some((name) => name === component));
}

/**
 * Sets a condition, stamping lastTransitionTime when its status, reason or message
 * changes (as upstream's condition manager does). The plugin checks that RolloutPlanReady
 * was stamped after the run opened and RolloutPlanDrift after the last pin: a run opening
 * turns DRIFT's message from `no active run` to `run <id> follows the live plan` with the
 * same False/InSync, and that must restamp or the plugin takes the condition as stale.
 */
export function upsertCondition(conditions: readonly StatusCondition[], next: PlanCondition, now: Date): StatusCondition[] {
  const previous = conditions.find((condition) => condition.type === next.type);
  const unchanged = previous && previous.status === next.status && previous.reason === next.reason && previous.message === next.message;
  const stamped: StatusCondition = {
    type: next.type,
    status: next.status,
    reason: next.reason,
    message: next.message,
    lastTransitionTime: unchanged && previous.lastTransitionTime ? previous.lastTransitionTime : formatKubeTime(now),
  };
  return [...conditions.filter((condition) => condition.type !== next.type), stamped];
}

/**
 * Recomputes `status.rollout.groups[]`, RolloutPlanReady and RolloutPlanDrift against
 * the status's active run (mutates `status`). Records the generation it describes: the
 * plugin trusts this evidence only for the current spec.
 */
export function applyPlanStatus(status: RolloutIsvcStatus, isvc: RolloutIsvc, live: LivePlanResult, now: Date): void {
  const run = status.rollout?.activeRun;
  const groups = buildGroupResolutions(live);
  status.rollout = { ...status.rollout, groups };
  let conditions = upsertCondition(status.conditions ?? [], evaluatePlanReady(run, live, closedInThisWrite(isvc.status, status)), now);
  const specHasCanary = specGroupsOf(isvc).some((group) => declaredKindOf(group) === 'canary');
  conditions = upsertCondition(conditions, evaluatePlanDrift(run, groups, specHasCanary), now);
  status.conditions = conditions;
  if (isvc.metadata.generation !== undefined) status.observedGeneration = isvc.metadata.generation;
}

/**
 * The outcome of a run this write closes on its own (Completed or RolledBack), which
 * RolloutPlanReady names as `last run closed <outcome>`. A superseded run is followed by
 * a new run or by none to open, and upstream reports `no rollout in progress` there.
 */
function closedInThisWrite(basis: RolloutIsvcStatus | undefined, next: RolloutIsvcStatus): RunOutcome | undefined {
  const closing = basis?.rollout?.activeRun;
  const record = next.rollout?.lastRun;
  if (!closing || next.rollout?.activeRun || !record || record.outcome === 'Superseded') return undefined;
  return record.openedAt === closing.openedAt ? record.outcome : undefined;
}

/** Whether the ISVC takes part in rollout plans at all (groups declared, or run state to keep). */
export function hasRolloutState(isvc: RolloutIsvc): boolean {
  const status = isvc.status;
  return (
    specGroupsOf(isvc).length > 0 ||
    status?.rollout?.activeRun !== undefined ||
    (status?.conditions ?? []).some((condition) => condition.type === ConditionType.rolloutPlanReady)
  );
}

/** Sets rolloutPhase on each listed component's status. */
export function setRolloutPhase(status: RolloutIsvcStatus, components: readonly string[], phase: string): void {
  status.components = { ...status.components };
  for (const component of components) status.components[component] = { ...status.components[component], rolloutPhase: phase };
}

/**
 * Writes the status built from `basis`. Two guards, both failing as ConflictError so the
 * reconcile re-reads and decides again: the object must still be at the version the
 * decision read, and the write must not carry an older pin of the same run than the
 * cluster holds — a repin is one-shot (its annotation is gone), so a status computed
 * before it must never put the old plan back, whatever path the write came from.
 * `transitions` hears of the write once the API server has accepted it (notifications).
 */
export async function commitStatus(client: ClusterClient, basis: RolloutIsvc, status: RolloutIsvcStatus, transitions?: StatusTransitions): Promise<RolloutIsvc> {
  const { namespace, name } = basis.metadata;
  // A basis with a version needs no second read: the write carries that version, so the
  // API server refuses it (409) unless the object is still exactly the basis, whose run
  // is then the one held.
  const current = basis.metadata.resourceVersion ? basis : await client.get<RolloutIsvc>(Resources.inferenceServices, namespace, name);
  if (basis.metadata.uid && current.metadata.uid !== basis.metadata.uid) {
    throw new NotFoundError(`InferenceService ${namespace}/${name} was recreated`);
  }
  const basisVersion = basis.metadata.resourceVersion;
  if (basisVersion && current.metadata.resourceVersion !== basisVersion) {
    throw new ConflictError(`InferenceService ${namespace}/${name} changed since it was read`);
  }
  const held: RolloutRun | undefined = current.status?.rollout?.activeRun;
  const incoming = status.rollout?.activeRun;
  if (incoming && keepNewerPin(held, incoming) !== incoming) {
    throw new ConflictError(`InferenceService ${namespace}/${name}: refusing to move run ${incoming.runID} back to pinnedAt ${incoming.pinnedAt}`);
  }
  const written = await client.replaceStatus<RolloutIsvc>(Resources.inferenceServices, { ...current, status });
  transitions?.committed(current, written);
  await warnGroupRemoved(client, current, written);
  return written;
}

/**
 * Upstream's Warning when RolloutPlanDrift turns to say that spec.rollout, or the pinned
 * plan's canary group, was removed mid-run: once, by the write that turned the condition.
 */
async function warnGroupRemoved(client: ClusterClient, before: RolloutIsvc, after: RolloutIsvc): Promise<void> {
  const drift = (isvc: RolloutIsvc) => isvc.status?.conditions?.find((condition) => condition.type === ConditionType.rolloutPlanDrift);
  const now = drift(after);
  const run = after.status?.rollout?.activeRun;
  if (!run || now?.status !== 'True' || now.message === drift(before)?.message) return;
  const message =
    now.message === Message.planDriftRolloutRemoved ? Message.rolloutRemovedEvent(run.runID) : now.message === Message.planDriftCanaryRemoved ? Message.canaryGroupRemovedEvent(run.runID) : undefined;
  if (message) await recordRolloutEvent(client, after, { type: 'Warning', reason: EventReason.rolloutGroupRemovedMidRun, message });
}

/**
 * Removes a request annotation with a JSON patch that first tests its value, so a new
 * request set meanwhile stays for its own hint. Returns false when it was left alone.
 */
export async function removeAnnotationIfUnchanged(client: ClusterClient, isvc: KubeObject, key: string, value: string): Promise<boolean> {
  return (await removeAnnotationReturning(client, isvc, key, value)) !== undefined;
}

/** As removeAnnotationIfUnchanged, returning the object as the removal left it (undefined when left alone). */
export async function removeAnnotationReturning<T extends KubeObject>(client: ClusterClient, isvc: KubeObject, key: string, value: string): Promise<T | undefined> {
  const path = `/metadata/annotations/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
  try {
    return await client.patch<T>(
      Resources.inferenceServices,
      isvc.metadata.namespace,
      isvc.metadata.name,
      [
        { op: 'test', path, value },
        { op: 'remove', path },
      ],
      { type: 'json' },
    );
  } catch (error) {
    if (error instanceof InvalidInputError || error instanceof NotFoundError) return undefined;
    throw error;
  }
}

/** Records an Event on the ISVC; a failure to record never fails the reconcile. */
export async function recordRolloutEvent(
  client: ClusterClient,
  isvc: KubeObject,
  event: { type: 'Normal' | 'Warning'; reason: string; message: string },
): Promise<void> {
  await recordEvent(client, isvc, { ...event, reportingController: ROLLOUT_CONTROLLER }).catch(() => undefined);
}

/** The ISVC, or undefined when it is gone. */
export async function getRolloutIsvc(client: ClusterClient, namespace: string, name: string): Promise<RolloutIsvc | undefined> {
  try {
    return await client.get<RolloutIsvc>(Resources.inferenceServices, namespace, name);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}
