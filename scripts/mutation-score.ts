/**
 * `npm run mutation` (after Stryker): reads Stryker's JSON report and checks the mutation
 * score of every domain module, because Stryker's own `break` threshold is one global
 * number and a strong module would hide a weak one. Prints the score per file and per
 * module; exits non-zero with one line per module below the threshold.
 *
 * Usage: `tsx scripts/mutation-score.ts [report.json ...]` (default: the report of the
 * last Stryker run). Several reports, such as one per module run, are read together.
 *
 * Score = detected / (detected + undetected), as Stryker counts it: killed and timed-out
 * mutants are detected; survivors and mutants no test covers are not; mutants that do
 * not compile or are ignored do not count.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const MUTATION_REPORT = 'reports/mutation/mutation.json';
export const MODULE_THRESHOLD = 85;
/** The modules in scope; a file belongs to the first module its path starts with. */
export const MUTATION_MODULES = ['shared/domain/runtime/', 'shared/domain/rollout/', 'shared/domain/hint-event.ts', 'shared/domain/go-json.ts', 'local/bus/pattern.ts'] as const;

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

function main(paths: readonly string[]): number {
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
  const modules = new Map<string, Tally>();
  for (const [path, tally] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
    console.log(`  ${path.padEnd(40)} ${format(tally)}`);
    const module = MUTATION_MODULES.find((prefix) => path.startsWith(prefix));
    if (!module) continue;
    const sum = modules.get(module) ?? { detected: 0, undetected: 0 };
    modules.set(module, { detected: sum.detected + tally.detected, undetected: sum.undetected + tally.undetected });
  }
  let failing = 0;
  for (const [module, tally] of modules) {
    const score = scoreOf(tally);
    console.log(`${module.padEnd(42)} ${format(tally)}`);
    if (score !== undefined && score < MODULE_THRESHOLD) {
      console.error(`mutation: ${module} scores ${score.toFixed(1)} %, below the ${MODULE_THRESHOLD} % threshold`);
      failing += 1;
    }
  }
  return failing === 0 ? 0 : 1;
}

process.exitCode = main(process.argv.slice(2));
