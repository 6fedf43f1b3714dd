/**
 * `npm run mutation` (after Stryker): reads Stryker's JSON report and checks the mutation
 * score of every module against its own threshold, because Stryker's own `break` threshold
 * is one global number and a strong module would hide a weak one. Prints the score per file
 * and per module; exits non-zero with one line per module below its threshold.
 *
 * Usage: `tsx scripts/mutation-score.ts [--table FILE] [report.json ...]` (default: the
 * report of the last Stryker run). Several reports, such as one per module run, are read
 * together. `--table FILE` also writes the per-module and per-file scores as JSON
 * (`npm run mutation -- --full` writes mutation/scores.json, the committed table).
 *
 * Score = detected / (detected + undetected), as Stryker counts it: killed and timed-out
 * mutants are detected; survivors and mutants no test covers are not; mutants that do
 * not compile or are ignored do not count.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import LEASE_FENCE_GROUP from '../mutation/lease-fence-group.json' with { type: 'json' };

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const MUTATION_REPORT = 'reports/mutation/mutation.json';
export const MODULE_THRESHOLD = 85;
/** The code that keeps writes exactly-once is held higher than the rest. */
export const LEASE_GROUP_THRESHOLD = 90;

export interface MutationModule {
  name: string;
  /** Path prefixes; a file belongs to the first module one of whose prefixes it starts with. */
  paths: readonly string[];
  threshold: number;
}

/** The modules in scope, each with its threshold (stryker.config.mjs mutates the same files). */
export const MUTATION_MODULES: readonly MutationModule[] = [
  {
    name: 'lease, fence and idempotency',
    paths: LEASE_FENCE_GROUP,
    threshold: LEASE_GROUP_THRESHOLD,
  },
  { name: 'shared/domain/runtime', paths: ['shared/domain/runtime/'], threshold: MODULE_THRESHOLD },
  { name: 'shared/domain/rollout', paths: ['shared/domain/rollout/'], threshold: MODULE_THRESHOLD },
  { name: 'shared/domain/hint-event.ts', paths: ['shared/domain/hint-event.ts'], threshold: MODULE_THRESHOLD },
  { name: 'shared/domain/go-duration.ts', paths: ['shared/domain/go-duration.ts'], threshold: MODULE_THRESHOLD },
  { name: 'shared/domain/go-json.ts', paths: ['shared/domain/go-json.ts'], threshold: MODULE_THRESHOLD },
  { name: 'local/bus/pattern.ts', paths: ['local/bus/pattern.ts'], threshold: MODULE_THRESHOLD },
];

/** The module a repository path belongs to, if any. */
export function moduleOf(path: string): MutationModule | undefined {
  return MUTATION_MODULES.find((module) => module.paths.some((prefix) => path.startsWith(prefix)));
}

const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

interface Tally {
  detected: number;
  undetected: number;
}

interface MutationReport {
  files: Record<string, { mutants: { status: string }[] }>;
}

/** Detected and undetected mutants of each file of the report, keyed by repository path. */
export function tallyFiles(report: MutationReport): Map<string, Tally> {
  const tallies = new Map<string, Tally>();
  for (const [path, file] of Object.entries(report.files)) {
    const tally = { detected: 0, undetected: 0 };
    for (const mutant of file.mutants) {
      if (DETECTED.has(mutant.status)) tally.detected += 1;
      else if (UNDETECTED.has(mutant.status)) tally.undetected += 1;
    }
    tallies.set(relative(ROOT, resolve(ROOT, path)), tally);
  }
  return tallies;
}

/** The score in percent, or undefined when nothing counts. */
export function scoreOf(tally: Tally): number | undefined {
  const total = tally.detected + tally.undetected;
  return total === 0 ? undefined : (100 * tally.detected) / total;
}

function format(tally: Tally): string {
  const score = scoreOf(tally);
  const shown = score === undefined ? '   n/a' : `${score.toFixed(1).padStart(5)} %`;
  return `${shown}  (${tally.detected}/${tally.detected + tally.undetected})`;
}

interface ModuleScore {
  module: MutationModule;
  tally: Tally;
}

/** Every in-scope module's tally, in MUTATION_MODULES' order; files outside every module are left out. */
export function tallyModules(files: ReadonlyMap<string, Tally>): ModuleScore[] {
  const sums = new Map<MutationModule, Tally>();
  for (const [path, tally] of files) {
    const module = moduleOf(path);
    if (!module) continue;
    const sum = sums.get(module) ?? { detected: 0, undetected: 0 };
    sums.set(module, { detected: sum.detected + tally.detected, undetected: sum.undetected + tally.undetected });
  }
  return MUTATION_MODULES.flatMap((module) => {
    const tally = sums.get(module);
    return tally ? [{ module, tally }] : [];
  });
}

/** One line per module below its threshold (empty when all hold). */
export function failingModules(scores: readonly ModuleScore[]): string[] {
  return scores.flatMap(({ module, tally }) => {
    const score = scoreOf(tally);
    return score !== undefined && score < module.threshold
      ? [`mutation: ${module.name} scores ${score.toFixed(1)} %, below the ${module.threshold} % threshold`]
      : [];
  });
}

function rounded(tally: Tally): { score: number | null; detected: number; counted: number } {
  const score = scoreOf(tally);
  return { score: score === undefined ? null : Math.round(score * 10) / 10, detected: tally.detected, counted: tally.detected + tally.undetected };
}

function main(args: readonly string[]): number {
  const tableAt = args.indexOf('--table');
  const tablePath = tableAt === -1 ? undefined : args[tableAt + 1];
  const paths = args.filter((_, i) => i !== tableAt && i !== tableAt + 1);
  const files = new Map<string, Tally>();
  for (const path of paths.length > 0 ? paths : [MUTATION_REPORT]) {
    const reportPath = resolve(ROOT, path);
    if (!existsSync(reportPath)) {
      console.error(`mutation: no report at ${path}; run Stryker first`);
      return 2;
    }
    const report = JSON.parse(readFileSync(reportPath, 'utf8')) as MutationReport;
    for (const [file, tally] of tallyFiles(report)) files.set(file, tally);
  }
  const sorted = [...files].sort(([a], [b]) => a.localeCompare(b));
  for (const [path, tally] of sorted) console.log(`  ${path.padEnd(48)} ${format(tally)}`);
  const modules = tallyModules(files);
  for (const { module, tally } of modules) console.log(`${`${module.name} (≥ ${module.threshold} %)`.padEnd(50)} ${format(tally)}`);
  if (tablePath !== undefined) {
    const table = {
      modules: modules.map(({ module, tally }) => ({ module: module.name, threshold: module.threshold, ...rounded(tally) })),
      files: sorted.map(([path, tally]) => ({ file: path, module: moduleOf(path)?.name ?? null, ...rounded(tally) })),
    };
    writeFileSync(resolve(ROOT, tablePath), `${JSON.stringify(table, null, 2)}\n`);
    console.log(`mutation: table written to ${tablePath}`);
  }
  const failing = failingModules(modules);
  for (const line of failing) console.error(line);
  return failing.length === 0 ? 0 : 1;
}

// Run as a script, not when a test imports the rules.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
