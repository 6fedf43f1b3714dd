/**
 * `npm run bench`: runs every `bench/*.bench.ts` suite (or those named on the command
 * line) and prints each figure beside its same-run baseline. `--smoke` runs them at small
 * sizes (bench/harness.ts, `benchSize`): CI's check that every suite still runs.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchResult, BenchSuite } from './harness';

const here = dirname(fileURLToPath(import.meta.url));

function format(value: number): string {
  return value >= 100 ? value.toFixed(0) : value >= 1 ? value.toFixed(2) : value.toPrecision(3);
}

function print(results: BenchResult[]): void {
  for (const r of results) {
    const line = [
      r.suite.padEnd(14),
      r.measured.name.padEnd(44),
      `${format(r.measured.value)} ${r.measured.unit}`.padEnd(18),
      `baseline ${r.baseline.name}: ${format(r.baseline.value)} ${r.baseline.unit}`.padEnd(56),
      `ratio ${format(r.ratio)}`,
    ].join(' ');
    process.stdout.write(`${line}${r.note ? `  (${r.note})` : ''}\n`);
  }
}

async function main(): Promise<void> {
  // The SDK's notice that its 2027 releases need Node 22 would land between the figures.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const args = process.argv.slice(2);
  if (args.includes('--smoke')) process.env.BENCH_SMOKE = '1';
  const wanted = new Set(args.filter((arg) => arg !== '--smoke'));
  const files = readdirSync(here).filter((f) => f.endsWith('.bench.ts')).sort();
  for (const file of files) {
    const mod = (await import(pathToFileURL(join(here, file)).href)) as { default: BenchSuite };
    if (wanted.size > 0 && !wanted.has(mod.default.name)) continue;
    process.stdout.write(`# ${mod.default.name}${process.env.BENCH_SMOKE === '1' ? ' (smoke sizes: the figures are not comparable)' : ''}\n`);
    print(await mod.default.run());
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
