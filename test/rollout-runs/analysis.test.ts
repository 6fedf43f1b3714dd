/**
 * Analysis steps through the embedded cluster with an executor plugged into the port:
 * samples are recorded in upstream's canary status fields, an inconclusive gate under
 * Hold ends in Failed at the stall timeout and recovers on a conclusive sample, and
 * under Rollback the first inconclusive sample rolls the canary back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '../../shared/domain/model/resources';
import { createDirectWorkloadWriter } from '../../shared/use-cases/direct-workload-writer';
import type { AnalysisExecutor, AnalysisSampleRequest } from '../../shared/ports/analysis';
import { advanceRolloutRun, createRolloutWorkloadWriter, type AdvanceRolloutRunResult } from '../../shared/use-cases/rollout-runs';
import { advanceUnderLease, handleRolloutRunHint } from '../../shared/app/rollout-hints';
import type { AnalysisWiring } from '../../shared/app/metrics-binding';
import { ConflictError } from '../../shared/domain/errors';
import type { RolloutIsvc } from '../../shared/use-cases/rollout-runs/rollout-status';
import type { AnalysisOutcome, MetricsBinding } from '../../shared/domain/rollout/analysis';
import { formatKubeTime } from '../../shared/domain/rollout/run';
import type { OnInconclusive } from '../../shared/domain/rollout/types';
import { renderEngineDeployment } from '../../shared/domain/runtime/workload';
import { CLUSTER_ID, getDeployment, getIsvc, invocationFor, NAMESPACE, requestHint, startBench, type Bench } from './harness';

let bench: Bench;
beforeAll(async () => {
  bench = await startBench();
});
afterAll(async () => {
  await bench.stop();
});

const metrics: MetricsBinding = { boundProviders: new Set(), executor: true };

/** Answers every request with the outcome the test sets, produced now. */
class ScriptedExecutor implements AnalysisExecutor {
  outcome: AnalysisOutcome = 'Inconclusive';
  readonly requests: AnalysisSampleRequest[] = [];
  constructor(private readonly clock: Bench['clock']) {}
  async sample(request: AnalysisSampleRequest) {
    this.requests.push(request);
    const at = formatKubeTime(new Date(this.clock.now()));
    const passed = this.outcome === 'Successful';
    return { outcome: this.outcome, at, metrics: [{ name: 'err', ...(this.outcome === 'Inconclusive' ? {} : { value: passed ? '0.01' : '0.2' }), threshold: '0.05', operator: 'LTE' as const, passed, time: at }] };
  }
}

async function render(name: string, image: string): Promise<string> {
  const current = await getIsvc(bench, name);
  const desired = renderEngineDeployment({
    isvc: { namespace: NAMESPACE, name, uid: current.metadata.uid, engine: { minReplicas: 2 } },
    runtimeName: 'srt',
    spec: { containers: [{ name: 'ome-container', image }] },
  });
  const writer = createRolloutWorkloadWriter({ client: bench.client, direct: createDirectWorkloadWriter(bench.client), clock: bench.clock, metrics });
  return writer.apply({ clusterId: CLUSTER_ID, isvc: current, desired, renderedFrom: 'live' });
}

async function advanceUntil(name: string, executor: AnalysisExecutor, done: (result: AdvanceRolloutRunResult, isvc: RolloutIsvc) => boolean): Promise<RolloutIsvc> {
  const work = {
    clusterId: CLUSTER_ID,
    client: bench.client,
    clock: bench.clock,
    reconcile: { leases: bench.stores.leases, clock: bench.clock, holder: 'advance', leaseTtlMs: 10_000, maxConflictRetries: 5 },
    analysis: { analysis: executor, metrics },
  };
  const deadline = Date.now() + 5_000;
  for (;;) {
    const result = await advanceUnderLease(work, { namespace: NAMESPACE, name });
    const isvc = await getIsvc(bench, name);
    if (done(result, isvc)) return isvc;
    if (Date.now() > deadline) throw new Error(`run of ${name} did not settle: ${JSON.stringify({ result, canary: isvc.status?.canary })}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function openAnalysisRun(
  name: string,
  onInconclusive: OnInconclusive,
  failureLimit = 2,
  timing: { interval: string; initialDelay?: string } = { interval: '1m' },
  annotations?: Record<string, string>,
): Promise<void> {
  const analysis = { ...timing, failureLimit, onInconclusive, metrics: [{ name: 'err', query: 'q', operator: 'LTE', threshold: '0.05' }] };
  await bench.client.create(Resources.inferenceServices, {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace: NAMESPACE, ...(annotations ? { annotations } : {}) },
    spec: {
      engine: { minReplicas: 2 },
      model: { name: 'llama' },
      runtime: { name: 'srt' },
      rollout: { groups: [{ components: ['engine'], canary: { steps: [{ capacity: '50%', traffic: 20, analysis }, { capacity: '100%', traffic: 100 }], readyTimeout: '5m' } }] },
    },
  });
  await render(name, 'srt:v1');
  bench.clock.tick();
  expect(await render(name, 'srt:v2')).toBe('run-opened');
}

describe('an analysis step with an executor plugged in', () => {
  it('records samples, ends in Failed past the stall timeout under Hold, and recovers on a conclusive sample', async () => {
    const executor = new ScriptedExecutor(bench.clock);
    await openAnalysisRun('held', 'Hold');
    const holding = await advanceUntil('held', executor, (result, isvc) => result.phase === 'Paused' && isvc.status?.canary?.lastEvaluationTime !== undefined);
    expect(condition(holding)).toMatchObject({ status: 'True', reason: 'Pinned' });
    expect(holding.status?.canary).toMatchObject({ currentStep: 0, observedTrafficWeight: 20 });
    expect(holding.status?.canary?.lastConclusiveEvaluationTime).toBeUndefined();
    expect(holding.status?.canary?.metricResults).toEqual([expect.objectContaining({ name: 'err', passed: false, threshold: '0.05', operator: 'LTE' })]);
    expect(executor.requests[0]).toMatchObject({ namespace: NAMESPACE, isvcName: 'held', component: 'engine', step: 0 });

    bench.clock.tick(6 * 60);
    const failed = await advanceUntil('held', executor, (result) => result.phase === 'Failed');
    expect(failed.status?.components?.engine?.rolloutPhase).toBe('Failed');
    expect(failed.status?.rollout?.activeRun).toBeDefined();
    // Failed holds: the stable Deployment keeps serving beside the canary's step capacity.
    expect((await getDeployment(bench, 'held-engine'))?.spec?.replicas).toBe(1);

    executor.outcome = 'Successful';
    bench.clock.tick(60);
    const done = await advanceUntil('held', executor, (result) => result.outcome === 'closed');
    expect(done.status?.rollout?.lastRun?.outcome).toBe('Completed');
  });

  it('stalls by ome.io/rollout-ready-timeout rather than the group\'s readyTimeout when the annotation is set', async () => {
    const executor = new ScriptedExecutor(bench.clock);
    await openAnalysisRun('patient', 'Hold', 2, { interval: '1m' }, { 'ome.io/rollout-ready-timeout': '30m' });
    await advanceUntil('patient', executor, (result, isvc) => result.phase === 'Paused' && isvc.status?.canary?.lastEvaluationTime !== undefined);
    // Past the group's 5m, inside the annotation's 30m: still holding.
    bench.clock.tick(6 * 60);
    const holding = await advanceUntil('patient', executor, () => true);
    expect(holding.status?.components?.engine?.rolloutPhase).toBe('Paused');
    bench.clock.tick(25 * 60);
    const failed = await advanceUntil('patient', executor, (result) => result.phase === 'Failed');
    expect(failed.status?.components?.engine?.rolloutPhase).toBe('Failed');
  });

  it('rolls back on the first inconclusive sample under Rollback', async () => {
    const executor = new ScriptedExecutor(bench.clock);
    await openAnalysisRun('strict', 'Rollback');
    const rolledBack = await advanceUntil('strict', executor, (result) => result.outcome === 'closed');
    expect(rolledBack.status?.rollout?.lastRun?.outcome).toBe('RolledBack');
    expect(rolledBack.status?.canary?.rolledBackRevisionHash).toBe(rolledBack.status?.canary?.canaryRevisionHash);
    // Upstream's rollback applies weight 0 to the canary and records it.
    expect(rolledBack.status?.canary?.observedTrafficWeight).toBe(0);
    expect(await getDeployment(bench, 'strict-engine-canary')).toBeUndefined();
    expect(executor.requests.length).toBeGreaterThan(0);
  });

  it('counts failing samples once per interval and rolls back at failureLimit', async () => {
    const executor = new ScriptedExecutor(bench.clock);
    executor.outcome = 'Failed';
    await openAnalysisRun('failing', 'Hold');
    const once = await advanceUntil('failing', executor, (_result, isvc) => isvc.status?.canary?.analysisFailedChecks === 1);
    // Reconciles inside the interval do not count the same failure again.
    const again = await advanceUntil('failing', executor, () => true);
    expect(again.status?.canary?.analysisFailedChecks).toBe(1);
    expect(once.status?.canary?.lastConclusiveEvaluationTime).toBe(once.status?.canary?.lastEvaluationTime);
    bench.clock.tick(60);
    const rolledBack = await advanceUntil('failing', executor, (result) => result.outcome === 'closed');
    expect(rolledBack.status?.rollout?.lastRun?.outcome).toBe('RolledBack');
  });
});

function condition(isvc: RolloutIsvc) {
  return isvc.status?.conditions?.find((entry) => entry.type === 'RolloutPlanReady');
}

/** An executor whose answers wait until `parties` requests are in: both racers read the status before either writes. */
class BarrierExecutor extends ScriptedExecutor {
  private waiting: (() => void)[] = [];
  parties = 1;
  override async sample(request: AnalysisSampleRequest) {
    const answer = await super.sample(request);
    if (this.waiting.length + 1 < this.parties) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else for (const release of this.waiting.splice(0)) release();
    return answer;
  }
}

describe('evaluations are idempotent per (run, step, evaluation time)', () => {
  const failingAt = async (name: string, executor: ScriptedExecutor) => {
    executor.outcome = 'Failed';
    await openAnalysisRun(name, 'Hold', 3);
    const first = await advanceUntil(name, executor, (_result, isvc) => isvc.status?.canary?.analysisFailedChecks === 1);
    // The next sample is due: a delivery now takes it.
    bench.clock.tick(60);
    return first;
  };

  it('counts one failure and queries once when the same hint is delivered twice at once', async () => {
    const executor = new ScriptedExecutor(bench.clock);
    const before = await failingAt('twice', executor);
    const queried = executor.requests.length;
    const wiring: AnalysisWiring = async () => ({ metrics, analysis: executor });
    const hint = requestHint(before, {});
    const deliveries = await Promise.allSettled([
      handleRolloutRunHint(invocationFor(bench, hint, 'delivery-1'), undefined, wiring),
      handleRolloutRunHint(invocationFor(bench, hint, 'delivery-2'), undefined, wiring),
    ]);
    expect(deliveries.map((delivery) => delivery.status)).toEqual(['fulfilled', 'fulfilled']);
    const after = await getIsvc(bench, 'twice');
    expect(after.status?.canary?.analysisFailedChecks).toBe(2);
    expect(executor.requests.length - queried).toBe(1);
    expect(Date.parse(after.status?.canary?.lastEvaluationTime ?? '')).toBe(bench.clock.now() - (bench.clock.now() % 1000));
  });

  it('counts one failure when two advances race past the lease: the loser conflicts, re-reads and finds nothing due', async () => {
    const executor = new BarrierExecutor(bench.clock);
    await failingAt('racing', executor);
    executor.parties = 2;
    const queried = executor.requests.length;
    const race = () => advanceRolloutRun({ client: bench.client, clock: bench.clock, analysis: executor, metrics }, { namespace: NAMESPACE, name: 'racing' });
    const outcomes = await Promise.allSettled([race(), race()]);
    // Both read the same version and both sampled; only one write lands (resourceVersion guard).
    expect(executor.requests.length - queried).toBe(2);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const loser = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
    expect(loser.reason).toBeInstanceOf(ConflictError);
    executor.parties = 1;
    // The retry the lease loop makes on a conflict: a fresh read, nothing due, nothing queried.
    await race();
    const after = await getIsvc(bench, 'racing');
    expect(after.status?.canary?.analysisFailedChecks).toBe(2);
    expect(executor.requests.length - queried).toBe(2);
  });

  it('samples nothing on a pass that has the binding but no executor (repin-apply\'s advance), even under Rollback', async () => {
    await openAnalysisRun('bystander', 'Rollback');
    const work = {
      clusterId: CLUSTER_ID,
      client: bench.client,
      clock: bench.clock,
      reconcile: { leases: bench.stores.leases, clock: bench.clock, holder: 'repin-apply', leaseTtlMs: 10_000, maxConflictRetries: 5 },
      analysis: { metrics },
    };
    const deadline = Date.now() + 5_000;
    let result = await advanceUnderLease(work, { namespace: NAMESPACE, name: 'bystander' });
    while (result.phase !== 'Paused' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      result = await advanceUnderLease(work, { namespace: NAMESPACE, name: 'bystander' });
    }
    const held = await getIsvc(bench, 'bystander');
    expect(result.phase).toBe('Paused');
    expect(held.status?.canary?.lastEvaluationTime).toBeUndefined();
    expect(held.status?.canary?.rolledBackRevisionHash).toBeUndefined();
    expect(held.status?.rollout?.activeRun).toBeDefined();
  });

  it('queries nothing inside the interval, during the warm-up, or before the step is ready', async () => {
    const executor = new ScriptedExecutor(bench.clock);
    executor.outcome = 'Successful';
    await openAnalysisRun('quiet', 'Hold', 3, { interval: '1m', initialDelay: '2m' });
    // Until the canary's capacity is ready and two minutes have passed, passes sample nothing.
    await advanceUntil('quiet', executor, (result) => result.phase === 'Paused');
    expect(executor.requests).toHaveLength(0);
    bench.clock.tick(119);
    await advanceUntil('quiet', executor, () => true);
    expect(executor.requests).toHaveLength(0);
    bench.clock.tick(1);
    const sampled = await advanceUntil('quiet', executor, (_result, isvc) => isvc.status?.canary?.currentStep === 1);
    expect(executor.requests).toHaveLength(1);
    expect(sampled.status?.canary?.lastEvaluationTime).toBeUndefined();
  });
});
