/**
 * `npm run mutation -- --full [--resume]`: every mutant in scope tested again, one Stryker
 * run per module of scripts/mutation-score.ts, then the runs merged into the committed
 * incremental file (mutation/incremental.json) and the per-module table (mutation/scores.json).
 *
 * Why one run per module: each mutant's result depends only on the code and its tests, so
 * the merged runs are the same full run; but each module's run keeps only the test files
 * related to its own code (the vitest runner's `related`), and a finished module is kept in
 * `mutation/full-run/` until every module has run. `--resume` reuses every module run
 * whose stamp still matches: the committed contents of the files it mutates, of the
 * mutation suite's test files, global setup and reporter, and of the configuration (what
 * Stryker's own incremental mode compares, see `stampPathspecs`). A full run can be
 * stopped and continued across commits that leave those alone.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MUTATION_MODULES, moduleOf, type MutationModule } from './mutation-score';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/**
 * Where finished module runs wait for the rest: in the repository, so that a full run longer
 * than one sitting can be committed part-done and continued on another clone. Emptied once
 * every module has run and the merge is written.
 */
export const RUNS_DIR = 'mutation/full-run';
export const INCREMENTAL_FILE = 'mutation/incremental.json';
const SCORES_FILE = 'mutation/scores.json';
/** Configuration every module run rests on (the suite's global setup and reporter come from its config, see loadMutationSuite). */
const STAMPED_CONFIG = ['stryker.config.mjs', 'vitest.mutation.config.ts', 'package-lock.json', 'tsconfig.json'];

interface ReportTest {
  id: string;
  name: string;
  [key: string]: unknown;
}

interface ReportMutant {
  killedBy?: string[];
  coveredBy?: string[];
  [key: string]: unknown;
}

/** The parts of a mutation-testing report (Stryker's incremental file) that a merge touches. */
export interface MutationRunReport {
  files: Record<string, { mutants: ReportMutant[]; [key: string]: unknown }>;
  testFiles?: Record<string, { tests: ReportTest[]; [key: string]: unknown }>;
  config?: Record<string, unknown>;
  [key: string]: unknown;
}

/**
 * The Stryker `mutate` patterns of one module: the config's patterns that fall in it, and
 * every exclusion (an exclusion outside the module excludes nothing from it).
 */
export function modulePatterns(mutate: readonly string[], module: MutationModule): string[] {
  const included = mutate.filter((pattern) => !pattern.startsWith('!') && moduleOf(pattern.replace(/\*.*$/, '')) === module);
  return included.length === 0 ? [] : [...included, ...mutate.filter((pattern) => pattern.startsWith('!'))];
}

/** A module's name as a file name: `lease, fence and idempotency` → `lease-fence-and-idempotency`. */
export function moduleSlug(module: MutationModule): string {
  return module.name.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

/**
 * Several module runs as one report. Test ids are numbered per run, so each test is keyed by
 * its file and name and numbered again, and every mutant's `killedBy` and `coveredBy` follow;
 * mutant ids are numbered again in file order.
 * Files and tests are sorted, so the same runs always give the same file.
 */
export function mergeMutationRuns(unordered: readonly MutationRunReport[], mutate: readonly string[]): MutationRunReport {
  if (unordered.length === 0) throw new Error('mergeMutationRuns: no run to merge');
  // In the order of their files, so that the order they finished in changes nothing.
  const firstFile = (run: MutationRunReport) => Object.keys(run.files).sort()[0] ?? '';
  const runs = [...unordered].sort((a, b) => firstFile(a).localeCompare(firstFile(b)));
  const testKey = (file: string, name: string) => `${file}\u0000${name}`;
  const testsByFile = new Map<string, Map<string, ReportTest>>();
  for (const run of runs) {
    for (const [file, { tests }] of Object.entries(run.testFiles ?? {})) {
      const known = testsByFile.get(file) ?? new Map<string, ReportTest>();
      for (const test of tests) if (!known.has(test.name)) known.set(test.name, test);
      testsByFile.set(file, known);
    }
  }
  const newIds = new Map<string, string>();
  const testFiles: NonNullable<MutationRunReport['testFiles']> = {};
  for (const file of [...testsByFile.keys()].sort()) {
    testFiles[file] = {
      tests: [...testsByFile.get(file)!.values()].map((test) => {
        const id = String(newIds.size);
        newIds.set(testKey(file, test.name), id);
        return { ...test, id };
      }),
    };
  }
  const files: MutationRunReport['files'] = {};
  for (const run of runs) {
    const oldKeys = new Map<string, string>();
    for (const [file, { tests }] of Object.entries(run.testFiles ?? {})) for (const test of tests) oldKeys.set(test.id, testKey(file, test.name));
    const renumber = (ids: string[] | undefined) => ids?.map((id) => newIds.get(oldKeys.get(id) ?? '') ?? id);
    for (const [path, file] of Object.entries(run.files)) {
      if (files[path]) throw new Error(`mergeMutationRuns: ${path} is in two runs`);
      files[path] = {
        ...file,
        mutants: file.mutants.map((mutant) => ({
          ...mutant,
          ...(mutant.killedBy ? { killedBy: renumber(mutant.killedBy) } : {}),
          ...(mutant.coveredBy ? { coveredBy: renumber(mutant.coveredBy) } : {}),
        })),
      };
    }
  }
  // Mutant ids too are numbered per run: number them again, in file order.
  let mutantCount = 0;
  const sortedFiles = Object.fromEntries(
    Object.entries(files)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([path, file]) => [path, { ...file, mutants: file.mutants.map((mutant) => ({ ...mutant, id: String(mutantCount++) })) }]),
  );
  const [first] = runs;
  return {
    ...first,
    files: sortedFiles,
    testFiles,
    config: { ...first!.config, mutate: [...mutate], incrementalFile: INCREMENTAL_FILE },
  };
}

/** The `mutate` patterns of stryker.config.mjs: the whole scope. */
export async function loadMutateScope(): Promise<string[]> {
  const { default: config } = (await import(pathToFileURL(resolve(ROOT, 'stryker.config.mjs')).href)) as { default: { mutate: string[] } };
  return config.mutate;
}

function git(args: string[]): string {
  const result = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr.trim()}`);
  return result.stdout.trim();
}

/**
 * The git pathspecs of what a module run's results rest on: the module's `mutate` patterns
 * (exclusions kept), the mutation suite's test files, and STAMPED_CONFIG. As with Stryker's
 * incremental mode, a source file the tests reach without mutating it is not included.
 */
export function stampPathspecs(patterns: readonly string[], testIncludes: readonly string[]): string[] {
  return [
    ...patterns.map((pattern) => (pattern.startsWith('!') ? `:(exclude,glob)${pattern.slice(1)}` : `:(glob)${pattern}`)),
    ...testIncludes.map((pattern) => `:(glob)${pattern}`),
    ...STAMPED_CONFIG,
  ];
}

/** The stamp of those files as committed (mode, blob id and path per file), or undefined when any has uncommitted changes. */
export function stampOf(pathspecs: readonly string[]): string | undefined {
  if (git(['status', '--porcelain', '--', ...pathspecs]) !== '') return undefined;
  return git(['ls-files', '-s', '--', ...pathspecs]);
}

/** The files of the mutation suite: its test files, and the global setup and reporters its config names (vitest.mutation.config.ts). */
export async function loadMutationSuite(): Promise<string[]> {
  const { default: config } = (await import(pathToFileURL(resolve(ROOT, 'vitest.mutation.config.ts')).href)) as {
    default: { test?: { include?: string[]; globalSetup?: string[]; reporters?: string[] } };
  };
  const files = [...(config.test?.globalSetup ?? []), ...(config.test?.reporters ?? [])].filter((entry) => entry.startsWith('./')).map((entry) => entry.slice(2));
  return [...(config.test?.include ?? []), ...files];
}

async function main(args: readonly string[]): Promise<number> {
  const resume = args.includes('--resume');
  const concurrency = process.env.MUTATION_CONCURRENCY ?? '2';
  const mutate = await loadMutateScope();
  const suite = await loadMutationSuite();
  const runsDir = resolve(ROOT, RUNS_DIR);
  if (!resume) rmSync(runsDir, { recursive: true, force: true });
  mkdirSync(runsDir, { recursive: true });

  const runs: MutationRunReport[] = [];
  for (const module of MUTATION_MODULES) {
    const patterns = modulePatterns(mutate, module);
    if (patterns.length === 0) continue;
    const runFile = resolve(runsDir, `${moduleSlug(module)}.json`);
    const stampFile = `${runFile}.stamp`;
    const stamp = stampOf(stampPathspecs(patterns, suite));
    if (stamp === undefined) console.log(`mutation: ${module.name}: its code, tests or configuration have uncommitted changes; this module's run cannot be resumed`);
    if (resume && stamp !== undefined && existsSync(runFile) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
      console.log(`mutation: ${module.name}: reusing the finished run in ${RUNS_DIR}`);
    } else {
      console.log(`mutation: ${module.name}: ${patterns.filter((p) => !p.startsWith('!')).join(', ')}`);
      rmSync(stampFile, { force: true });
      const startedAt = Date.now();
      // Stryker exits non-zero below its own break threshold too; a run has finished when it
      // has written its report, and the per-module check below is the verdict.
      spawnSync('npx', ['stryker', 'run', '--force', '--concurrency', concurrency, '--mutate', patterns.join(','), '--incrementalFile', runFile], {
        cwd: ROOT,
        stdio: 'inherit',
      });
      if (!existsSync(runFile) || statSync(runFile).mtimeMs < startedAt) {
        console.error(
          `mutation: the run of ${module.name} did not finish; \`npm run mutation -- --full --resume\` continues after the modules finished in ${RUNS_DIR} (commit that folder to continue on another clone)`,
        );
        return 1;
      }
      if (stamp !== undefined) writeFileSync(stampFile, stamp);
    }
    runs.push(JSON.parse(readFileSync(runFile, 'utf8')) as MutationRunReport);
  }

  writeFileSync(resolve(ROOT, INCREMENTAL_FILE), `${JSON.stringify(mergeMutationRuns(runs, mutate), null, 2)}\n`);
  rmSync(runsDir, { recursive: true, force: true });
  console.log(`mutation: ${runs.length} module runs merged into ${INCREMENTAL_FILE}; commit it with ${SCORES_FILE}`);
  const score = spawnSync('npx', ['tsx', 'scripts/mutation-score.ts', '--table', SCORES_FILE, INCREMENTAL_FILE], { cwd: ROOT, stdio: 'inherit' });
  return score.status ?? 1;
}

// Run as a script, not when a test imports the merge.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
