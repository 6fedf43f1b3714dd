/**
 * A lazy metrics binding (repin-apply's) is read only for a plan that depends on it: plans
 * without analysis steps or a providerRef resolve without the cluster's configuration read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderLivePlan } from '../../shared/use-cases/rollout-runs/rollout-status';
import type { MetricsBinding } from '../../shared/domain/rollout/analysis';
import type { RolloutGroup } from '../../shared/domain/rollout/types';
import { createIsvc, getIsvc, startBench, type Bench } from './harness';

const analysisStep = { capacity: '50%', traffic: 50, analysis: { interval: '1m', failureLimit: 2, metrics: [{ name: 'err', query: 'vector(0)', operator: 'LT' as const, threshold: '0.05' }] } };
const gated: RolloutGroup[] = [{ components: ['engine'], canary: { steps: [analysisStep, { capacity: '100%', traffic: 100 }], prometheus: { providerRef: { name: 'central' } } } }];
const manual: RolloutGroup[] = [{ components: ['engine'], canary: { steps: [{ capacity: '50%', traffic: 50, pause: {} }, { capacity: '100%', traffic: 100 }] } }];

let bench: Bench;
beforeAll(async () => {
  bench = await startBench();
});
afterAll(async () => {
  await bench.stop();
});

function countingBinding(boundProviders: string[]): { read: () => Promise<MetricsBinding>; reads: () => number } {
  let reads = 0;
  return {
    read: async () => {
      reads += 1;
      return { boundProviders: new Set(boundProviders), executor: true };
    },
    reads: () => reads,
  };
}

describe('renderLivePlan with a binding read on demand', () => {
  it('does not read it for a plan without analysis steps or a providerRef', async () => {
    await createIsvc(bench, 'lazy-manual', manual);
    const binding = countingBinding([]);
    const live = await renderLivePlan(bench.client, await getIsvc(bench, 'lazy-manual'), binding.read);
    expect(live.ok).toBe(true);
    expect(binding.reads()).toBe(0);
  });

  it('reads it once for a gated plan, which is then bound as the configuration says', async () => {
    await createIsvc(bench, 'lazy-gated', gated);
    const bound = countingBinding(['central']);
    expect(await renderLivePlan(bench.client, await getIsvc(bench, 'lazy-gated'), bound.read)).toMatchObject({ ok: true });
    expect(bound.reads()).toBe(1);
    const unbound = countingBinding([]);
    expect(await renderLivePlan(bench.client, await getIsvc(bench, 'lazy-gated'), unbound.read)).toMatchObject({ ok: false, reason: 'ProviderUnbound' });
    expect(unbound.reads()).toBe(1);
  });
});
