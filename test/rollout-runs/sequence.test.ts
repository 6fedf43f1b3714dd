/**
 * A plan of single-component blueGreen groups rolls as a sequence: one run targets
 * every changed component, group N+1's new workload is held (its stable Deployment keeps
 * serving, PHASE Pending) until group N completed and its soak elapsed, and the next
 * render writes it once its turn has come.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '../../shared/domain/model/resources';
import type { RolloutIsvc } from '../../shared/use-cases/rollout-runs/rollout-status';
import type { RolloutGroup } from '../../shared/domain/rollout/types';
import type { HintEvent } from '../../shared/domain/hint-event';
import type { EventPublisher } from '../../shared/ports/event-publisher';
import { advanceAndRender } from '../../shared/app/rollout-hints';
import { activeRunOf, advanceOnce, advanceUntil, CLUSTER_ID, eventsOf, getDeployment, getIsvc, NAMESPACE, renderPass, startBench, type Bench } from './harness';

let bench: Bench;
beforeAll(async () => {
  bench = await startBench();
});
afterAll(async () => {
  await bench.stop();
});

const WORKLOAD_REVISION = 'ome.io/workload-revision';

async function createService(name: string, groups: RolloutGroup[]): Promise<RolloutIsvc> {
  return bench.client.create<RolloutIsvc>(Resources.inferenceServices, {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace: NAMESPACE },
    spec: { engine: { minReplicas: 2 }, decoder: { minReplicas: 3 }, model: { name: 'llama' }, runtime: { name: 'srt' }, rollout: { groups } },
  });
}

const revisionOn = async (name: string) => (await getDeployment(bench, name))?.metadata.annotations?.[WORKLOAD_REVISION];
const coordinationOf = (isvc: RolloutIsvc) => (isvc.status?.rolloutCoordination as { groups?: Record<string, unknown>[] } | undefined)?.groups;

describe('decoder then engine, blueGreen groups with soak', () => {
  it('rolls the decoder, soaks, then rolls the engine, in one run', async () => {
    await createService('seq', [
      { components: ['decoder'], blueGreen: {}, soak: '2m' },
      { components: ['engine'], blueGreen: {} },
    ] as RolloutGroup[]);
    await renderPass(bench, 'seq', { engine: 'srt:v1', decoder: 'dec:v1' });
    const engineV1 = await revisionOn('seq-engine');
    bench.clock.tick();

    expect(await renderPass(bench, 'seq', { engine: 'srt:v2', decoder: 'dec:v2' })).toEqual({ engine: 'run-opened', decoder: 'run-opened' });
    const opened = await getIsvc(bench, 'seq');
    const run = activeRunOf(opened);
    const target = (component: string) => run.targetRevisions?.find((entry) => entry.component === component)?.revision;
    expect(run.targetRevisions?.map((entry) => entry.component)).toEqual(['decoder', 'engine']);
    // The decoder's group goes first; the engine's new workload is held, the old one serves.
    expect(await revisionOn('seq-decoder')).toBe(target('decoder'));
    expect(await revisionOn('seq-engine')).toBe(engineV1);
    expect(opened.status?.components?.engine?.rolloutPhase).toBe('Pending');
    expect(coordinationOf(opened)).toEqual([{ name: '0', components: ['decoder'], phase: 'Waiting', lastTransitionTime: run.openedAt }]);

    // The decoder completes; the engine waits out the decoder's soak.
    const soaking = await advanceUntil(bench, 'seq', (_result, isvc) => isvc.status?.components?.decoder?.rolloutPhase === 'Stable');
    const completedAt = coordinationOf(soaking)?.[0]?.lastTransitionTime as string;
    expect(coordinationOf(soaking)).toEqual([
      { name: '0', components: ['decoder'], phase: 'Idle', compositePhase: 'Sequential.AwaitingNextComponent', lastTransitionTime: completedAt },
    ]);
    expect(soaking.status?.components?.engine?.rolloutPhase).toBe('Pending');
    expect(soaking.status?.rollout?.activeRun?.runID).toBe(run.runID);

    // Passes and renders during the soak leave the engine alone and ask to look again when it ends.
    bench.clock.tick(60);
    expect(await advanceOnce(bench, 'seq')).toMatchObject({ outcome: 'advanced', runID: run.runID, phase: 'Pending' });
    expect(await renderPass(bench, 'seq', { engine: 'srt:v2', decoder: 'dec:v2' })).toEqual({ engine: 'run-in-progress', decoder: 'run-in-progress' });
    expect(await revisionOn('seq-engine')).toBe(engineV1);
    const remaining = Math.ceil(120 - (bench.clock.now() - Date.parse(completedAt)) / 1000);
    const held = await advanceOnce(bench, 'seq');
    expect(held).toMatchObject({ outcome: 'advanced', requeueAfterSeconds: remaining });
    expect(held.renderDue).toBeUndefined();

    // The soak ends: the engine's turn begins, and the next render writes its workload.
    bench.clock.tick(remaining);
    // As rollout-run does: the pass, then a relisted hint of the InferenceService for the pin function to render on.
    const published: HintEvent[] = [];
    const publisher: EventPublisher = {
      publish: async (events) => {
        published.push(...events);
        return { published: events.length, skipped: [], failed: [] };
      },
    };
    const turn = await advanceAndRender(
      {
        clusterId: CLUSTER_ID,
        client: bench.client,
        clock: bench.clock,
        reconcile: { leases: bench.stores.leases, clock: bench.clock, holder: 'seq', leaseTtlMs: 10_000, maxConflictRetries: 5 },
        publisher,
      },
      { namespace: NAMESPACE, name: 'seq' },
    );
    expect(turn.renderDue).toEqual(['engine']);
    expect(published.map((event) => [event.detail.kind, event.detail.name, event.detail.change])).toEqual([['InferenceService', 'seq', 'relisted']]);
    const begun = await getIsvc(bench, 'seq');
    expect(coordinationOf(begun)?.map((entry) => [entry.name, entry.phase])).toEqual([
      ['0', 'Idle'],
      ['1', 'Waiting'],
    ]);
    expect(await renderPass(bench, 'seq', { engine: 'srt:v2', decoder: 'dec:v2' })).toEqual({ engine: 'run-in-progress', decoder: 'run-in-progress' });
    expect(await revisionOn('seq-engine')).toBe(target('engine'));

    const done = await advanceUntil(bench, 'seq', (result) => result.outcome === 'closed');
    expect(done.status?.rollout?.lastRun?.outcome).toBe('Completed');
    expect(done.status?.components?.engine?.rolloutPhase).toBe('Stable');
    expect(coordinationOf(done)?.map((entry) => [entry.name, entry.phase])).toEqual([
      ['0', 'Idle'],
      ['1', 'Idle'],
    ]);
    expect((await eventsOf(bench, 'seq', 'RolloutRunOpened')).length).toBe(1);
    expect((await eventsOf(bench, 'seq', 'RolloutRunClosed')).map((event) => event.message)).toEqual([`run ${run.runID} closed: Completed`]);
  });

  it('rolls the next group at once when its predecessor has no soak', async () => {
    await createService('noso', [{ components: ['decoder'] }, { components: ['engine'] }] as RolloutGroup[]);
    await renderPass(bench, 'noso', { engine: 'srt:v1', decoder: 'dec:v1' });
    bench.clock.tick();
    await renderPass(bench, 'noso', { engine: 'srt:v2', decoder: 'dec:v2' });
    const run = activeRunOf(await getIsvc(bench, 'noso'));
    const engineTarget = run.targetRevisions?.find((entry) => entry.component === 'engine')?.revision;
    expect(await revisionOn('noso-engine')).not.toBe(engineTarget);
    await advanceUntil(bench, 'noso', (result) => result.renderDue?.includes('engine') === true);
    await renderPass(bench, 'noso', { engine: 'srt:v2', decoder: 'dec:v2' });
    expect(await revisionOn('noso-engine')).toBe(engineTarget);
    const done = await advanceUntil(bench, 'noso', (result) => result.outcome === 'closed');
    expect(done.status?.rollout?.lastRun?.outcome).toBe('Completed');
  });

  it('runs the groups at once under groupOrdering Concurrent', async () => {
    const groups = [{ components: ['decoder'] }, { components: ['engine'] }] as RolloutGroup[];
    await bench.client.create<RolloutIsvc>(Resources.inferenceServices, {
      apiVersion: 'ome.io/v1beta1',
      kind: 'InferenceService',
      metadata: { name: 'conc', namespace: NAMESPACE },
      spec: { engine: { minReplicas: 2 }, decoder: { minReplicas: 3 }, model: { name: 'llama' }, runtime: { name: 'srt' }, rollout: { groups, groupOrdering: 'Concurrent' } } as RolloutIsvc['spec'],
    });
    await renderPass(bench, 'conc', { engine: 'srt:v1', decoder: 'dec:v1' });
    bench.clock.tick();
    await renderPass(bench, 'conc', { engine: 'srt:v2', decoder: 'dec:v2' });
    const isvc = await getIsvc(bench, 'conc');
    const run = activeRunOf(isvc);
    expect(await revisionOn('conc-engine')).toBe(run.targetRevisions?.find((entry) => entry.component === 'engine')?.revision);
    expect(isvc.status?.rolloutCoordination).toBeUndefined();
  });
});
