/**
 * What the repin-apply and rollout-run functions do with a hint: route it to the use-case
 * for the object it names, each under that InferenceService's lease. Kept apart from the
 * handlers so that the local control plane and tests drive the same paths.
 */
import type { Logger } from './logger';
import { MetricUnit, type Metrics } from './metrics';
import type { AppContext, ClusterHandle } from './context';
import type { HintInvocation } from './hint-handler';
import { objectLeaseKey, reconcileUnderLease, workloadFenceOf, type AttemptContext, type ReconcileDeps } from '../use-cases/reconcile-under-lease';
import { fenceDeploymentWrites } from '../use-cases/rollout-runs/fenced-deployments';
import { toHintEvent, type HintDetail } from '../domain/hint-event';
import type { EventPublisher } from '../ports/event-publisher';
import type { StatusTransitions } from '../ports/notifications';
import { createNotificationOutbox } from './notifications';
import type { NotificationEvent } from '../domain/notification';
import { Resources } from '../domain/model/resources';
import type { Clock } from '../ports/clock';
import { WorkloadLabel, REPIN_METRIC } from '../domain/vocabulary';
import { advanceRolloutRun, type AdvanceRolloutRunDeps, type AdvanceRolloutRunResult } from '../use-cases/rollout-runs/advance-rollout-run';
import { applyRepinRequest, type ApplyRepinResult, type RepinMetrics } from '../use-cases/rollout-runs/apply-repin';
import { listPolicyConsumers, refreshPlanStatus, type RefreshPlanStatusResult } from '../use-cases/rollout-runs/refresh-plan-status';
import { policyConsumerOf, refreshPolicyStatus, refreshPolicyStatuses, type RefreshPolicyStatusResult } from '../use-cases/rollout-runs/refresh-policy-status';
import type { PolicyConsumer } from '../domain/rollout/policy-status';
import type { RolloutIsvc } from '../use-cases/rollout-runs/rollout-status';
import { getOptional, type Deployment } from '../use-cases/rollout-runs/workloads';
import { bindingOnly, type AnalysisWiring, type ClusterAnalysis } from './metrics-binding';
import type { MetricsBindingSource } from '../domain/rollout/analysis';

/** `ome_rollout_repin_total` as an EMF metric with dimensions namespace and outcome. */
export function createRepinMetrics(metrics: Metrics): RepinMetrics {
  return {
    countRepin(namespace, outcome) {
      const single = metrics.singleMetric();
      single.addDimension('namespace', namespace);
      single.addDimension('outcome', outcome);
      single.addMetric(REPIN_METRIC, MetricUnit.Count, 1);
    },
  };
}

/** The lease settings every use-case here reconciles under. */
export function reconcileDepsOf(app: AppContext, holder: string): ReconcileDeps {
  return {
    leases: app.stores.leases,
    clock: app.clock,
    holder,
    leaseTtlMs: app.config.leaseTtlMs,
    maxConflictRetries: app.config.maxConflictRetries,
  };
}

function underIsvcLease<R>(
  reconcile: ReconcileDeps,
  clusterId: string,
  namespace: string,
  name: string,
  work: (context: AttemptContext) => Promise<R>,
): Promise<R> {
  return reconcileUnderLease(reconcile, objectLeaseKey(clusterId, 'InferenceService', namespace, name), work);
}

export interface RolloutWork {
  clusterId: string;
  client: ClusterHandle['client'];
  clock: Clock;
  reconcile: ReconcileDeps;
  /** What the cluster binds for analysis, and on rollout-run's path the executor (see metrics-binding.ts and analysis-wiring.ts). */
  analysis?: ClusterAnalysis;
  /** Publishes the hint that asks for a render (see requestRender); without it the next resync renders. */
  publisher?: EventPublisher;
  /** Hears of each status write committed, for the plane's notifications. */
  transitions?: StatusTransitions;
}

/**
 * A sequence group's turn began (`renderDue`): its new workload was held and only a
 * render writes it, so ask for one now with a `relisted` hint of the InferenceService,
 * the hint a resync sends, which the pin function renders on. Published after the lease
 * is released; a lost one is replaced by the next resync.
 */
async function requestRender(work: RolloutWork, key: { namespace: string; name: string }, result: AdvanceRolloutRunResult): Promise<void> {
  if (!work.publisher || !result.renderDue || result.renderDue.length === 0) return;
  const isvc = await getOptional<RolloutIsvc>(work.client, key.namespace, key.name, Resources.inferenceServices);
  if (!isvc) return;
  const event = toHintEvent(work.clusterId, 'RELISTED', { ...isvc, apiVersion: isvc.apiVersion ?? 'ome.io/v1beta1', kind: isvc.kind ?? 'InferenceService' }, undefined, {
    observedAt: new Date(work.clock.now()).toISOString(),
  });
  await work.publisher.publish([event]);
}

/** Advances one ISVC's run under its lease, then asks for a render when a held group's turn began. */
export async function advanceAndRender(work: RolloutWork, key: { namespace: string; name: string; uid?: string }): Promise<AdvanceRolloutRunResult> {
  const result = await advanceUnderLease(work, key);
  await requestRender(work, key, result);
  return result;
}

function workOf(invocation: HintInvocation, publisher?: EventPublisher, analysis?: ClusterAnalysis): RolloutWork {
  return {
    clusterId: invocation.cluster.id,
    client: invocation.cluster.client,
    clock: invocation.app.clock,
    reconcile: reconcileDepsOf(invocation.app, invocation.requestId),
    ...(publisher ? { publisher } : {}),
    ...(analysis ? { analysis } : {}),
    transitions: invocation.notifications,
  };
}

/** What a run's pass needs under the lease of `context`: Deployment writes fenced by it. */
function advanceDepsOf(work: RolloutWork, context: AttemptContext, key: { name: string; uid?: string }, binding?: MetricsBindingSource): AdvanceRolloutRunDeps {
  const metrics = binding ?? work.analysis?.metrics;
  return {
    client: fenceDeploymentWrites(work.client, workloadFenceOf(context), { name: key.name, uid: key.uid }),
    clock: work.clock,
    ...(work.analysis?.analysis ? { analysis: work.analysis.analysis } : {}),
    ...(metrics ? { metrics } : {}),
    ...(work.transitions ? { transitions: work.transitions } : {}),
  };
}

/** Advances one ISVC's run under its lease. */
export function advanceUnderLease(work: RolloutWork, key: { namespace: string; name: string; uid?: string }): Promise<AdvanceRolloutRunResult> {
  return underIsvcLease(work.reconcile, work.clusterId, key.namespace, key.name, (context) => advanceRolloutRun(advanceDepsOf(work, context, key), key));
}

export type RepinApplyHintResult =
  | { repin?: ApplyRepinResult; promote?: AdvanceRolloutRunResult; advanced?: AdvanceRolloutRunResult }
  | { refreshed: { name: string; result: RefreshPlanStatusResult }[]; policyStatus: PolicyStatusOutcome }
  | { ignored: string };

/**
 * repin-apply: a new `ome.io/rollout-repin` value is applied or rejected (an applied one
 * advances the run at once); a new `ome.io/rollout-promote` value moves the canary (the
 * step machine consumes it); a RolloutPolicy change restates the plan status of each ISVC
 * that uses it.
 */
export async function handleRepinApplyHint(invocation: HintInvocation, metrics: RepinMetrics, analysis?: AnalysisWiring): Promise<RepinApplyHintResult> {
  const { hint, app } = invocation;
  // Resolves plans with the cluster's binding, but never samples: rollout-run does.
  if (hint.kind === 'RolloutPolicy') return fanOutPolicyChange(invocation, workOf(invocation, undefined, await bindingOnly(analysis, invocation.cluster)), hint);
  // A repin or promote reads the binding only for a plan that has analysis steps or a providerRef.
  const binding = analysis ? async () => (await analysis(invocation.cluster)).metrics : undefined;
  const work = workOf(invocation);
  if (hint.kind !== 'InferenceService' || !hint.namespace || hint.change === 'deleted') return { ignored: `${hint.kind} ${hint.change}` };
  const key = { namespace: hint.namespace, name: hint.name, uid: hint.uid };
  const result: { repin?: ApplyRepinResult; promote?: AdvanceRolloutRunResult; advanced?: AdvanceRolloutRunResult } = {};
  if (hint.changed.rolloutRepin) {
    // An applied repin advances the run at once, under the same lease and from the object
    // as the repin left it (a repin request reaches no other function, and the repin's own
    // writes are not forwarded back), so the canary
    // moves to the new step's capacity (PHASE Pending, then Paused) without waiting for the
    // sweep. A conflict in that pass re-runs only the pass, from a fresh read.
    let repin: { result: ApplyRepinResult; latest?: RolloutIsvc } | undefined;
    const advanced = await underIsvcLease(work.reconcile, work.clusterId, hint.namespace, hint.name, async (context) => {
      repin ??= await applyRepinRequest(
        {
          client: work.client,
          ...(binding ? { binding } : {}),
          ...(work.transitions ? { transitions: work.transitions } : {}),
          clusterId: work.clusterId,
          clock: work.clock,
          idempotency: app.stores.idempotency,
          metrics,
          claimTtlMs: app.config.leaseTtlMs,
          // One claimant per lease acquisition: only it gives its claim back.
          holder: `${work.reconcile.holder}#${context.lease.fencingToken}`,
        },
        { ...key, requestVersion: hint.resourceVersion },
      );
      if (hint.changed.rolloutPromote || repin.result.outcome !== 'applied') return undefined;
      const basis = repin.latest;
      delete repin.latest;
      return advanceRolloutRun(advanceDepsOf(work, context, key, binding), key, basis);
    });
    result.repin = (repin as { result: ApplyRepinResult } | undefined)?.result;
    if (advanced) result.advanced = advanced;
  }
  if (hint.changed.rolloutPromote) {
    result.promote = await underIsvcLease(work.reconcile, work.clusterId, key.namespace, key.name, (context) => advanceRolloutRun(advanceDepsOf(work, context, key, binding), key));
  }
  return result;
}

/** What became of the changed policy's own status: see refreshPolicyStatus. */
export type PolicyStatusOutcome = Awaited<ReturnType<typeof refreshPolicyStatus>> | 'failed';

/**
 * A RolloutPolicy changed: its own status first (so a body that turned invalid is Ready
 * False before anyone reads it), then the plan status of each InferenceService using it.
 * A failed status write does not hold the consumers back; the schedule writes it again.
 */
async function fanOutPolicyChange(
  invocation: HintInvocation,
  work: RolloutWork,
  hint: HintDetail,
): Promise<{ refreshed: { name: string; result: RefreshPlanStatusResult }[]; policyStatus: PolicyStatusOutcome }> {
  const namespace = hint.namespace;
  if (!namespace) return { refreshed: [], policyStatus: 'gone' };
  // Only standalone clusters get here (repin-apply routes delegate ones away, whose policy
  // status upstream's own status controller writes), so the status is ours to write.
  const policyStatus: PolicyStatusOutcome = await refreshPolicyStatus({ client: work.client, clock: work.clock }, { namespace, name: hint.name }).catch(
    () => 'failed' as const,
  );
  return { refreshed: await refreshPolicyConsumers(work, namespace, hint.name), policyStatus };
}

async function refreshPolicyConsumers(work: RolloutWork, namespace: string, policyName: string): Promise<{ name: string; result: RefreshPlanStatusResult }[]> {
  const consumers = await listPolicyConsumers(work.client, namespace, policyName);
  const results: { name: string; result: RefreshPlanStatusResult }[] = [];
  for (const isvc of consumers) {
    const key = { namespace, name: isvc.metadata.name, ...(isvc.metadata.uid ? { uid: isvc.metadata.uid } : {}) };
    const result = await underIsvcLease(work.reconcile, work.clusterId, key.namespace, key.name, () =>
      refreshPlanStatus({ client: work.client, clock: work.clock, ...(work.analysis ? { metrics: work.analysis.metrics } : {}) }, key),
    );
    results.push({ name: key.name, result });
  }
  return results;
}

/**
 * rollout-run: an InferenceService change or a readiness change of a Deployment we
 * render advances that InferenceService's run.
 */
export async function handleRolloutRunHint(
  invocation: HintInvocation,
  publisher?: EventPublisher,
  analysis?: AnalysisWiring,
): Promise<AdvanceRolloutRunResult | { ignored: string }> {
  const { hint } = invocation;
  if (!hint.namespace || hint.change === 'deleted') return { ignored: `${hint.kind} ${hint.change}` };
  // Built only once the hint names something to advance (memoized per invocation by the caller).
  const workFor = async () => workOf(invocation, publisher, analysis ? await analysis(invocation.cluster) : undefined);
  if (hint.kind === 'InferenceService') {
    return advanceAndRender(await workFor(), { namespace: hint.namespace, name: hint.name, uid: hint.uid });
  }
  if (hint.kind !== 'Deployment') return { ignored: hint.kind };
  const deployment = await getOptional<Deployment>(invocation.cluster.client, hint.namespace, hint.name);
  const owner = deployment?.metadata.labels?.[WorkloadLabel.inferenceService];
  if (!owner) return { ignored: 'not a rendered workload' };
  return advanceAndRender(await workFor(), { namespace: hint.namespace, name: owner });
}

/** One cluster's part of the scheduled sweep. */
export interface SweepSummary {
  cluster: string;
  advanced: number;
  failed: number;
  /** RolloutPolicy status writes; `failed` when the pass failed (the next sweep retries). */
  policies: RefreshPolicyStatusResult | 'failed';
}

/**
 * The scheduled sweep, in every standalone cluster: advances every ISVC with an active run
 * (timed pauses, due analysis samples), then writes every RolloutPolicy's status from the
 * ISVCs it just listed, with the providers the cluster binds. What the runs' status writes
 * changed is published per cluster, once its runs are swept.
 */
export async function sweepRolloutRuns(
  app: AppContext,
  holder: string,
  publisher?: EventPublisher,
  analysis?: AnalysisWiring,
  notify: { publisher?: EventPublisher<NotificationEvent>; logger?: Pick<Logger, 'info' | 'warn'> } = {},
): Promise<SweepSummary[]> {
  const summary: SweepSummary[] = [];
  for (const record of await app.stores.clusters.listClusters()) {
    const cluster = await app.cluster(record.id);
    // Upstream OME runs the rollouts of a delegate cluster.
    if (cluster.mode === 'delegate') continue;
    const notifications = createNotificationOutbox(cluster.id, app.clock, notify.logger);
    const work: RolloutWork = { clusterId: cluster.id, client: cluster.client, clock: app.clock, reconcile: reconcileDepsOf(app, holder), transitions: notifications, ...(publisher ? { publisher } : {}) };
    let advanced = 0;
    let failed = 0;
    let wired: Promise<ClusterAnalysis | undefined> | undefined;
    // The cluster's metrics configuration is read once per sweep, for its runs and its policies alike.
    const workWithAnalysis = async (): Promise<RolloutWork> => {
      wired ??= analysis ? analysis(cluster) : Promise.resolve(undefined);
      const built = await wired;
      return built ? { ...work, analysis: built } : work;
    };
    const consumers: PolicyConsumer[] = [];
    let continueToken: string | undefined;
    do {
      const page = await cluster.client.list<RolloutIsvc>(Resources.inferenceServices, { limit: 500, ...(continueToken ? { continue: continueToken } : {}) });
      consumers.push(...page.items.map(policyConsumerOf));
      for (const isvc of page.items.filter((item) => item.status?.rollout?.activeRun)) {
        const key = { namespace: isvc.metadata.namespace ?? '', name: isvc.metadata.name, ...(isvc.metadata.uid ? { uid: isvc.metadata.uid } : {}) };
        // One busy or failing object must not starve the rest: the next sweep retries it.
        await workWithAnalysis()
          .then((ready) => advanceAndRender(ready, key))
          .then(
          () => (advanced += 1),
          () => (failed += 1),
        );
      }
      continueToken = page.continue;
    } while (continueToken);
    // A policy naming a providerRef is Ready/BodyValid once the provider is bound here.
    const policies = await workWithAnalysis()
      .then((ready) => refreshPolicyStatuses({ client: cluster.client, clock: app.clock, ...(ready.analysis ? { boundProviders: ready.analysis.metrics.boundProviders } : {}) }, consumers))
      .catch(() => 'failed' as const);
    await notifications.flush(notify.publisher);
    summary.push({ cluster: record.id, advanced, failed, policies });
  }
  return summary;
}
