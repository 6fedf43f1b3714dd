/**
 * The per-module gate of `npm run mutation`: which module a file counts toward, and which
 * modules fail their own threshold (the lease, fence and idempotency group at 90 %, every
 * other module at 85 %).
 */
import { describe, expect, it } from 'vitest';
import { failingModules, moduleOf, tallyModules } from '../../scripts/mutation-score';

describe('Function: moduleOf', () => {
  it.each([
    ['shared/domain/runtime/pinning.ts', 'shared/domain/runtime', 85],
    ['shared/domain/rollout/repin.ts', 'shared/domain/rollout', 85],
    ['shared/domain/go-duration.ts', 'shared/domain/go-duration.ts', 85],
    ['shared/adapters/dynamodb/lease-store.ts', 'lease, fence and idempotency', 90],
    ['shared/app/hint-handler.ts', 'lease, fence and idempotency', 90],
    ['shared/use-cases/rollout-runs/fenced-deployments.ts', 'lease, fence and idempotency', 90],
  ])('counts %s toward %s (threshold %d %%)', (path, name, threshold) => {
    expect(moduleOf(path)).toMatchObject({ name, threshold });
  });

  it('counts a file outside the scope toward nothing', () => {
    expect(moduleOf('shared/adapters/dynamodb/fleet-store.ts')).toBeUndefined();
  });
});

describe('Function: failingModules', () => {
  it('holds each module to its own threshold, summed over its files', () => {
    const files = new Map([
      // 89 % as a group: below the group's 90 % although one file alone is above it.
      ['shared/adapters/dynamodb/lease-store.ts', { detected: 80, undetected: 10 }],
      ['shared/domain/idempotency-rules.ts', { detected: 9, undetected: 1 }],
      // 86 %: above the domain's 85 %.
      ['shared/domain/runtime/gc.ts', { detected: 86, undetected: 14 }],
      // Below 85 % alone, but its module sums to 85 %.
      ['shared/domain/rollout/plan.ts', { detected: 80, undetected: 20 }],
      ['shared/domain/rollout/run.ts', { detected: 90, undetected: 10 }],
    ]);
    expect(failingModules(tallyModules(files))).toEqual(['mutation: lease, fence and idempotency scores 89.0 %, below the 90 % threshold']);
  });

  it('does not fail a module where nothing counts', () => {
    expect(failingModules(tallyModules(new Map([['local/bus/pattern.ts', { detected: 0, undetected: 0 }]])))).toEqual([]);
  });
});
