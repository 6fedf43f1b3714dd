/**
 * The full mutation run as one Stryker run per module (scripts/mutation-full.ts): which
 * patterns each module's run mutates, and the merge of the runs into the one incremental
 * file that the next incremental run (CI's gate) reuses.
 */
import { describe, expect, it } from 'vitest';
import { loadMutateScope, mergeMutationRuns, modulePatterns, moduleSlug, stampPathspecs, type MutationRunReport } from '../../scripts/mutation-full';
import { MUTATION_MODULES } from '../../scripts/mutation-score';

const MUTATE = [
  'shared/domain/runtime/**/*.ts',
  'shared/domain/rollout/**/*.ts',
  'shared/domain/go-duration.ts',
  'shared/adapters/dynamodb/lease-store.ts',
  'shared/app/hint-handler.ts',
  '!shared/domain/runtime/index.ts',
  '!shared/domain/rollout/types.ts',
];

const moduleNamed = (name: string) => MUTATION_MODULES.find((module) => module.name === name)!;

describe('Function: modulePatterns', () => {
  it.each([
    ['shared/domain/rollout', ['shared/domain/rollout/**/*.ts']],
    ['shared/domain/go-duration.ts', ['shared/domain/go-duration.ts']],
    ['lease, fence and idempotency', ['shared/adapters/dynamodb/lease-store.ts', 'shared/app/hint-handler.ts']],
  ])('gives the run of %s its own patterns and every exclusion', (name, included) => {
    expect(modulePatterns(MUTATE, moduleNamed(name))).toEqual([...included, '!shared/domain/runtime/index.ts', '!shared/domain/rollout/types.ts']);
  });

  it('gives a module nothing in the config no run at all', () => {
    expect(modulePatterns(MUTATE, moduleNamed('local/bus/pattern.ts'))).toEqual([]);
  });

  it('covers every pattern of the real config exactly once across the modules', async () => {
    const mutate = await loadMutateScope();
    const included = MUTATION_MODULES.flatMap((module) => modulePatterns(mutate, module).filter((pattern) => !pattern.startsWith('!')));
    expect(included.sort()).toEqual(mutate.filter((pattern) => !pattern.startsWith('!')).sort());
  });
});

describe('Function: stampPathspecs', () => {
  it('stamps a module run with the files it mutates (exclusions kept), the suite\'s tests and the configuration', () => {
    expect(stampPathspecs(['shared/domain/rollout/**/*.ts', '!shared/domain/rollout/types.ts'], ['test/rollout/**/*.test.ts', 'test/app/reconcile.test.ts'])).toEqual([
      ':(glob)shared/domain/rollout/**/*.ts',
      ':(exclude,glob)shared/domain/rollout/types.ts',
      ':(glob)test/rollout/**/*.test.ts',
      ':(glob)test/app/reconcile.test.ts',
      'stryker.config.mjs',
      'vitest.mutation.config.ts',
      'package-lock.json',
      'tsconfig.json',
    ]);
  });
});

describe('Function: moduleSlug', () => {
  it.each([
    ['lease, fence and idempotency', 'lease-fence-and-idempotency'],
    ['shared/domain/go-duration.ts', 'shared-domain-go-duration-ts'],
  ])('names the run of %s %s', (name, slug) => {
    expect(moduleSlug(moduleNamed(name))).toBe(slug);
  });
});

describe('Function: mergeMutationRuns', () => {
  // Two module runs, each numbering its tests and mutants from 0; both ran the shared test
  // file, with different ids for the same test.
  const rolloutRun: MutationRunReport = {
    schemaVersion: '1.0',
    files: {
      'shared/domain/rollout/plan.ts': {
        language: 'typescript',
        mutants: [
          { id: '0', status: 'Killed', killedBy: ['1'], coveredBy: ['0', '1'] },
          { id: '1', status: 'Survived', coveredBy: ['0'] },
        ],
      },
    },
    testFiles: {
      'test/rollout/plan.test.ts': { tests: [{ id: '0', name: 'digests a plan' }] },
      'test/hostile/hostile-input.test.ts': { tests: [{ id: '1', name: 'refuses an oversized plan' }] },
    },
    config: { mutate: ['shared/domain/rollout/**/*.ts'], concurrency: 2 },
  };
  const runtimeRun: MutationRunReport = {
    schemaVersion: '1.0',
    files: {
      'shared/domain/runtime/gc.ts': { language: 'typescript', mutants: [{ id: '0', status: 'Killed', killedBy: ['0'], coveredBy: ['0'] }] },
    },
    testFiles: {
      'test/hostile/hostile-input.test.ts': { tests: [{ id: '0', name: 'refuses an oversized plan' }] },
      'test/runtime/gc.test.ts': { tests: [{ id: '1', name: 'keeps the newest' }] },
    },
  };

  it('numbers each test once across the runs, and every mutant follows its tests', () => {
    // Act
    const merged = mergeMutationRuns([rolloutRun, runtimeRun], MUTATE);

    // Assess: the shared test is one test, with one id, in both runs' mutants.
    expect(merged.testFiles).toEqual({
      'test/hostile/hostile-input.test.ts': { tests: [{ id: '0', name: 'refuses an oversized plan' }] },
      'test/rollout/plan.test.ts': { tests: [{ id: '1', name: 'digests a plan' }] },
      'test/runtime/gc.test.ts': { tests: [{ id: '2', name: 'keeps the newest' }] },
    });
    expect(merged.files['shared/domain/rollout/plan.ts']!.mutants).toEqual([
      { id: '0', status: 'Killed', killedBy: ['0'], coveredBy: ['1', '0'] },
      { id: '1', status: 'Survived', coveredBy: ['1'] },
    ]);
    expect(merged.files['shared/domain/runtime/gc.ts']!.mutants).toEqual([{ id: '2', status: 'Killed', killedBy: ['0'], coveredBy: ['0'] }]);
  });

  it('gives the same file for the same runs in any order, with the whole scope as its config', () => {
    const merged = mergeMutationRuns([rolloutRun, runtimeRun], MUTATE);

    expect(JSON.stringify(mergeMutationRuns([runtimeRun, rolloutRun], MUTATE))).toBe(JSON.stringify(merged));
    expect(Object.keys(merged.files)).toEqual(['shared/domain/rollout/plan.ts', 'shared/domain/runtime/gc.ts']);
    expect(merged.config).toMatchObject({ mutate: MUTATE, incrementalFile: 'mutation/incremental.json' });
  });

  it('refuses a file tested by two runs, which would count its mutants twice', () => {
    expect(() => mergeMutationRuns([rolloutRun, rolloutRun], MUTATE)).toThrow('shared/domain/rollout/plan.ts is in two runs');
  });
});
