/**
 * `npm run cost [-- --from reports/simulate-….json] [--changes-per-cluster-month N] [--shards N] [--prices FILE]`:
 * turns a simulation's measured counts (default: the newest report in reports/) into $ per
 * million changes and $ per cluster-month at the list prices of infra/prices.json, beside an
 * always-on in-cluster controller. docs/cost.md explains the table.
 */
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { computeCost, DYNAMODB_ROUND_TRIP_MS } from './cost/cost-model';
import type { CostTable, Deployment, MeasuredCounts, Prices } from './cost/cost-model';
import type { SimulationReport } from './simulate/run-simulation';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FORWARDER = 'forward-watch-events';
/** 65 s of work each minute per shard (FORWARDER_MAX_RUNTIME in serverless.yml). */
const FORWARDER_DUTY_CYCLE = 65 / 60;
const DEFAULT_CHANGES_PER_CLUSTER_MONTH = 1_000;

interface ServerlessFunction {
  memorySize?: number;
  environment?: Record<string, string>;
}

/** Architecture, memory per function and forwarder shards, as serverless.yml deploys them. */
export function deploymentOf(serverlessYml: string, shards: number | undefined): Deployment {
  const config = parse(serverlessYml) as { provider: { architecture?: string; memorySize?: number }; functions: Record<string, ServerlessFunction> };
  const defaultMemoryMb = config.provider.memorySize ?? 1024;
  const memoryMb = Object.fromEntries(Object.entries(config.functions).map(([name, fn]) => [name, fn.memorySize ?? defaultMemoryMb]));
  const forwarder = config.functions[FORWARDER];
  return {
    architecture: config.provider.architecture === 'x86_64' ? 'x86_64' : 'arm64',
    memoryMb,
    defaultMemoryMb,
    forwarderShards: shards ?? Number(forwarder?.environment?.FORWARDER_SHARDS ?? 1),
    forwarderMemoryMb: memoryMb[FORWARDER] ?? defaultMemoryMb,
    forwarderDutyCycle: FORWARDER_DUTY_CYCLE,
  };
}

const sum = (counts: Record<string, number> | undefined): number => Object.values(counts ?? {}).reduce((total, count) => total + count, 0);

export function countsOf(report: SimulationReport): MeasuredCounts {
  // Each function's calls of the window, from the API servers' access logs and the DynamoDB callers.
  const functions = Object.fromEntries(
    Object.entries(report.invocations.byFunction).map(([name, entry]) => [
      name,
      { ...entry, kubernetesRequests: sum(report.kubernetes.byCaller?.[name]), dynamoDbCalls: sum(report.dynamoDb.byCaller?.[name]) },
    ]),
  );
  return {
    changes: report.changes.completed,
    clusters: report.options.clusters,
    functions,
    kubernetesLatencyMs: report.options.latencyMs,
    hintEntries: report.events.hintEntries,
    readUnits: report.dynamoDb.readUnits,
    writeUnits: report.dynamoDb.writeUnits,
    logBytes: report.logs.bytes,
  };
}

const dollars = (value: number): string => `$${value >= 100 ? value.toFixed(0) : value >= 1 ? value.toFixed(2) : value.toFixed(4)}`;

export function formatCostTable(table: CostTable, prices: Prices, deployment: Deployment, source: string, clusters: number): string {
  const width = Math.max(...table.lines.map((line) => line.item.length), 34);
  return [
    `cost  from ${source} (${clusters} clusters); prices ${prices.region} as of ${prices.asOf} (infra/prices.json)`,
    `  ${'item'.padEnd(width)}  $ / million changes`,
    ...table.lines.map((line) => `  ${line.item.padEnd(width)}  ${dollars(line.perMillionChanges)}`),
    `  ${'total'.padEnd(width)}  ${dollars(table.perMillionChanges)}`,
    '',
    table.compute.basis === 'wall time'
      ? '  Lambda compute from the invocations\' wall time in the simulation, an upper bound: there they share one event loop and wait for each other (this report has no CPU time)'
      : `  Lambda compute from each invocation's CPU time plus its round trips one after another (Kubernetes at the run's latency, DynamoDB at ${DYNAMODB_ROUND_TRIP_MS} ms); bounds: CPU alone ${table.compute.cpuOnlyPerMillionChanges === null ? '-' : dollars(table.compute.cpuOnlyPerMillionChanges)}, the simulation's wall time ${dollars(table.compute.wallTimePerMillionChanges)}`,
    `  per cluster-month at ${table.changesPerClusterMonth} changes: ${dollars(table.perClusterMonth)} (changes ${dollars(table.perClusterMonth - table.forwarderPerClusterMonth)} + forwarder ${dollars(table.forwarderPerClusterMonth)}: ${deployment.forwarderShards} shard(s) × ${deployment.forwarderMemoryMb} MB always on, over ${clusters} clusters)`,
    `  in-cluster controller per cluster-month: ${dollars(table.inCluster.perClusterMonth)} (${prices.inClusterController.replicas} replicas × ${prices.inClusterController.cpuRequest} CPU / ${prices.inClusterController.memoryRequestGiB} GiB requested = ${table.inCluster.instancesPerReplica} ${prices.ec2.instanceType} each at ${dollars(prices.ec2.perHour)}/h)`,
  ].join('\n');
}

async function newestReport(): Promise<string> {
  const dir = join(ROOT, 'reports');
  const names = (await readdir(dir).catch(() => [] as string[])).filter((name) => /^simulate-.*\.json$/.test(name)).sort();
  const newest = names[names.length - 1];
  if (!newest) throw new Error('no reports/simulate-*.json: run `npm run simulate` first, or pass --from FILE');
  return join(dir, newest);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { from: { type: 'string' }, 'changes-per-cluster-month': { type: 'string' }, shards: { type: 'string' }, prices: { type: 'string' } },
    strict: true,
  });
  const from = values.from ? resolve(values.from) : await newestReport();
  const changesPerClusterMonth = Number(values['changes-per-cluster-month'] ?? DEFAULT_CHANGES_PER_CLUSTER_MONTH);
  if (!(changesPerClusterMonth >= 0)) throw new Error(`--changes-per-cluster-month must be a number of at least 0 (got ${values['changes-per-cluster-month']})`);
  const report = JSON.parse(await readFile(from, 'utf8')) as SimulationReport;
  const prices = JSON.parse(await readFile(values.prices ? resolve(values.prices) : join(ROOT, 'infra', 'prices.json'), 'utf8')) as Prices;
  const deployment = deploymentOf(await readFile(join(ROOT, 'serverless.yml'), 'utf8'), values.shards === undefined ? undefined : Number(values.shards));
  const table = computeCost(countsOf(report), deployment, prices, changesPerClusterMonth);
  process.stdout.write(`${formatCostTable(table, prices, deployment, from, report.options.clusters)}\n`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`cost failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
