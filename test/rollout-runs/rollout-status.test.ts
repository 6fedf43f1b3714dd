/**
 * Plan conditions as the plugin reads them: their lastTransitionTime must place them in
 * the current run, so every change of status, reason or message restamps them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshPlanStatus } from '../../shared/use-cases/rollout-runs';
import { clearCanaryStates, readCanaryStates, upsertCondition, writeCanaryStates, type RolloutIsvcStatus } from '../../shared/use-cases/rollout-runs/rollout-status';
import type { CanaryState, PinnedGroup } from '../../shared/domain/rollout/types';
import { checkRepinRefusal } from '../../shared/domain/rollout/repin';
import type { StatusCondition } from '../../shared/domain/rollout/types';
import { Resources } from '../../shared/domain/model/resources';
import type { RolloutIsvc } from '../../shared/use-cases/rollout-runs/rollout-status';
import { RepinRefusal } from '../../shared/domain/vocabulary';
import { condition, createIsvc, manualCanary, NAMESPACE, renderEngine, startBench, type Bench } from './harness';

const before = new Date('2026-09-28T14:00:00Z');
const after = new Date('2026-09-28T14:05:00Z');
const inSync = (message: string) => ({ type: 'RolloutPlanDrift', status: 'False', reason: 'InSync', message }) as const;

describe('Function: upsertCondition', () => {
  it.each([
    ['an identical condition', inSync('no active run'), '2026-09-28T14:00:00Z'],
    ['a new message with the same status and reason', inSync('run chat-0123456789ab follows the live plan'), '2026-09-28T14:05:00Z'],
    ['a new reason', { ...inSync('x'), status: 'True', reason: 'SpecNewerThanRun' } as const, '2026-09-28T14:05:00Z'],
  ])('keeps or restamps lastTransitionTime for %s', (_case, next, stamped) => {
    // Prepare
    const existing: StatusCondition[] = upsertCondition([], inSync('no active run'), before);

    // Act
    const [updated] = upsertCondition(existing, next, after);

    // Assess
    expect(updated).toMatchObject({ ...next, lastTransitionTime: stamped });
  });
});

describe('Function: readCanaryStates / writeCanaryStates / clearCanaryStates', () => {
  const steps = [{ capacity: '100%', traffic: 100, pause: {} }];
  const pinned = (...groups: PinnedGroup['group'][]): PinnedGroup[] => groups.map((group) => ({ source: 'Inline', group }));
  const state = (currentStep: number): CanaryState => ({ canaryRevisionHash: 'bbbbbbbb', currentStep, observedTrafficWeight: 10 });

  it.each<[string, PinnedGroup[], string[], string]>([
    ['an engine group on the engine', pinned({ components: ['engine'], canary: { steps } }), ['engine'], 'engine'],
    ['an engine and decoder unit on the engine', pinned({ components: ['decoder', 'engine'], canary: { steps } }), ['engine'], 'engine'],
    ['a router group on the router, which the alias mirrors', pinned({ components: ['router'], canary: { steps } }, { components: ['engine'], canary: { steps } }), ['router', 'engine'], 'router'],
    // Not the unit owning the ISVC's entrypoint, so no alias.
    ['a decoder-only group on the decoder', pinned({ components: ['decoder'], canary: { steps } }), ['decoder'], ''],
  ])('writes %s', (_case, groups, slots, alias) => {
    const status: RolloutIsvcStatus = { components: { engine: { rolloutPhase: 'Paused' } } };
    const states = new Map(groups.map((_group, index) => [index, state(index)]));
    writeCanaryStates(status, groups, states);
    expect(Object.entries(status.components ?? {}).filter(([, entry]) => entry.canary).map(([component]) => component)).toEqual(
      [...slots].sort((a, b) => ['engine', 'router', 'decoder'].indexOf(a) - ['engine', 'router', 'decoder'].indexOf(b)),
    );
    expect(status.components?.engine?.rolloutPhase).toBe('Paused');
    expect(status.canary).toEqual(alias ? status.components?.[alias]?.canary : undefined);
    expect(status).not.toHaveProperty('rollout');
    expect(readCanaryStates(status, groups)).toEqual(states);
  });

  it('reads the alias for the engine group when its slot is empty (a status written before the slots)', () => {
    const groups = pinned({ components: ['engine'], canary: { steps } });
    expect(readCanaryStates({ canary: state(0) }, groups)).toEqual(new Map([[0, state(0)]]));
    expect(readCanaryStates({ canary: state(0) }, pinned({ components: ['router'], canary: { steps } }))).toEqual(new Map());
  });

  it('ignores groups that are not canaries, and clears every slot and the alias', () => {
    const groups = pinned({ components: ['engine'] });
    const status: RolloutIsvcStatus = { canary: state(0), components: { engine: { canary: state(0), rolloutPhase: 'Stable' }, router: { canary: state(1) } } };
    expect(readCanaryStates(status, groups)).toEqual(new Map());
    clearCanaryStates(status);
    expect(status).toEqual({ components: { engine: { rolloutPhase: 'Stable' }, router: {} } });
  });
});

describe('Plan conditions of a run that just opened', () => {
  let bench: Bench;
  beforeAll(async () => {
    bench = await startBench();
  });
  afterAll(async () => {
    await bench.stop();
  });

  it('are evidence the plugin accepts: a repin is refused as already pinned, not as stale evidence', async () => {
    // Prepare: the service's plan status as the controller writes it on creation (NoActiveRun).
    await createIsvc(bench, 'fresh', [manualCanary([{ capacity: '25%', traffic: 10 }])]);
    expect(await refreshPlanStatus({ client: bench.client, clock: bench.clock }, { namespace: NAMESPACE, name: 'fresh' })).toBe('updated');
    await renderEngine(bench, 'fresh', 'srt:v1');
    bench.clock.tick(5);

    // Act
    expect(await renderEngine(bench, 'fresh', 'srt:v2')).toBe('run-opened');
    const isvc = await bench.client.get<RolloutIsvc>(Resources.inferenceServices, NAMESPACE, 'fresh');

    // Assess
    const run = isvc.status?.rollout?.activeRun;
    expect(condition(isvc, 'RolloutPlanDrift')).toMatchObject({ status: 'False', reason: 'InSync', lastTransitionTime: run?.pinnedAt });
    const check = checkRepinRefusal({
      annotations: isvc.metadata.annotations ?? {},
      generation: isvc.metadata.generation,
      observedGeneration: isvc.status?.observedGeneration,
      specGroups: isvc.spec?.rollout?.groups ?? [],
      rollout: isvc.status?.rollout ?? {},
      conditions: isvc.status?.conditions ?? [],
      now: new Date(bench.clock.now()),
    });
    expect(check).toEqual({ refused: true, message: RepinRefusal.alreadyPinned });
  });
});
