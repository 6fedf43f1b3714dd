/**
 * Every rollout group rolls, not only the engine's: a plan whose groups hold only a
 * decoder or a router rolls that component's own Deployment through its progression;
 * engine and decoder changed together end in one run targeting both; a plan the plane
 * cannot execute, or whose analysis nothing can evaluate, parks visibly instead of
 * opening a run or closing one as Completed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '../../shared/domain/model/resources';
import type { RolloutIsvc } from '../../shared/use-cases/rollout-runs/rollout-status';
import type { RolloutGroup } from '../../shared/domain/rollout/types';
import {
  activeRunOf,
  advanceUntil,
  annotate,
  condition,
  eventsOf,
  getDeployment,
  getIsvc,
  NAMESPACE,
  renderComponent,
  renderEngine,
  renderPass,
  startBench,
  type Bench,
} from './harness';

let bench: Bench;
beforeAll(async () => {
  bench = await startBench();
});
afterAll(async () => {
  await bench.stop();
});

const WORKLOAD_REVISION = 'ome.io/workload-revision';

async function createService(name: string, groups: RolloutGroup[], spec: Record<string, unknown> = {}): Promise<RolloutIsvc> {
  return bench.client.create<RolloutIsvc>(Resources.inferenceServices, {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      engine: { minReplicas: 2 },
      decoder: { minReplicas: 4 },
      router: { minReplicas: 2 },
      model: { name: 'llama' },
      runtime: { name: 'srt' },
      rollout: { groups },
      ...spec,
    },
  });
}

const manualSteps = { steps: [{ capacity: '50%', traffic: 20, pause: {} }, { capacity: '100%', traffic: 100, pause: {} }] };

describe('a group that holds only the decoder', () => {
  it('rolls the decoder through its canary steps while the engine deploys directly', async () => {
    await createService('pd', [{ components: ['decoder'], canary: manualSteps }]);
    expect(await renderEngine(bench, 'pd', 'srt:v1')).toBe('created');
    expect(await renderComponent(bench, 'pd', 'decoder', 'dec:v1')).toBe('created');
    bench.clock.tick();

    // The engine is in no group: its new revision replaces it at once and opens no run.
    expect(await renderEngine(bench, 'pd', 'srt:v2')).toBe('updated');
    expect((await getIsvc(bench, 'pd')).status?.rollout?.activeRun).toBeUndefined();

    expect(await renderComponent(bench, 'pd', 'decoder', 'dec:v2')).toBe('run-opened');
    const opened = await getIsvc(bench, 'pd');
    const target = activeRunOf(opened).targetRevisions?.find((entry) => entry.component === 'decoder');
    expect(activeRunOf(opened).targetRevisions?.map((entry) => entry.component)).toEqual(['decoder']);
    expect((await getDeployment(bench, 'pd-decoder-canary'))?.spec?.replicas).toBe(2);

    const paused = await advanceUntil(bench, 'pd', (result) => result.phase === 'Paused');
    expect(paused.status?.components?.decoder?.rolloutPhase).toBe('Paused');
    expect((await getDeployment(bench, 'pd-decoder'))?.spec?.replicas).toBe(2);

    const revision = target?.revision ?? '';
    await annotate(bench, 'pd', 'ome.io/rollout-promote', revision);
    await advanceUntil(bench, 'pd', (result, isvc) => result.phase === 'Paused' && isvc.metadata.annotations?.['ome.io/rollout-promote'] === undefined);
    await annotate(bench, 'pd', 'ome.io/rollout-promote', revision);
    const done = await advanceUntil(bench, 'pd', (result) => result.outcome === 'closed');

    expect(done.status?.rollout?.lastRun?.outcome).toBe('Completed');
    expect(done.status?.components?.decoder?.rolloutPhase).toBe('Stable');
    expect(await getDeployment(bench, 'pd-decoder-canary')).toBeUndefined();
    const decoder = await getDeployment(bench, 'pd-decoder');
    expect(decoder?.metadata.annotations?.[WORKLOAD_REVISION]).toBe(revision);
    expect(decoder?.spec?.replicas).toBe(4);
  });
});

describe('a group that holds only the router', () => {
  it('replaces the router blue-green and completes once it is ready', async () => {
    await createService('routed', [{ components: ['router'] }]);
    await renderEngine(bench, 'routed', 'srt:v1');
    await renderComponent(bench, 'routed', 'router', 'router:v1');
    bench.clock.tick();
    expect(await renderComponent(bench, 'routed', 'router', 'router:v2')).toBe('run-opened');
    const revision = activeRunOf(await getIsvc(bench, 'routed')).targetRevisions?.[0]?.revision;

    const done = await advanceUntil(bench, 'routed', (result) => result.outcome === 'closed');
    expect(done.status?.rollout?.lastRun?.outcome).toBe('Completed');
    expect(done.status?.components?.router?.rolloutPhase).toBe('Stable');
    expect((await getDeployment(bench, 'routed-router'))?.metadata.annotations?.[WORKLOAD_REVISION]).toBe(revision);
    expect((await eventsOf(bench, 'routed', 'RolloutRunClosed')).map((event) => event.message)).toEqual([expect.stringMatching(/^run routed-[0-9a-f]{12} closed: Completed$/)]);
  });
});

describe('engine and decoder changed by one runtime change', () => {
  it('open one run that targets both and completes only when both groups have', async () => {
    const groups = [{ components: ['engine'] }, { components: ['decoder'] }] as RolloutGroup[];
    await createService('both', groups, { rollout: { groups, groupOrdering: 'Concurrent' } });
    expect(await renderPass(bench, 'both', { engine: 'srt:v1', decoder: 'dec:v1' })).toEqual({ engine: 'created', decoder: 'created' });
    bench.clock.tick();
    expect(await renderPass(bench, 'both', { engine: 'srt:v2', decoder: 'dec:v2' })).toEqual({ engine: 'run-opened', decoder: 'run-opened' });

    const isvc = await getIsvc(bench, 'both');
    const run = activeRunOf(isvc);
    expect(run.targetRevisions?.map((entry) => entry.component)).toEqual(['engine', 'decoder']);
    // One run: nothing was superseded on the way.
    expect(isvc.status?.rollout?.lastRun).toBeUndefined();
    expect((await eventsOf(bench, 'both', 'RolloutRunOpened')).map((event) => event.message)).toEqual([expect.stringContaining(`run ${run.runID} opened`)]);
    expect(await eventsOf(bench, 'both', 'RolloutRunClosed')).toEqual([]);
    // Concurrent: both workloads are written at once.
    for (const component of ['engine', 'decoder']) {
      const target = run.targetRevisions?.find((entry) => entry.component === component)?.revision;
      expect((await getDeployment(bench, `both-${component}`))?.metadata.annotations?.[WORKLOAD_REVISION]).toBe(target);
    }

    // The next pass over the same renders changes nothing.
    expect(await renderPass(bench, 'both', { engine: 'srt:v2', decoder: 'dec:v2' })).toEqual({ engine: 'run-in-progress', decoder: 'run-in-progress' });
    expect(activeRunOf(await getIsvc(bench, 'both')).runID).toBe(run.runID);

    const done = await advanceUntil(bench, 'both', (result) => result.outcome === 'closed');
    expect(done.status?.rollout?.lastRun?.outcome).toBe('Completed');
    expect(done.status?.components?.engine?.rolloutPhase).toBe('Stable');
    expect(done.status?.components?.decoder?.rolloutPhase).toBe('Stable');
  });

  it('park together, with one event, when the plan does not render', async () => {
    const groups = [
      { components: ['engine'], policyRef: { name: 'missing', progression: 'blueGreen' } },
      { components: ['decoder'], policyRef: { name: 'missing', progression: 'blueGreen' } },
    ] as RolloutGroup[];
    await createService('parked', groups, { rollout: { groups, groupOrdering: 'Concurrent' } });
    await renderPass(bench, 'parked', { engine: 'srt:v1', decoder: 'dec:v1' });
    const engineV1 = (await getDeployment(bench, 'parked-engine'))?.metadata.annotations?.[WORKLOAD_REVISION];
    bench.clock.tick();
    expect(await renderPass(bench, 'parked', { engine: 'srt:v2', decoder: 'dec:v2' })).toEqual({ engine: 'unchanged', decoder: 'unchanged' });
    expect((await getIsvc(bench, 'parked')).status?.rollout?.activeRun).toBeUndefined();
    expect((await getDeployment(bench, 'parked-engine'))?.metadata.annotations?.[WORKLOAD_REVISION]).toBe(engineV1);
    const events = await eventsOf(bench, 'parked', 'RolloutPlanParked');
    expect(events.map((event) => event.count ?? 1)).toEqual([1]);
  });

  it('still end in one run when rendered one component at a time', async () => {
    const groups = [{ components: ['engine'] }, { components: ['decoder'] }] as RolloutGroup[];
    await createService('apart', groups, { rollout: { groups, groupOrdering: 'Concurrent' } });
    await renderEngine(bench, 'apart', 'srt:v1');
    await renderComponent(bench, 'apart', 'decoder', 'dec:v1');
    bench.clock.tick();
    expect(await renderEngine(bench, 'apart', 'srt:v2')).toBe('run-opened');
    expect(await renderComponent(bench, 'apart', 'decoder', 'dec:v2')).toBe('run-opened');
    const isvc = await getIsvc(bench, 'apart');
    expect(activeRunOf(isvc).targetRevisions?.map((entry) => entry.component)).toEqual(['engine', 'decoder']);
    expect(isvc.status?.rollout?.lastRun).toMatchObject({ outcome: 'Superseded' });
  });
});

describe('a new decoder revision while the engine already rolled', () => {
  it('supersedes the run with one that targets only what still has to roll', async () => {
    await createService('mixed', [{ components: ['engine'] }, { components: ['decoder'], canary: manualSteps }]);
    await renderEngine(bench, 'mixed', 'srt:v1');
    await renderComponent(bench, 'mixed', 'decoder', 'dec:v1');
    bench.clock.tick();
    await renderEngine(bench, 'mixed', 'srt:v2');
    expect(await renderComponent(bench, 'mixed', 'decoder', 'dec:v2')).toBe('run-opened');
    const rolling = await advanceUntil(bench, 'mixed', (result, isvc) => result.phase === 'Paused' && isvc.status?.components?.engine?.rolloutPhase === 'Stable');
    expect(activeRunOf(rolling).targetRevisions?.map((entry) => entry.component).sort()).toEqual(['decoder', 'engine']);

    bench.clock.tick();
    expect(await renderComponent(bench, 'mixed', 'decoder', 'dec:v3')).toBe('run-opened');
    const retargeted = await getIsvc(bench, 'mixed');
    expect(activeRunOf(retargeted).targetRevisions?.map((entry) => entry.component)).toEqual(['decoder']);
    expect(retargeted.status?.rollout?.lastRun?.outcome).toBe('Superseded');
  });
});

describe('a plan the plane cannot execute', () => {
  it('parks with RolloutPlanReady False and a RolloutPlanParked event when a grouped component runs leader and worker pods', async () => {
    await createService('lws', [{ components: ['engine'] }], { engine: { minReplicas: 2, leader: {}, worker: { size: 2 } } });
    await renderEngine(bench, 'lws', 'srt:v1');
    bench.clock.tick();
    expect(await renderEngine(bench, 'lws', 'srt:v2')).toBe('unchanged');

    const parked = await getIsvc(bench, 'lws');
    expect(parked.status?.rollout?.activeRun).toBeUndefined();
    expect(condition(parked, 'RolloutPlanReady')).toMatchObject({
      status: 'False',
      reason: 'PlanInvalid',
      message: 'groups[0]: component "engine" runs leader and worker pods (a LeaderWorkerSet), which this plane does not render or roll',
    });
    expect((await eventsOf(bench, 'lws', 'RolloutPlanParked')).map((event) => event.type)).toEqual(['Warning']);
    // The stable revision keeps serving: nothing was replaced.
    expect((await getDeployment(bench, 'lws-engine'))?.metadata.annotations?.[WORKLOAD_REVISION]).toBeDefined();
    expect(await getDeployment(bench, 'lws-engine-canary')).toBeUndefined();
  });
});

describe('a run none of whose targets is in a pinned group', () => {
  it('stays open with a RolloutPlanParked event instead of closing as Completed', async () => {
    await createService('orphan', [{ components: ['engine'] }]);
    await renderEngine(bench, 'orphan', 'srt:v1');
    bench.clock.tick();
    expect(await renderEngine(bench, 'orphan', 'srt:v2')).toBe('run-opened');
    const opened = await getIsvc(bench, 'orphan');
    const run = activeRunOf(opened);
    // A stored run whose only target names a component no pinned group holds.
    await bench.client.replaceStatus(Resources.inferenceServices, {
      ...opened,
      status: { ...opened.status, rollout: { ...opened.status?.rollout, activeRun: { ...run, targetRevisions: [{ component: 'router', revision: 'abcd1234' }] } } },
    });

    const result = await advanceUntil(bench, 'orphan', () => true);
    expect(result.status?.rollout?.activeRun?.runID).toBe(run.runID);
    expect(result.status?.rollout?.lastRun?.outcome).not.toBe('Completed');
    const events = await eventsOf(bench, 'orphan', 'RolloutPlanParked');
    expect(events.map((event) => [event.type, event.message])).toEqual([
      ['Warning', `run ${run.runID} cannot be executed: none of its targets (router) is in a pinned group`],
    ]);
  });
});

describe('an analysis step with no metrics provider', () => {
  it('parks the plan as ProviderUnbound instead of holding Paused, and leaves the stable revision serving', async () => {
    const analysis = { interval: '1m', failureLimit: 1, onInconclusive: 'Rollback' as const, metrics: [{ name: 'err', query: 'q', operator: 'LTE' as const, threshold: '0.05' }] };
    await createService('gated', [{ components: ['engine'], canary: { steps: [{ capacity: '25%', traffic: 10, analysis }, { capacity: '100%', traffic: 100 }] } }]);
    await renderEngine(bench, 'gated', 'srt:v1');
    const before = (await getDeployment(bench, 'gated-engine'))?.metadata.annotations?.[WORKLOAD_REVISION];
    bench.clock.tick();
    expect(await renderEngine(bench, 'gated', 'srt:v2')).toBe('unchanged');

    const parked = await getIsvc(bench, 'gated');
    expect(parked.status?.rollout?.activeRun).toBeUndefined();
    expect(condition(parked, 'RolloutPlanReady')).toMatchObject({
      status: 'False',
      reason: 'ProviderUnbound',
      message: 'groups[0]: canary.steps[0] is an analysis step, and no metrics provider is bound in this cluster to evaluate it',
    });
    const events = await eventsOf(bench, 'gated', 'RolloutPlanParked');
    expect(events.map((event) => event.type)).toEqual(['Warning']);
    expect(events[0]?.message).toContain('ProviderUnbound');
    expect((await getDeployment(bench, 'gated-engine'))?.metadata.annotations?.[WORKLOAD_REVISION]).toBe(before);
    expect(await getDeployment(bench, 'gated-engine-canary')).toBeUndefined();
  });
});
