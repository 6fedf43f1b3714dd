/**
 * A tiny benchmark harness. Every figure is reported next to a baseline measured in the
 * same run, because these machines are shared and noisy: the ratio is what to compare
 * across runs, not the absolute time.
 */

export interface Measurement {
  name: string;
  /** Median of the samples. */
  value: number;
  unit: string;
}

export interface BenchResult {
  suite: string;
  measured: Measurement;
  baseline: Measurement;
  /** measured / baseline; for throughput units (per second) it is inverted by the reader. */
  ratio: number;
  note?: string;
}

/**
 * `full` normally; `smoke` under `npm run bench -- --smoke` (BENCH_SMOKE=1), which runs every
 * suite at small sizes so CI can tell that each still runs. Smoke figures are not comparable.
 */
export function benchSize<T>(full: T, smoke: T): T {
  return process.env.BENCH_SMOKE === '1' ? smoke : full;
}

export interface BenchSuite {
  name: string;
  run(): Promise<BenchResult[]>;
}

/** Runs `fn` `samples` times after `warmup` runs; returns the median duration in milliseconds. */
export async function medianMs(fn: () => unknown | Promise<unknown>, samples = 5, warmup = 1): Promise<number> {
  for (let i = 0; i < warmup; i += 1) await fn();
  const times: number[] = [];
  for (let i = 0; i < samples; i += 1) {
    const start = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? 0;
}

export function compare(suite: string, measured: Measurement, baseline: Measurement, note?: string): BenchResult {
  const ratio = baseline.value === 0 ? Number.POSITIVE_INFINITY : measured.value / baseline.value;
  return note === undefined ? { suite, measured, baseline, ratio } : { suite, measured, baseline, ratio, note };
}
