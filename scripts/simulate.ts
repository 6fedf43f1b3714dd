/**
 * `npm run simulate -- --clusters 1000 [--latency 5ms] [--duration 60s] [--rate N] [--seed N] [--shards N] [--fan-out 100] [--gc-revisions 40]
 *   [--server-processes 2] [--no-cpu-accounting] [--find-rate [--search-window 20s] [--search-budget 15m] [--search-max 400]]`:
 * the fleet simulation (scripts/simulate/run-simulation.ts). Progress goes to stderr; the
 * figures, each beside its floor, to stdout; the whole report to
 * `reports/simulate-<timestamp>.json`, which `npm run cost` reads. docs/cost.md has a run.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseMilliseconds } from './simulate/figures';
import { DEFAULT_SERVER_PROCESSES, runSimulation } from './simulate/run-simulation';
import type { SimulationOptions, SimulationReport } from './simulate/run-simulation';
import type { LoopDelay } from '../local/cluster-host';

const DEFAULT_SEARCH_WINDOW = '20s';
const DEFAULT_SEARCH_BUDGET = '15m';

const REPORTS_DIR = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'reports');

function wholeNumber(flag: string, text: string | undefined, fallback: number): number {
  const value = Number(text ?? fallback);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${flag} must be a whole number (got ${text})`);
  return value;
}

type Flags = Omit<SimulationOptions, 'progress'>;

function parseFlags(argv: string[]): Flags {
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
      'server-processes': { type: 'string' },
      'find-rate': { type: 'boolean' },
      'no-cpu-accounting': { type: 'boolean' },
      'search-window': { type: 'string' },
      'search-budget': { type: 'string' },
      'search-max': { type: 'string' },
    },
    strict: true,
  });
  const clusters = Number(values.clusters ?? 1000);
  if (!Number.isInteger(clusters) || clusters < 1) throw new Error(`--clusters must be a whole number of at least 1 (got ${values.clusters})`);
  const rate = Number(values.rate ?? 10);
  if (!(rate > 0)) throw new Error(`--rate must be a positive number of changes per second (got ${values.rate})`);
  const shards = values.shards === undefined ? undefined : Number(values.shards);
  const searchMax = values['search-max'] === undefined ? undefined : Number(values['search-max']);
  if (searchMax !== undefined && !(searchMax >= rate)) throw new Error(`--search-max must be a rate of at least --rate (got ${values['search-max']})`);
  if (!values['find-rate'] && (values['search-window'] ?? values['search-budget'] ?? values['search-max']) !== undefined) throw new Error('--search-window, --search-budget and --search-max need --find-rate');
  return {
    clusters,
    latencyMs: parseMilliseconds('--latency', values.latency ?? '5ms'),
    durationMs: parseMilliseconds('--duration', values.duration ?? '60s'),
    rate,
    seed: Number(values.seed ?? 11),
    shards,
    fanOut: wholeNumber('--fan-out', values['fan-out'], 100),
    gcRevisions: wholeNumber('--gc-revisions', values['gc-revisions'], 40),
    serverProcesses: wholeNumber('--server-processes', values['server-processes'], DEFAULT_SERVER_PROCESSES),
    cpuAccounting: !values['no-cpu-accounting'],
    ...(values['find-rate']
      ? {
          findRate: {
            windowMs: parseMilliseconds('--search-window', values['search-window'] ?? DEFAULT_SEARCH_WINDOW),
            budgetMs: parseMilliseconds('--search-budget', values['search-budget'] ?? DEFAULT_SEARCH_BUDGET),
            ...(searchMax === undefined ? {} : { max: searchMax }),
          },
        }
      : {}),
  };
}

/** DynamoDB calls by caller printed (the report has them all). */
const CALLER_ROWS = 10;
const ms = (value: number | null): string => (value === null ? '-' : `${Math.round(value)} ms`);
/** Seconds, or milliseconds under one second. */
const duration = (seconds: number): string => (seconds < 1 ? ms(seconds * 1000) : `${seconds.toFixed(1)} s`);
const num = (value: number): string => (Number.isInteger(value) ? String(value) : value.toFixed(2));
const delays = (delay: LoopDelay): string => `${ms(delay.p50)} / ${ms(delay.p99)} / ${ms(delay.max)}`;

/** CPU time and event-loop delay of the plane's process and of the API servers' (when apart). */
function processRows(report: SimulationReport): Array<[string, string, string]> {
  const rows: Array<[string, string, string]> = [];
  const { cpu, loopDelayMs } = report;
  const apart = (report.options.serverProcesses ?? 0) > 0;
  if (cpu) {
    const split = cpu.functionsMs === null || cpu.otherMs === null ? 'invocations not timed (--no-cpu-accounting)' : `functions ${num(cpu.functionsMs / 1000)} s, the rest (forwarders, bus, webhook, simulator) ${num(cpu.otherMs / 1000)} s`;
    rows.push(['CPU / change, plane process', `${num(cpu.perChangeMs.plane)} ms`, `${num(cpu.planeMs / 1000)} s in the window: ${split}`]);
    if (cpu.perChangeMs.functions !== null) rows.push(['  of the functions / change', `${num(cpu.perChangeMs.functions)} ms`, 'the synchronous slices of their invocations']);
    if (cpu.serversMs !== null && cpu.perChangeMs.servers !== null) rows.push(['CPU / change, API servers', `${num(cpu.perChangeMs.servers)} ms`, `${num(cpu.serversMs / 1000)} s in ${report.options.serverProcesses} processes`]);
    const functions = Object.entries(report.invocations.byFunction).filter(([, entry]) => entry.cpuMs !== undefined);
    for (const [name, entry] of functions) {
      rows.push([`  ${name} CPU / invocation`, `${num((entry.cpuMs ?? 0) / Math.max(1, entry.invocations))} ms`, `p50 ${ms(entry.cpuMsPerInvocation?.p50 ?? null)}, p99 ${ms(entry.cpuMsPerInvocation?.p99 ?? null)}; wall ${num(entry.durationMs / Math.max(1, entry.invocations))} ms`]);
    }
  }
  if (loopDelayMs) {
    rows.push(['event-loop delay, plane p50 / p99 / max', delays(loopDelayMs.plane), apart ? "the plane's process alone" : 'the one process, API servers included']);
    if (loopDelayMs.serversWorst) rows.push(['event-loop delay, API servers', delays(loopDelayMs.serversWorst), `the worst of ${loopDelayMs.servers?.length ?? 0} processes`]);
  }
  return rows;
}

/** The rate search's windows, one a line, and its answer. */
function rateSearchRows(report: SimulationReport): Array<[string, string, string]> {
  const search = report.rateSearch;
  if (!search) return [];
  const rows: Array<[string, string, string]> = search.windows.map((window) => [
    `  rate ${num(window.rate)}/s`,
    window.passed ? 'passed' : 'failed',
    `${window.written} written, ${window.late} late, ${window.refused} refused of ${window.started} started (${window.offered} offered); p50 ${ms(window.latencyMs.p50)}, p99 ${ms(window.latencyMs.p99)}; loop delay p99 plane ${ms(window.loopDelayMs.plane.p99)}${window.loopDelayMs.serversWorst ? `, servers ${ms(window.loopDelayMs.serversWorst.p99)}` : ''}`,
  ]);
  const stopped = { bracket: 'bracket within 10 % or at a limit', windows: `${search.windows.length} windows`, budget: 'time budget' }[search.stoppedBy];
  rows.unshift([
    'highest rate with none late or refused',
    search.highestPassed === null ? 'none' : `${num(search.highestPassed)}/s`,
    `${search.lowestFailed === null ? 'no window failed' : `${num(search.lowestFailed)}/s failed`}; ${search.windows.length} windows of ${search.windowMs / 1000} s in ${duration(search.seconds)}, ended by the ${stopped}`,
  ]);
  return rows;
}

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
    memory.serversPerClusterBytes === undefined
      ? ['memory / watched cluster', `${(memory.perClusterBytes / 1e6).toFixed(2)} MB`, 'rss growth ÷ clusters (API servers included)']
      : ['memory / watched cluster', `${(memory.perClusterBytes / 1e6).toFixed(2)} MB`, `the plane's rss growth ÷ clusters; the API servers' processes ${(memory.serversPerClusterBytes / 1e6).toFixed(2)} MB a cluster apart`],
    ...processRows(report),
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
  for (const [warning, count] of Object.entries(report.functionWarnings ?? {}).sort(([, left], [, right]) => right - left).slice(0, CALLER_ROWS / 2)) rows.push([`  function log: ${warning.slice(0, 60)}`, String(count), 'WARN and ERROR lines in the window']);
  rows.push(...rateSearchRows(report));
  const width = Math.max(...rows.map(([name]) => name.length));
  const valueWidth = Math.max(...rows.map(([, value]) => value.length));
  return [
    `simulate  ${options.clusters} clusters (API servers ${(options.serverProcesses ?? 0) > 0 ? `in ${options.serverProcesses} processes of their own` : "in the plane's process"}), ${options.latencyMs} ms per request, ${changes.measuredSeconds.toFixed(1)} s measured, ${Object.entries(changes.byKind).map(([kind, count]) => `${kind} ${count}`).join(', ')}`,
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
