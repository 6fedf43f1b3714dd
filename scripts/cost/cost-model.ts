/**
 * The cost arithmetic of `npm run cost`: a simulation's measured counts times dated list
 * prices (infra/prices.json). Pure: the command reads the files and prints.
 */

export interface Prices {
  asOf: string;
  region: string;
  lambda: { arm64PerGbSecond: number; x86_64PerGbSecond: number; perMillionRequests: number };
  eventBridge: { perMillionPutEventsEntries: number };
  sqs: { perMillionStandardRequests: number };
  dynamoDb: { perMillionWriteRequestUnits: number; perMillionReadRequestUnits: number };
  cloudWatchLogs: { perGbIngested: number };
  ec2: { instanceType: string; perHour: number; vcpus: number; memoryGiB: number };
  inClusterController: { replicas: number; cpuRequest: number; memoryRequestGiB: number };
}

/** One function's invocations over the window. */
export interface FunctionMeasure {
  invocations: number;
  /** Wall time, summed: on the simulation's shared event loop it includes waits for other work. */
  durationMs: number;
  /** CPU time of the invocations' own work, summed; absent in reports from before it was measured. */
  cpuMs?: number;
  /** Kubernetes requests and DynamoDB calls the function made in the window. */
  kubernetesRequests?: number;
  dynamoDbCalls?: number;
}

/** What a simulation measured over its window (scripts/simulate/run-simulation.ts). */
export interface MeasuredCounts {
  changes: number;
  clusters: number;
  /** Per function: invocations, their summed duration, and (newer reports) CPU time and calls. */
  functions: Record<string, FunctionMeasure>;
  /** The round trip injected before each Kubernetes request (`--latency`). */
  kubernetesLatencyMs?: number;
  hintEntries: number;
  readUnits: number;
  writeUnits: number;
  logBytes: number;
}

export interface Deployment {
  architecture: 'arm64' | 'x86_64';
  /** Memory of each function in MB (serverless.yml), with a default for the rest. */
  memoryMb: Record<string, number>;
  defaultMemoryMb: number;
  /** The forwarder: always on, one invocation per shard at a time. */
  forwarderShards: number;
  forwarderMemoryMb: number;
  /** A forwarder run lasts this much of each minute (65 s of 60: runs overlap to hand over). */
  forwarderDutyCycle: number;
}

export interface CostLine {
  item: string;
  /** $ per million changes. */
  perMillionChanges: number;
}

/** How the Lambda compute line's durations were had (`billedMsOf`). */
export type ComputeBasis = 'cpu and round trips' | 'wall time' | 'mixed';

export interface CostTable {
  lines: CostLine[];
  /** The compute line's basis, and what the two bounds would price it at ($ per million changes). */
  compute: { basis: ComputeBasis; wallTimePerMillionChanges: number; cpuOnlyPerMillionChanges: number | null };
  perMillionChanges: number;
  /** The always-on forwarder spread over the clusters, per cluster-month. */
  forwarderPerClusterMonth: number;
  /** Changes per cluster-month × cost per change + the forwarder's share. */
  perClusterMonth: number;
  changesPerClusterMonth: number;
  inCluster: { perClusterMonth: number; instancesPerReplica: number };
}

/** Hours in a month as AWS bills them (730). */
export const HOURS_PER_MONTH = 730;
const SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600;
const GIB = 1024 ** 3;
/** An SQS-delivered hint costs a send, a receive and a delete: three requests per invocation at least. */
export const SQS_REQUESTS_PER_INVOCATION = 3;
/**
 * A DynamoDB call's round trip from a Lambda function in the table's region, as the compute
 * estimate takes it: DynamoDB answers in single-digit milliseconds.
 */
export const DYNAMODB_ROUND_TRIP_MS = 5;

/**
 * A function's billed milliseconds over the window. With its CPU time measured: that time
 * plus its round trips one after another (each Kubernetes request at the injected latency,
 * each DynamoDB call at DYNAMODB_ROUND_TRIP_MS) — what an invocation with a CPU of its own
 * would wait and work, as in Lambda. Without: the measured wall time, an upper bound, since
 * in the simulation the invocations share one event loop and wait for each other's work.
 */
export function billedMsOf(entry: FunctionMeasure, kubernetesLatencyMs: number | undefined): { ms: number; basis: 'cpu and round trips' | 'wall time' } {
  if (entry.cpuMs === undefined || kubernetesLatencyMs === undefined) return { ms: entry.durationMs, basis: 'wall time' };
  const roundTrips = (entry.kubernetesRequests ?? 0) * kubernetesLatencyMs + (entry.dynamoDbCalls ?? 0) * DYNAMODB_ROUND_TRIP_MS;
  return { ms: entry.cpuMs + roundTrips, basis: 'cpu and round trips' };
}

/**
 * $ per million changes by line item, and $ per cluster-month at `changesPerClusterMonth`,
 * beside an always-on in-cluster controller (its replicas' requests, each taking the share
 * of an instance its tighter resource fills).
 */
export function computeCost(counts: MeasuredCounts, deployment: Deployment, prices: Prices, changesPerClusterMonth: number): CostTable {
  const perChange = (total: number): number => (counts.changes === 0 ? 0 : total / counts.changes);
  const gbSecondPrice = deployment.architecture === 'arm64' ? prices.lambda.arm64PerGbSecond : prices.lambda.x86_64PerGbSecond;
  let gbSeconds = 0;
  let wallGbSeconds = 0;
  let cpuGbSeconds: number | null = 0;
  let invocations = 0;
  const bases = new Set<string>();
  for (const [name, entry] of Object.entries(counts.functions)) {
    const memoryGb = (deployment.memoryMb[name] ?? deployment.defaultMemoryMb) / 1024;
    const billed = billedMsOf(entry, counts.kubernetesLatencyMs);
    bases.add(billed.basis);
    gbSeconds += (billed.ms / 1000) * memoryGb;
    wallGbSeconds += (entry.durationMs / 1000) * memoryGb;
    cpuGbSeconds = entry.cpuMs === undefined || cpuGbSeconds === null ? null : cpuGbSeconds + (entry.cpuMs / 1000) * memoryGb;
    invocations += entry.invocations;
  }
  const basis: ComputeBasis = bases.size > 1 ? 'mixed' : bases.has('cpu and round trips') ? 'cpu and round trips' : 'wall time';
  const million = 1e6;
  const computeLabel = { 'cpu and round trips': 'CPU time + round trips', 'wall time': 'measured wall time', mixed: 'CPU time + round trips where measured, else wall time' }[basis];
  const lines: CostLine[] = [
    { item: `Lambda compute (${deployment.architecture} GB-s: ${computeLabel})`, perMillionChanges: perChange(gbSeconds) * gbSecondPrice * million },
    { item: 'Lambda requests', perMillionChanges: perChange(invocations) * prices.lambda.perMillionRequests },
    { item: 'EventBridge PutEvents entries', perMillionChanges: perChange(counts.hintEntries) * prices.eventBridge.perMillionPutEventsEntries },
    { item: 'SQS requests', perMillionChanges: perChange(invocations * SQS_REQUESTS_PER_INVOCATION) * prices.sqs.perMillionStandardRequests },
    { item: 'DynamoDB read request units', perMillionChanges: perChange(counts.readUnits) * prices.dynamoDb.perMillionReadRequestUnits },
    { item: 'DynamoDB write request units', perMillionChanges: perChange(counts.writeUnits) * prices.dynamoDb.perMillionWriteRequestUnits },
    { item: 'CloudWatch Logs ingestion', perMillionChanges: (perChange(counts.logBytes) / GIB) * prices.cloudWatchLogs.perGbIngested * million },
  ];
  const perMillionChanges = lines.reduce((sum, line) => sum + line.perMillionChanges, 0);
  const forwarderMonth = deployment.forwarderShards * deployment.forwarderDutyCycle * SECONDS_PER_MONTH * (deployment.forwarderMemoryMb / 1024) * gbSecondPrice;
  const forwarderPerClusterMonth = counts.clusters === 0 ? 0 : forwarderMonth / counts.clusters;
  const controller = prices.inClusterController;
  const instancesPerReplica = Math.max(controller.cpuRequest / prices.ec2.vcpus, controller.memoryRequestGiB / prices.ec2.memoryGiB);
  return {
    lines,
    compute: {
      basis,
      wallTimePerMillionChanges: perChange(wallGbSeconds) * gbSecondPrice * million,
      cpuOnlyPerMillionChanges: cpuGbSeconds === null ? null : perChange(cpuGbSeconds) * gbSecondPrice * million,
    },
    perMillionChanges,
    forwarderPerClusterMonth,
    perClusterMonth: (changesPerClusterMonth / million) * perMillionChanges + forwarderPerClusterMonth,
    changesPerClusterMonth,
    inCluster: { perClusterMonth: controller.replicas * instancesPerReplica * prices.ec2.perHour * HOURS_PER_MONTH, instancesPerReplica },
  };
}
