/**
 * `npm run simulate -- --clusters 1000 [--latency 5ms] [--duration 60s] [--rate N] [--seed N] [--shards N] [--fan-out 100] [--gc-revisions 40]`:
 * the fleet simulation (scripts/simulate/run-simulation.ts). Progress goes to stderr; the
 * figures, each beside its floor, to stdout; the whole report to
 * `reports/simulate-<timestamp>.json`, which `npm run cost` reads. docs/cost.md has a run.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseMilliseconds } from './simulate/figures';
import { runSimulation } from './simulate/run-simulation';
import type { SimulationReport } from './simulate/run-simulation';

const REPORTS_DIR = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'reports');

function wholeNumber(flag: string, text: string | undefined, fallback: number): number {
  const value = Number(text ?? fallback);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${flag} must be a whole number (got ${text})`);
  return value;
}

function parseFlags(argv: string[]): { clusters: number; latencyMs: number; durationMs: number; rate: number; seed: number; shards: number | undefined; fanOut: number; gcRevisions: number } {
  const { values } = parseArgs({
    args: argv,
    options: {
      clusters: { type: 'string' },
      latency: { type: 'string' },
      duration: { type: 'string' },
      rate: { type: 'string' },
      seed: { type: 'string' },
      shards: { type: 'string' },
      'fan-out': { type: 'string' },
      'gc-revisions': { type: 'string' },
    },
    strict: true,
  });
  const clusters = Number(values.clusters ?? 1000);
  if (!Number.isInteger(clusters) || clusters < 1) throw new Error(`--clusters must be a whole number of at least 1 (got ${values.clusters})`);
  const rate = Number(values.rate ?? 10);
  if (!(rate > 0)) throw new Error(`--rate must be a positive number of changes per second (got ${values.rate})`);
  const shards = values.shards === undefined ? undefined : Number(values.shards);
  return {
    clusters,
    latencyMs: parseMilliseconds('--latency', values.latency ?? '5ms'),
    durationMs: parseMilliseconds('--duration', values.duration ?? '60s'),
    rate,
    seed: Number(values.seed ?? 11),
    shards,
    fanOut: wholeNumber('--fan-out', values['fan-out'], 100),
    gcRevisions: wholeNumber('--gc-revisions', values['gc-revisions'], 40),
  };
}

/** DynamoDB calls by caller printed (the report has them all). */
const CALLER_ROWS = 10;
const ms = (value: number | null): string => (value === null ? '-' : `${Math.round(value)} ms`);
/** Seconds, or milliseconds under one second. */
const duration = (seconds: number): string => (seconds < 1 ? ms(seconds * 1000) : `${seconds.toFixed(1)} s`);
const num = (value: number): string => (Number.isInteger(value) ? String(value) : value.toFixed(2));

/** The figures, one a line, each beside its floor. */
export function formatSimulationReport(report: SimulationReport): string {
  const { changes, latencyMs, forwarderLagMs, kubernetes, dynamoDb, invocations, events, logs, memory, options } = report;
  const rows: Array<[string, string, string]> = [
    ['changes/s sustained', num(changes.perSecond), `offered ${num(changes.offeredPerSecond)}`],
    ['changes written / late', `${changes.completed} / ${changes.lost}`, `started ${changes.started}; late: ${changes.lateWritten} written later (p50 ${ms(changes.lateLatencyMs.p50)}, max ${ms(changes.lateLatencyMs.max)}), ${changes.unwrittenAtEnd} unwritten at the end, ${changes.failedToStart} refused`],
    ['change → status write p50', ms(latencyMs.p50), `floor ${ms(latencyMs.floor)} (${options.latencyMs} ms × ${num(kubernetes.floorPerChange)} requests)`],
    ['change → status write p99', ms(latencyMs.p99), `floor ${ms(latencyMs.floor)}`],
    ['forwarder lag p50 / p99', `${ms(forwarderLagMs.p50)} / ${ms(forwarderLagMs.p99)}`, `floor ${ms(forwarderLagMs.floor)}`],
    ['Kubernetes requests / change', num(kubernetes.perChange), `floor ${num(kubernetes.floorPerChange)}`],
    ['DynamoDB operations / change', num(dynamoDb.perChange), `floor ${num(dynamoDb.floorPerChange)}`],
    ...(dynamoDb.forwarder === undefined
      ? []
      : ([
          ['  of the functions / change', num(dynamoDb.functionsPerChange ?? 0), `floor ${num(dynamoDb.floorPerChange)}`],
          [
            '  of the forwarders / shard-minute',
            num(dynamoDb.forwarder.perShardMinute),
            `${dynamoDb.forwarder.lease} lease, ${dynamoDb.forwarder.registryReads ?? 0} registry reads, ${dynamoDb.forwarder.checkpointLoads} checkpoint loads, ${dynamoDb.forwarder.checkpointSaves} saves (${num(dynamoDb.forwarder.checkpointSavesPerChange)} / change) over ${num(dynamoDb.forwarder.shardMinutes)} shard-minutes`,
          ],
        ] as Array<[string, string, string]>)),
    // A function's event source hands it up to ten hints at once, so under load several changes share one invocation.
    ['invocations / change', num(invocations.perChange), `floor ${num(invocations.floorPerChange)} one at a time (batches of up to 10 go below it)`],
    ['hint events / change', num(events.perChange), 'floor 1'],
    ['log bytes / change', num(logs.perChange), 'floor 0'],
    ['memory / watched cluster', `${(memory.perClusterBytes / 1e6).toFixed(2)} MB`, 'rss growth ÷ clusters (API servers included)'],
  ];
  const sweeps = report.sweeps;
  if (sweeps) {
    const limit = `QPS ${sweeps.qps}, burst ${sweeps.burst}, ${sweeps.latencyMs} ms a request`;
    const { driftFanOut: fan, revisionGc: gc } = sweeps;
    rows.push(
      [`drift fan-out, ${fan.inferenceServices} InferenceServices`, fan.seconds === null ? `${fan.items} drifted, not all` : duration(fan.seconds), `floor ${duration(fan.floorSeconds)} (${limit})`],
      ['  drift-check requests', `${fan.requests}`, `floor ${fan.floorRequests} (list, revision, ${fan.inferenceServices} status writes); ${fan.invocations} invocations, ${fan.clusterRequests} cluster requests in all`],
      [`revision GC, ${gc.expectedMarks} of ${gc.revisionsCreated} revisions to mark`, gc.seconds === null ? `${gc.items} marked, not all` : duration(gc.seconds), `floor ${duration(gc.floorSeconds)} (${limit})`],
      ['  revision-gc requests', `${gc.requests}`, `floor ${gc.floorRequests} (two lists, ${gc.expectedMarks} marks); ${gc.invocations} invocations, ${gc.clusterRequests} cluster requests in all`],
    );
  }
  const calls = Object.entries(dynamoDb.byCaller ?? {})
    .flatMap(([caller, byCall]) => Object.entries(byCall).map(([call, count]) => ({ caller, call, count })))
    .sort((left, right) => right.count - left.count)
    .slice(0, CALLER_ROWS);
  for (const { caller, call, count } of calls) rows.push([`  DynamoDB ${caller}: ${call}`, String(count), `${((100 * count) / Math.max(1, dynamoDb.operations)).toFixed(1)} % of the window's calls`]);
  const kubeCallers = Object.entries(kubernetes.byCaller ?? {})
    .map(([caller, verbs]) => [caller, Object.values(verbs).reduce((sum, count) => sum + count, 0), verbs] as const)
    .sort(([, left], [, right]) => right - left)
    .slice(0, CALLER_ROWS / 2);
  for (const [caller, count, verbs] of kubeCallers) {
    const requests = Object.entries(verbs).sort(([, left], [, right]) => right - left);
    rows.push([`  Kubernetes ${caller}`, String(count), requests.map(([request, n]) => `${request} ${n}`).join(', ')]);
  }
  for (const [event, count] of Object.entries(report.forwarderEvents ?? {}).sort(([, left], [, right]) => right - left).slice(0, CALLER_ROWS / 2)) rows.push([`  forwarder: ${event.slice(0, 60)}`, String(count), 'log lines in the window']);
  const width = Math.max(...rows.map(([name]) => name.length));
  const valueWidth = Math.max(...rows.map(([, value]) => value.length));
  return [
    `simulate  ${options.clusters} clusters, ${options.latencyMs} ms per request, ${changes.measuredSeconds.toFixed(1)} s measured, ${Object.entries(changes.byKind).map(([kind, count]) => `${kind} ${count}`).join(', ')}`,
    ...rows.map(([name, value, floor]) => `  ${name.padEnd(width)}  ${value.padStart(valueWidth)}  ${floor}`),
  ].join('\n');
}

async function main(): Promise<number> {
  const flags = parseFlags(process.argv.slice(2));
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const report = await runSimulation({ ...flags, progress: (line) => process.stderr.write(`${line}\n`) });
  await mkdir(REPORTS_DIR, { recursive: true });
  const path = join(REPORTS_DIR, `simulate-${report.startedAt.replace(/[:.]/g, '-')}.json`);
  await writeFile(path, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${formatSimulationReport(report)}\n  report: ${path}\n`);
  return report.changes.completed > 0 ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`simulate failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
