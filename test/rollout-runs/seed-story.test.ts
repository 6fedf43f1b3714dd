/**
 * Seed 003 at use-case level: a run opens on a revision change and pins its plan; an edit
 * shows as drift; a repin (by the live digest, by a digest computed as the seed computes
 * it, or `now`) moves the run onto the edit and keeps its progress; every rejection the
 * seed shows, with its exact message; the CanaryPreStep hold and its release by promote.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '../../shared/domain/model/resources';
import { digestPlan } from '../../shared/domain/rollout/digest';
import { recordedRunID } from '../../shared/domain/rollout/run';
import type { RolloutGroup } from '../../shared/domain/rollout/types';
import { Message, RepinMessage } from '../../shared/domain/vocabulary';
import {
  advanceUntil,
  annotate,
  condition,
  createPolicy,
  deliverToRepinApply,
  digestAsTheSeedDoes,
  editGroups,
  eventsOf,
  getDeployment,
  getIsvc,
  manualCanary,
  NAMESPACE,
  activeRunOf,
  observedDigests,
  openRunOn,
  renderEngine,
  requestHint,
  requestRepin,
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

const twoSteps = manualCanary([
  { capacity: '25%', traffic: 10 },
  { capacity: '100%', traffic: 100 },
]);

describe('opening a run', () => {
  it('deploys a new service directly, then opens a run pinned to the live plan on a revision change', async () => {
    const isvc = await openRunOn(bench, 'open', [twoSteps]);
    const run = activeRunOf(isvc);
    const canary = isvc.status?.canary ?? { currentStep: -1, observedTrafficWeight: 0 };
    expect(run.runID).toMatch(/^open-[0-9a-f]{12}$/);
    expect(run.openedAt).toBe(run.pinnedAt);
    expect(run.targetRevisions).toEqual([{ component: 'engine', revision: canary.canaryRevisionHash, stableRevision: canary.stableRevisionHash }]);
    expect(run.plan.groups?.[0]).toMatchObject({ source: 'Inline', portableDigest: observedDigests(isvc)[0], group: twoSteps });
    expect(condition(isvc, 'RolloutPlanReady')).toMatchObject({ status: 'True', reason: 'Pinned', message: `run ${run.runID} pinned` });
    expect(condition(isvc, 'RolloutPlanDrift')).toMatchObject({ status: 'False', reason: 'InSync' });
    expect((await eventsOf(bench, 'open', 'RolloutRunOpened')).length).toBe(1);
    expect((await getDeployment(bench, 'open-engine-canary'))?.spec?.replicas).toBe(1);
    // Both are in the engine's rollout group, so the forwarder passes on their readiness.
    expect((await getDeployment(bench, 'open-engine-canary'))?.metadata.labels?.['ome.io/rollout-grouped']).toBe('true');
    expect((await getDeployment(bench, 'open-engine'))?.metadata.labels?.['ome.io/rollout-grouped']).toBe('true');

    const paused = await advanceUntil(bench, 'open', (result) => result.phase === 'Paused');
    expect(paused.status?.canary).toMatchObject({ currentStep: 0, observedTrafficWeight: 10 });
    expect(paused.status?.components?.engine?.rolloutPhase).toBe('Paused');
    expect((await getDeployment(bench, 'open-engine'))?.spec?.replicas).toBe(3);
  });

  it('records a policy group with its source, policyRef, generation and digest', async () => {
    await createPolicy(bench, 'guarded', { canary: { steps: [{ capacity: '50%', traffic: 50, pause: {} }] } });
    const isvc = await openRunOn(bench, 'policy', [{ components: ['engine'], policyRef: { name: 'guarded', progression: 'canary' } }]);
    expect(isvc.status?.rollout?.activeRun?.plan.groups?.[0]).toMatchObject({
      source: 'Policy',
      policyRef: { name: 'guarded', progression: 'canary' },
      policyGeneration: 1,
      portableDigest: expect.stringMatching(/^rp1:[0-9a-f]{12}$/),
      group: { components: ['engine'], canary: { steps: [{ capacity: '50%', traffic: 50, pause: {} }] } },
    });
  });

  it('supersedes a run whose target revision is replaced, and completes a blue-green group once ready', async () => {
    await openRunOn(bench, 'supersede', [twoSteps]);
    const first = (await getIsvc(bench, 'supersede')).status?.rollout?.activeRun?.runID;
    bench.clock.tick();
    expect(await renderEngine(bench, 'supersede', 'srt:v3')).toBe('run-opened');
    const isvc = await getIsvc(bench, 'supersede');
    // Upstream's lastRun has no run ID: it is recomputed from the targets, digests and openedAt kept there.
    expect(isvc.status?.rollout?.lastRun).toMatchObject({ outcome: 'Superseded' });
    expect(isvc.status?.rollout?.lastRun).not.toHaveProperty('runID');
    expect(recordedRunID('supersede', isvc.status!.rollout!.lastRun!)).toBe(first);
    expect(isvc.status?.rollout?.activeRun?.runID).not.toBe(first);

    await openRunOn(bench, 'bluegreen', [{ components: ['engine'] }]);
    const done = await advanceUntil(bench, 'bluegreen', (result) => result.outcome === 'closed');
    expect(done.status?.rollout?.lastRun?.outcome).toBe('Completed');
    expect(done.status?.rollout?.activeRun).toBeUndefined();
    expect((await eventsOf(bench, 'bluegreen', 'RolloutRunClosed'))[0]?.message).toMatch(/^run bluegreen-[0-9a-f]{12} closed: Completed$/);
  });
});

describe('drift and repin', () => {
  it('reports the edit as SpecNewerThanRun and repins onto the live digest, keeping the run', async () => {
    const before = activeRunOf(await openRunOn(bench, 'chat', [twoSteps]));
    await advanceUntil(bench, 'chat', (result) => result.phase === 'Paused');
    const edited = manualCanary([
      { capacity: '25%', traffic: 5 },
      { capacity: '100%', traffic: 100 },
    ]);
    await editGroups(bench, 'chat', [edited]);
    const drifted = await advanceUntil(bench, 'chat', () => true);
    const [live = ''] = observedDigests(drifted);
    const pinned = before.plan.groups?.[0]?.portableDigest ?? '';
    expect(condition(drifted, 'RolloutPlanDrift')).toMatchObject({
      status: 'True',
      reason: 'SpecNewerThanRun',
      message: Message.planDrift(0, live, pinned),
    });
    expect(drifted.status?.observedGeneration).toBe(drifted.metadata.generation);

    bench.clock.tick();
    const result = await requestRepin(bench, 'chat', digestPlan([live]));
    expect(result).toMatchObject({ outcome: 'applied', annotationRemoved: true });
    const after = await getIsvc(bench, 'chat');
    const run = activeRunOf(after);
    expect(run).toMatchObject({ runID: before.runID, openedAt: before.openedAt, targetRevisions: before.targetRevisions });
    expect(Date.parse(run.pinnedAt)).toBeGreaterThan(Date.parse(before.pinnedAt));
    expect(run.plan.groups?.[0]?.group).toEqual(edited);
    expect(after.metadata.annotations?.['ome.io/rollout-repin']).toBeUndefined();
    expect(condition(after, 'RolloutPlanDrift')).toMatchObject({ status: 'False', reason: 'InSync' });
    const events = await eventsOf(bench, 'chat', 'RolloutPlanRepinned');
    expect(events.map((event) => [event.type, event.message])).toEqual([
      ['Normal', `run ${before.runID} repinned: ${digestPlan([pinned])} -> ${digestPlan([live])}`],
    ]);
    expect(bench.repins).toContainEqual({ namespace: NAMESPACE, outcome: 'applied' });
  });

  it('repins by annotation with the digest computed as the seed computes it, and with now', async () => {
    await openRunOn(bench, 'byhand', [twoSteps]);
    await editGroups(bench, 'byhand', [manualCanary([{ capacity: '25%', traffic: 10 }])]);
    const drifted = await advanceUntil(bench, 'byhand', () => true);
    const digests = (drifted.status?.rollout?.groups ?? []).map((group) => group.observedDigest ?? '');
    expect(await requestRepin(bench, 'byhand', digestAsTheSeedDoes(digests))).toMatchObject({ outcome: 'applied' });

    await editGroups(bench, 'byhand', [manualCanary([{ capacity: '50%', traffic: 10 }])]);
    expect(await requestRepin(bench, 'byhand', 'now')).toMatchObject({ outcome: 'applied' });
    expect((await getIsvc(bench, 'byhand')).status?.rollout?.activeRun?.plan.groups?.[0]?.group.canary?.steps?.[0]?.capacity).toBe('50%');
    // The plan is now the live one: a further request is dropped without an event.
    expect(await requestRepin(bench, 'byhand', 'now')).toMatchObject({ outcome: 'discarded', annotationRemoved: true });
  });

  it('rejects a stale digest, a plan that does not render, a shape change and a malformed value, removing the annotation each time', async () => {
    await openRunOn(bench, 'reject', [twoSteps]);
    await editGroups(bench, 'reject', [manualCanary([{ capacity: '10%', traffic: 10 }])]);
    const fresh = (await advanceUntil(bench, 'reject', () => true)).status?.rollout?.groups?.[0]?.observedDigest ?? '';
    const stale = 'rp1:aaaaaaaaaaaa';
    expect(await requestRepin(bench, 'reject', stale)).toMatchObject({
      outcome: 'rejected',
      message: Message.repinStaleDigest(stale, digestPlan([fresh])),
      annotationRemoved: true,
    });
    expect(Message.repinStaleDigest(stale, 'rp1:bbbbbbbbbbbb')).toBe(
      'repin rejected: expected render digest rp1:aaaaaaaaaaaa but the current render is rp1:bbbbbbbbbbbb (a concurrent edit landed; re-issue with the current digest)',
    );

    await editGroups(bench, 'reject', [{ components: ['engine'], policyRef: { name: 'missing', progression: 'canary' } }]);
    expect(await requestRepin(bench, 'reject', 'now')).toMatchObject({
      outcome: 'rejected',
      message: 'repin rejected: the current source does not render (PolicyNotFound): groups[0]: RolloutPolicy "missing" not found',
    });

    await editGroups(bench, 'reject', [{ ...manualCanary([{ capacity: '10%', traffic: 10 }]), soak: '5m' }]);
    expect(await requestRepin(bench, 'reject', 'now')).toMatchObject({
      outcome: 'rejected',
      message: RepinMessage.topologyChanged('groups[0].soak changed'),
    });

    expect(await requestRepin(bench, 'reject', 'latest')).toMatchObject({ outcome: 'rejected', message: RepinMessage.invalidValue('"latest"') });
    const warnings = await eventsOf(bench, 'reject', 'RolloutRepinRejected');
    expect(warnings.every((event) => event.type === 'Warning')).toBe(true);
    expect(warnings).toHaveLength(4);
    expect((await getIsvc(bench, 'reject')).metadata.annotations?.['ome.io/rollout-repin']).toBeUndefined();
  });
});

describe('the canary after a repin', () => {
  it('holds before a step whose traffic rose, moves to its capacity, and is released by promote', async () => {
    await openRunOn(bench, 'hold', [twoSteps]);
    await advanceUntil(bench, 'hold', (result) => result.phase === 'Paused');
    await editGroups(bench, 'hold', [manualCanary([{ capacity: '50%', traffic: 30 }, { capacity: '100%', traffic: 100 }])]);
    // The repin advances the run itself: its own writes bring no further hint.
    const annotated = await annotate(bench, 'hold', 'ome.io/rollout-repin', 'now');
    const repinned = await deliverToRepinApply(bench, requestHint(annotated, { rolloutRepin: true }));
    expect(repinned).toMatchObject({ repin: { outcome: 'applied' }, advanced: { phase: 'Pending' } });
    const held = await getIsvc(bench, 'hold');
    expect(held.status?.canary).toMatchObject({ currentStep: 0, preStepHold: true, observedTrafficWeight: 10 });
    expect((await getDeployment(bench, 'hold-engine-canary'))?.spec?.replicas).toBe(2);
    const paused = await advanceUntil(bench, 'hold', (result) => result.phase === 'Paused');
    expect(paused.status?.canary).toMatchObject({ preStepHold: true, observedTrafficWeight: 10 });

    const revision = paused.status?.canary?.canaryRevisionHash ?? '';
    await annotate(bench, 'hold', 'ome.io/rollout-promote', revision);
    const released = await advanceUntil(bench, 'hold', () => true);
    expect(released.status?.canary).toMatchObject({ currentStep: 0, preStepHold: false, observedTrafficWeight: 30 });
    expect(released.metadata.annotations?.['ome.io/rollout-promote']).toBeUndefined();

    // The step's own gate applies as usual: one promote per manual gate, to the end.
    await annotate(bench, 'hold', 'ome.io/rollout-promote', revision);
    await advanceUntil(bench, 'hold', (result, isvc) => result.phase === 'Paused' && isvc.status?.canary?.currentStep === 1);
    await annotate(bench, 'hold', 'ome.io/rollout-promote', revision);
    const done = await advanceUntil(bench, 'hold', (result) => result.outcome === 'closed');
    expect(done.status?.rollout?.lastRun?.outcome).toBe('Completed');
    expect(await getDeployment(bench, 'hold-engine-canary')).toBeUndefined();
    const stable = await getDeployment(bench, 'hold-engine');
    expect(stable?.metadata.annotations?.['ome.io/workload-revision']).toBe(revision);
    expect(stable?.spec?.replicas).toBe(4);
  });

  it('takes the last step when the new plan has fewer, and keeps a finished canary finished', async () => {
    const three = manualCanary([
      { capacity: '25%', traffic: 10 },
      { capacity: '50%', traffic: 20 },
      { capacity: '75%', traffic: 30 },
    ]);
    await openRunOn(bench, 'fewer', [three]);
    for (const step of [1, 2]) {
      const paused = await advanceUntil(bench, 'fewer', (result) => result.phase === 'Paused');
      await annotate(bench, 'fewer', 'ome.io/rollout-promote', paused.status?.canary?.canaryRevisionHash ?? '');
      await advanceUntil(bench, 'fewer', (_result, isvc) => isvc.status?.canary?.currentStep === step);
    }
    await advanceUntil(bench, 'fewer', (result) => result.phase === 'Paused');
    await editGroups(bench, 'fewer', [manualCanary([{ capacity: '25%', traffic: 10 }, { capacity: '50%', traffic: 20 }])]);
    expect(await requestRepin(bench, 'fewer', 'now')).toMatchObject({ outcome: 'applied' });
    expect((await getIsvc(bench, 'fewer')).status?.canary).toMatchObject({ currentStep: 1, preStepHold: false });

    // A canary past its last gate, still promoting, stays finished through a repin. It is
    // marked as upstream marks it: one past the last of its 2 steps, all traffic, no stable hash.
    const isvc = await getIsvc(bench, 'fewer');
    const { stableRevisionHash: _cleared, ...engineCanary } = isvc.status!.components!.engine!.canary!;
    const finished = { ...engineCanary, currentStep: 2, observedTrafficWeight: 100 };
    await bench.client.replaceStatus(Resources.inferenceServices, {
      ...isvc,
      status: { ...isvc.status, canary: finished, components: { ...isvc.status?.components, engine: { ...isvc.status?.components?.engine, canary: finished } } },
    });
    await editGroups(bench, 'fewer', [manualCanary([{ capacity: '25%', traffic: 90 }])]);
    expect(await requestRepin(bench, 'fewer', 'now')).toMatchObject({ outcome: 'applied' });
    const repinned = await getIsvc(bench, 'fewer');
    expect(repinned.status?.canary).toMatchObject({ currentStep: 1, observedTrafficWeight: 100 });
    expect(repinned.status?.canary).not.toHaveProperty('stableRevisionHash');
    expect(repinned.status?.canary).not.toHaveProperty('preStepHold', true);
  });

  it('fits every canary group to its new steps, not only the first', async () => {
    const router: RolloutGroup = { components: ['router'], canary: { steps: [{ capacity: '25%', traffic: 10, pause: {} }, { capacity: '50%', traffic: 20, pause: {} }] } };
    await openRunOn(bench, 'multi', [router, twoSteps]);
    const isvc = await getIsvc(bench, 'multi');
    await bench.client.replaceStatus(Resources.inferenceServices, {
      ...isvc,
      status: { ...isvc.status, components: { ...isvc.status?.components, router: { canary: { currentStep: 1, observedTrafficWeight: 20 } } } },
    });
    await editGroups(bench, 'multi', [
      { components: ['router'], canary: { steps: [{ capacity: '25%', traffic: 40, pause: {} }] } },
      manualCanary([{ capacity: '25%', traffic: 15 }, { capacity: '100%', traffic: 100 }]),
    ]);
    expect(await requestRepin(bench, 'multi', 'now')).toMatchObject({ outcome: 'applied' });
    const after = await getIsvc(bench, 'multi');
    // Each unit's canary sits on its entrypoint component; status.canary mirrors the router's unit, as upstream's alias does.
    expect(after.status?.components?.router?.canary).toEqual({ currentStep: 0, observedTrafficWeight: 20, preStepHold: true });
    expect(after.status?.components?.engine?.canary).toMatchObject({ currentStep: 0, preStepHold: true, observedTrafficWeight: 0 });
    expect(after.status?.canary).toEqual(after.status?.components?.router?.canary);
  });
});

describe('schema parity', () => {
  it('left nothing for the API server to prune: every status write fits the CRDs, which mirror upstream OME', () => {
    expect(bench.cluster.prunedWrites()).toEqual([]);
  });
});
