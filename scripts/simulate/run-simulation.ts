/**
 * The fleet simulation: the local plane with N embedded clusters (each holding every HTTP
 * request `latencyMs`), a seeded mix of user changes made in-process, and the counts the
 * cost step needs: Kubernetes requests (the API servers' counters), DynamoDB operations and
 * capacity units (a middleware on the plane's client), invocations and their durations
 * (wrapped bus targets), hint events, log bytes.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { setMaxListeners } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isSqsEvent } from '../../local/bus';
import type { TargetHandler } from '../../local/bus';
import { startControlPlane } from '../../local/control-plane';
import { loopDelayOf, startLoopDelay } from '../../local/cluster-host';
import type { HostStats, LoopDelay } from '../../local/cluster-host';
import type { RequestCounts } from '../../local/cluster';
import { runRevisionGc } from '../../functions/revision-gc/handler';
import { runAsFunction } from '../../shared/app/context';
import type { ControlPlane } from '../../local/control-plane';
import { AlreadyExistsError } from '../../shared/domain/errors';
import type { EventBridgeEnvelope, HintDetail } from '../../shared/domain/hint-event';
import { Resources } from '../../shared/domain/model/resources';
import type { ClusterClient, KubeObject, WatchEvent } from '../../shared/ports/cluster';
import { buildSeedRuntimeSpec } from '../../test/runtime/fixtures/seed-runtime';
import { FAN_OUT_RUNTIME, prepareFanOut, runSweeps } from './sweeps';
import type { SweepCluster, SweepReport } from './sweeps';
import { CHANGE_FLOORS, CHANGE_KINDS, createPrng, drawChangeKind, floorOfMix, percentile } from './figures';
import { CpuAccountant, processCpuMicros } from './cpu-accounting';
import type { CpuOwner } from './cpu-accounting';
import { bracketOf, DEFAULT_RATE_SEARCH, nextRate } from './rate-search';
import type { RateSearchLimits } from './rate-search';
import type { ChangeFloor, ChangeKind } from './figures';

const NAMESPACE = 'sim';
const RUNTIME = 'sim-runtime';
/** Takes runtime edits and sync tokens. */
const MAIN = 'main';
/** Takes repins (spec.runtime.revision), so MAIN's drift stays its own. */
const PINNED = 'pinned';
const SYNC_ANNOTATION = 'ome.io/runtime-sync';
/** A change not seen written by then is counted late (and watched for until the run ends). */
const CHANGE_TIMEOUT_MS = 60_000;
const SETUP_TIMEOUT_MS = 600_000;
const PROGRESS_EVERY_MS = 5_000;
/** A change not seen on the watch by then is read back once a tick. */
const READ_BACK_AFTER_MS = 2_000;
/**
 * Clusters whose objects are being created at once. Their pins are awaited apart, all
 * together: a pin that met a held lease waits for the hint queue's redelivery (minutes, as
 * deployed), and must not hold up the creation of the clusters after it.
 */
const SETUP_CONCURRENCY = 10;
/** How often setup reads back whether a cluster's two InferenceServices are pinned (in-process, not counted). */
const SETUP_POLL_MS = 5_000;
const DEFAULT_FAN_OUT = 100;
const BOOKMARK_INTERVAL_MS = 60_000;
const DEFAULT_GC_REVISIONS = 40;
const SETUP_ATTEMPTS = 12;
/**
 * Cluster host processes the API servers run in (`--server-processes`): two, as the machine
 * the figures come from has two cores; 0 runs them in the plane's process, as before.
 */
export const DEFAULT_SERVER_PROCESSES = 2;
/** A search window passes only if it started at least this share of the changes its rate offered. */
const OFFERED_SHARE = 0.95;
/** Quiet time between two windows of the rate search, after the last one's late changes. */
const SEARCH_PAUSE_MS = 5_000;
/** Not a bus target: its requests are named apart. */
const FORWARDER_FUNCTION = 'forward-watch-events';
const CAPACITY_COMMANDS = new Set(['GetItemCommand', 'PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'QueryCommand', 'ScanCommand', 'BatchGetItemCommand', 'BatchWriteItemCommand', 'TransactWriteItemsCommand', 'TransactGetItemsCommand']);
const READ_COMMANDS = new Set(['GetItemCommand', 'QueryCommand', 'ScanCommand', 'BatchGetItemCommand', 'TransactGetItemsCommand']);

export interface SimulationOptions {
  clusters: number;
  latencyMs: number;
  durationMs: number;
  /** Changes started per second over the fleet. */
  rate: number;
  seed: number;
  shards?: number;
  /** InferenceServices of the drift fan-out sweep (default 100; 0 leaves both sweeps out). */
  fanOut?: number;
  /** Old revisions the GC sweep finds (default 40). */
  gcRevisions?: number;
  /** Processes the embedded API servers run in, apart from the plane's (default 2; 0: in the plane's process). */
  serverProcesses?: number;
  /**
   * Time each invocation's CPU (default true). Its async hook costs every promise of the
   * plane's process some time; false measures the process's CPU and loop delay without it.
   */
  cpuAccounting?: boolean;
  /**
   * After the sweeps, search for the highest rate with none late and none refused: windows of
   * `windowMs` at rates from `rate` (rate-search.ts), none started once the budget would be overrun.
   */
  findRate?: { windowMs: number; budgetMs: number; max?: number };
  /** Progress lines (stderr in the command). */
  progress: (line: string) => void;
}

interface FunctionCount {
  invocations: number;
  /** Wall time from the target's start to its end, summed: on a shared event loop, waits for other work included. */
  durationMs: number;
  /** CPU time of the invocations' own synchronous slices, summed (cpu-accounting.ts); absent in older reports. */
  cpuMs?: number;
  cpuMsPerInvocation?: { p50: number | null; p99: number | null };
}

/** One window of the rate search. */
export interface RateSearchWindow {
  rate: number;
  /** The window and its drain. */
  seconds: number;
  /** Changes the rate offered over the window; `started` falls short when every tried cluster was busy. */
  offered: number;
  started: number;
  written: number;
  late: number;
  refused: number;
  passed: boolean;
  latencyMs: { p50: number | null; p99: number | null };
  loopDelayMs: { plane: LoopDelay; serversWorst: LoopDelay | null };
  cpuPerChangeMs: { plane: number | null; servers: number | null };
}

export interface RateSearchReport {
  windowMs: number;
  budgetMs: number;
  limits: RateSearchLimits;
  windows: RateSearchWindow[];
  /** The highest rate that passed below every rate that failed; null when none passed. */
  highestPassed: number | null;
  lowestFailed: number | null;
  /** Why it ended: the bracket within its precision (or at a limit), the windows' number, or the time budget. */
  stoppedBy: 'bracket' | 'windows' | 'budget';
  seconds: number;
}

/** Everything the cost step and the printout read; figures per change sit beside their floor. */
export interface SimulationReport {
  version: 1;
  startedAt: string;
  options: { clusters: number; latencyMs: number; durationMs: number; rate: number; seed: number; shards: number; serverProcesses?: number; cpuAccounting?: boolean };
  setup: { seconds: number; startSeconds: number; clustersSetUp: number };
  changes: {
    started: number;
    /** Written within CHANGE_TIMEOUT_MS. */
    completed: number;
    /** Not written within CHANGE_TIMEOUT_MS (late), or failed to start. */
    lost: number;
    /** Of `lost`: seen written later, before the run ended, and how long after their start (ms). */
    lateWritten: number;
    lateLatencyMs: { p50: number | null; max: number | null };
    /** Of `lost`: still not written when the run ended (or overtaken by the cluster's next change). */
    unwrittenAtEnd: number;
    /** Of `lost`: the change itself was refused (e.g. the admission webhook timed out under load). */
    failedToStart: number;
    byKind: Partial<Record<ChangeKind, number>>; measuredSeconds: number; perSecond: number; offeredPerSecond: number };
  latencyMs: { p50: number | null; p99: number | null; max: number | null; floor: number };
  forwarderLagMs: { p50: number | null; p99: number | null; floor: number };
  kubernetes: {
    requests: number;
    watches: number;
    byMethod: Record<string, number>;
    /** The window's authorized requests by user (a function's ServiceAccount, the forwarder's, …), then verb and resource (`get inferenceservices`); watches left out. */
    byCaller: Record<string, Record<string, number>>;
    perChange: number;
    floorPerChange: number;
  };
  dynamoDb: {
    operations: number;
    reads: number;
    writes: number;
    readUnits: number;
    writeUnits: number;
    unitsReported: boolean;
    byCommand: Record<string, number>;
    /** By caller (a function, `forwarder`, or `other` outside both), then `<command> <item kind>` (`dynamoDbCallOf`). */
    byCaller: Record<string, Record<string, number>>;
    perChange: number;
    floorPerChange: number;
    /** The functions' calls (every caller but the forwarders) per change: what a change costs. */
    functionsPerChange?: number;
    /** The forwarders' calls: a cost per shard and minute (leases, loads) plus saves that follow the changes. */
    forwarder?: ForwarderDynamoDb;
  };
  invocations: { total: number; perChange: number; floorPerChange: number; byFunction: Record<string, FunctionCount> };
  /** CPU milliseconds over the window: the plane's process, its functions' invocations, the API servers' processes (see `note`). */
  cpu?: {
    planeMs: number;
    /** Null with `cpuAccounting` off. */
    functionsMs: number | null;
    otherMs: number | null;
    serversMs: number | null;
    perChangeMs: { plane: number; functions: number | null; servers: number | null };
    note: string;
  };
  /** Event-loop delay over the window: the plane's process, and each API server process (null when they share the plane's). */
  loopDelayMs?: { plane: LoopDelay; servers: LoopDelay[] | null; serversWorst: LoopDelay | null };
  events: { hintEntries: number; perChange: number };
  /** The forwarders' log lines in the window, by message (cluster and details left out): lease losses, restarts. */
  forwarderEvents: Record<string, number>;
  /** The functions' WARN and ERROR log lines in the window, by level and message (the cause of a refusal shows here). */
  functionWarnings?: Record<string, number>;
  logs: { bytes: number; perChange: number };
  memory: {
    rssBeforeBytes: number;
    rssAfterStartBytes: number;
    heapBeforeBytes: number;
    heapAfterStartBytes: number;
    perClusterBytes: number;
    /** The API servers' processes after the start, when they run apart. */
    serversRssBytes?: number;
    serversPerClusterBytes?: number;
    note: string;
  };
  floors: Record<ChangeKind, ChangeFloor>;
  /** The drift fan-out and GC sweeps in one cluster after the measured window; null when left out. */
  sweeps: SweepReport | null;
  /** `--find-rate`: the windows and the highest rate with none late. */
  rateSearch?: RateSearchReport;
}

interface Pending {
  kind: ChangeKind;
  startedAt: number;
  /** The object whose hint marks the change forwarded. */
  subject: string;
  /** The InferenceService whose status shows the change written. */
  isvc: string;
  forwardedAt?: number;
  done: (isvc: KubeObject) => boolean;
  /** The window it counts for. */
  tally: WindowTally;
}

interface SimCluster {
  index: number;
  id: string;
  client: ClusterClient;
  drifted: boolean;
  revisions: string[];
  pinnedRevision: string;
  services: number;
  edits: number;
  pending?: Pending;
  /** Changes past CHANGE_TIMEOUT_MS, still looked for. */
  late: Pending[];
}

type Status = { pinnedRevisionName?: string; lastRuntimeSyncToken?: string; conditions?: Array<{ type?: string; status?: string }> };
const statusOf = (object: KubeObject): Status => (object.status ?? {}) as Status;
const isDrifted = (object: KubeObject): boolean => (statusOf(object).conditions ?? []).some((c) => c.type === 'RuntimeDrifted' && c.status === 'True');
const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function runtimeSpec(edit: number): Record<string, unknown> {
  const memFrac = edit === 0 ? '0.9' : (0.5 + edit / 10_000).toFixed(4);
  return JSON.parse(JSON.stringify(buildSeedRuntimeSpec('0.9')).replace('--mem-frac=0.9', `--mem-frac=${memFrac}`)) as Record<string, unknown>;
}

function inferenceService(name: string, revision?: string, runtime = RUNTIME): KubeObject {
  return {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace: NAMESPACE },
    spec: { model: { name }, runtime: { name: runtime, kind: 'ServingRuntime', autoSync: false, ...(revision ? { revision } : {}) }, engine: { minReplicas: 1, maxReplicas: 1 } },
  };
}

async function ensure(client: ClusterClient, type: (typeof Resources)[keyof typeof Resources], object: KubeObject): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await client.create(type, object);
      return;
    } catch (error) {
      if (error instanceof AlreadyExistsError) return;
      // The admission webhook fails closed when its checks time out on a loaded machine.
      if (attempt >= SETUP_ATTEMPTS) throw error;
      await delay(Math.min(5_000, 500 * attempt));
    }
  }
}

/** The function whose bus target is running (set by the simulation's wrapped targets). */
const callerOfWork = new AsyncLocalStorage<string>();

/** A BatchGetItem's first key, or a BatchWriteItem's first item, of its first table. */
function firstBatchKey(requestItems: unknown): unknown {
  const [first] = Object.values((requestItems ?? {}) as Record<string, { Keys?: unknown[] } | Array<{ PutRequest?: { Item?: unknown }; DeleteRequest?: { Key?: unknown } }>>);
  if (Array.isArray(first)) return first[0]?.PutRequest?.Item ?? first[0]?.DeleteRequest?.Key;
  return first?.Keys?.[0];
}

/** A key attribute's text, plain or marshalled (`{ S: '…' }`). */
function keyText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { S?: unknown }).S === 'string') return (value as { S: string }).S;
  return '';
}

/**
 * A DynamoDB call as the caller breakdown names it: the command without `Command` and the
 * kind of item it touches — the partition key's prefix (`LEASE`, `CHECKPOINT`, `IDEMPOTENCY`, …),
 * or for a shared partition (`REGISTRY`, `FLEET`) that and the sort key's prefix. A Query is
 * named by the partition it reads, a BatchGetItem or BatchWriteItem by its first item's.
 */
export function dynamoDbCallOf(command: string, input: Record<string, unknown>): string {
  const name = command.replace(/Command$/, '');
  const key = (input.Key ?? input.Item ?? firstBatchKey(input.RequestItems)) as Record<string, unknown> | undefined;
  const values = input.ExpressionAttributeValues as Record<string, unknown> | undefined;
  const pk = keyText(key?.pk) || (name === 'Query' ? keyText(values?.[':pk']) : '');
  if (!pk) return name;
  const [partition = ''] = pk.split('#');
  const sk = keyText(key?.sk);
  const kind = pk.includes('#') || !sk ? partition : `${partition}/${sk.split('#')[0] ?? ''}`;
  return `${name} ${kind}`;
}

/**
 * A forwarder's or shard's log line as its event: `forwarder    local-7: warning: forwarder
 * lease lost; stopping at once {…}` → `warning: forwarder lease lost; stopping at once`, and
 * `forwarder    shard 2: forwarder shard lease acquired {…}` → `forwarder shard lease acquired`.
 */
export function forwarderEventOf(line: string): string | undefined {
  const match = /^forwarder {4}(?:local[-\w]*|shard \d+): (.*?)(?: \{.*)?$/.exec(line);
  return match?.[1];
}

/**
 * The API servers' access records since `from` (per cluster), by function
 * (`system:serviceaccount:ome-pinning-system:ome-pinning-pin` → `pin`) or else user, then by
 * verb and resource (`get inferenceservices`, `update inferenceservices/status`).
 */
async function kubernetesCallers(plane: ControlPlane, from: ReadonlyMap<string, number>): Promise<Record<string, Record<string, number>>> {
  const byCaller: Record<string, Record<string, number>> = {};
  const functions = [...plane.functions, FORWARDER_FUNCTION];
  const pages = await Promise.all(plane.clusters.map(async (cluster) => (await cluster.observe?.accessLog(from.get(cluster.id) ?? 0))?.records ?? []));
  for (const records of pages) {
    for (const record of records) {
      if (record.verb === 'watch') continue;
      const account = record.username.slice(record.username.lastIndexOf(':') + 1) || record.username;
      // `ome-pinning-pin` → `pin`: the longest function name the ServiceAccount ends with.
      const caller = functions.filter((name) => account === name || account.endsWith(`-${name}`)).sort((left, right) => right.length - left.length)[0] ?? account;
      const verbs = (byCaller[caller] ??= {});
      // `inferenceservices.ome.io/status` → `inferenceservices/status`
      const request = `${record.verb} ${record.target.replace(/\.[^/]*/, '')}`;
      verbs[request] = (verbs[request] ?? 0) + 1;
    }
  }
  return byCaller;
}

function medianAndMax(values: number[]): { p50: number | null; max: number | null } {
  return { p50: percentile(values, 50) ?? null, max: percentile(values, 100) ?? null };
}

/** Takes the cluster's late changes that `object` shows written off its list, with their time since start (counted for their window). */
function settleLate(cluster: SimCluster, object: KubeObject): void {
  if (cluster.late.length === 0) return;
  const now = Date.now();
  cluster.late = cluster.late.filter((late) => {
    if (!late.done(object)) return true;
    late.tally.lateLatencies.push(now - late.startedAt);
    return false;
  });
}

/** Reads back the InferenceServices of the cluster's late changes (in-process, not counted). */
async function readBackLate(cluster: SimCluster, onIsvc: (event: { type: WatchEvent['type']; object: KubeObject }) => void): Promise<void> {
  for (const late of [...cluster.late]) {
    const object = await cluster.client.get(Resources.inferenceServices, NAMESPACE, late.isvc).catch(() => undefined);
    if (object) onIsvc({ type: 'MODIFIED', object });
  }
}

export interface ForwarderDynamoDb {
  operations: number;
  /** The shards' lease heartbeats and takes. */
  lease: number;
  /** Checkpoint saves (PutItem). */
  checkpointSaves: number;
  /** Checkpoint loads (BatchGetItem, and Query for a cluster without a checkpoints item) as sessions start. */
  checkpointLoads: number;
  /** The shards' reads of the cluster registry (a scan every 2 s locally, one per run in AWS). */
  registryReads: number;
  shardMinutes: number;
  perShardMinute: number;
  /** Of the saves, per change. */
  checkpointSavesPerChange: number;
}

/** The forwarders' share of the window's DynamoDB calls, split by what they are for. */
export function forwarderDynamoDbOf(byCall: Record<string, number> | undefined, shardMinutes: number, changes: number): ForwarderDynamoDb {
  let operations = 0;
  let lease = 0;
  let checkpointSaves = 0;
  let checkpointLoads = 0;
  let registryReads = 0;
  for (const [call, count] of Object.entries(byCall ?? {})) {
    operations += count;
    if (call.endsWith(' LEASE')) lease += count;
    else if (call.includes(' REGISTRY')) registryReads += count;
    else if (/^(PutItem|BatchWriteItem)\b/.test(call)) checkpointSaves += count;
    else if (/^(Query|GetItem|BatchGetItem)\b/.test(call)) checkpointLoads += count;
  }
  return {
    operations,
    lease,
    checkpointSaves,
    checkpointLoads,
    registryReads,
    shardMinutes,
    perShardMinute: shardMinutes === 0 ? 0 : operations / shardMinutes,
    checkpointSavesPerChange: changes === 0 ? 0 : checkpointSaves / changes,
  };
}

/** Counts the plane's DynamoDB commands (functions' and forwarders' clients), by caller, and the capacity units DynamoDB reports for them. */
function countDynamoDb(plane: ControlPlane): SimulationReport['dynamoDb'] {
  const counts: SimulationReport['dynamoDb'] = { operations: 0, reads: 0, writes: 0, readUnits: 0, writeUnits: 0, unitsReported: false, byCommand: {}, byCaller: {}, perChange: 0, floorPerChange: 0 };
  const clients: Array<[ControlPlane['dynamoClient'], (() => string)]> = [
    [plane.dynamoClient, () => callerOfWork.getStore() ?? 'other'],
    [plane.forwarderDynamoClient, () => 'forwarder'],
  ];
  for (const [client, callerOf] of clients) client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = (context as { commandName?: string }).commandName ?? 'unknown';
      const input = args.input as Record<string, unknown>;
      if (CAPACITY_COMMANDS.has(command)) input.ReturnConsumedCapacity ??= 'TOTAL';
      const caller = callerOf();
      const call = dynamoDbCallOf(command, input);
      const result = await next(args);
      counts.operations += 1;
      counts.byCommand[command] = (counts.byCommand[command] ?? 0) + 1;
      const byCall = (counts.byCaller[caller] ??= {});
      byCall[call] = (byCall[call] ?? 0) + 1;
      if (READ_COMMANDS.has(command)) counts.reads += 1;
      else if (CAPACITY_COMMANDS.has(command)) counts.writes += 1;
      const consumed = (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
      const entries = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) as Array<{ CapacityUnits?: number; ReadCapacityUnits?: number; WriteCapacityUnits?: number }>;
      for (const entry of entries) {
        counts.unitsReported = true;
        const read = entry.ReadCapacityUnits ?? (READ_COMMANDS.has(command) ? (entry.CapacityUnits ?? 0) : 0);
        const write = entry.WriteCapacityUnits ?? (READ_COMMANDS.has(command) ? 0 : (entry.CapacityUnits ?? 0));
        counts.readUnits += read;
        counts.writeUnits += write;
      }
      // No capacity reported: one unit per item operation (items here are under 1 KB).
      if (entries.length === 0 && CAPACITY_COMMANDS.has(command)) {
        if (READ_COMMANDS.has(command)) counts.readUnits += 1;
        else counts.writeUnits += 1;
      }
      return result;
    },
    { step: 'serialize', priority: 'high', name: 'simulationDynamoDbCounter' },
  );
  return counts;
}

/**
 * The sweeps' cluster (`cluster`, the fleet's first) with the fan-out runtime and its
 * InferenceServices pinned; undefined when the sweeps are left out (`fanOut` 0).
 */
async function prepareSweepCluster(plane: ControlPlane, cluster: SimCluster | undefined, options: SimulationOptions, progress: (line: string) => void): Promise<SweepCluster | undefined> {
  const fanOut = options.fanOut ?? DEFAULT_FAN_OUT;
  const served = plane.clusters.find((candidate) => candidate.id === cluster?.id);
  if (fanOut <= 0 || !served?.client || !served.observe) return undefined;
  const sweepCluster: SweepCluster = { id: served.id, client: served.client, observe: served.observe };
  progress(`simulate  setting up the drift fan-out in ${sweepCluster.id}: ${FAN_OUT_RUNTIME} and ${fanOut} InferenceServices`);
  await ensure(sweepCluster.client, Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  await prepareFanOut(
    sweepCluster,
    NAMESPACE,
    fanOut,
    { runtimeSpec, inferenceService: (name, runtime) => inferenceService(name, undefined, runtime), ensure: (type, object) => ensure(sweepCluster.client, type, object) },
    progress,
  );
  return sweepCluster;
}

/** The clusters that take changes: every one set up, but the sweeps' when there are others. */
function changeClustersOf(setUp: SimCluster[], sweepCluster: SweepCluster | undefined): SimCluster[] {
  return setUp.length > 1 && sweepCluster ? setUp.filter((cluster) => cluster.id !== sweepCluster.id) : setUp;
}

function sweepInputOf(plane: ControlPlane, cluster: SweepCluster, options: SimulationOptions, invocationsOf: (functionName: string) => number): Parameters<typeof runSweeps>[0] {
  const { config } = plane.app;
  return {
    cluster,
    namespace: NAMESPACE,
    omeNamespace: config.omeNamespace,
    fanOut: options.fanOut ?? DEFAULT_FAN_OUT,
    gcRevisions: options.gcRevisions ?? DEFAULT_GC_REVISIONS,
    retention: config.revisionRetention,
    limits: { latencyMs: options.latencyMs, qps: config.kubeApiQps ?? Infinity, burst: config.kubeApiBurst ?? 0 },
    runtimeSpec,
    invocationsOf,
    // As its schedule would, for this cluster alone; attributed to revision-gc like a bus target's work.
    sweepRevisions: () =>
      callerOfWork.run('revision-gc', () => runAsFunction('revision-gc', () => runRevisionGc({ detail: { clusterId: cluster.id } }, 'simulate/revision-gc', plane.app))),
    progress: options.progress,
  };
}

function hintsOf(event: unknown): HintDetail[] {
  if (isSqsEvent(event as never)) {
    return (event as { Records: Array<{ body: string }> }).Records.map((record) => (JSON.parse(record.body) as EventBridgeEnvelope<HintDetail>).detail);
  }
  const detail = (event as EventBridgeEnvelope<HintDetail>).detail;
  return detail && typeof detail === 'object' && 'clusterId' in detail ? [detail] : [];
}

/**
 * Setup, not measured: a runtime and two InferenceServices per cluster, created
 * SETUP_CONCURRENCY clusters at a time, then every cluster's pins awaited together.
 * Returns the clusters left out because their setup failed.
 */
async function setUpFleet(clusters: SimCluster[], progress: (line: string) => void): Promise<Set<SimCluster>> {
  const setupBegan = Date.now();
  const failedSetup = new Set<SimCluster>();
  const leaveOut = (cluster: SimCluster, error: unknown): void => {
    failedSetup.add(cluster);
    progress(`simulate  ${cluster.id}: left out, its setup failed: ${error instanceof Error ? error.message : String(error)}`);
  };
  const createOne = async (cluster: SimCluster): Promise<void> => {
    await ensure(cluster.client, Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    await ensure(cluster.client, Resources.servingRuntimes, { apiVersion: 'ome.io/v1beta1', kind: 'ServingRuntime', metadata: { name: RUNTIME, namespace: NAMESPACE }, spec: runtimeSpec(0) });
    for (const name of [MAIN, PINNED]) await ensure(cluster.client, Resources.inferenceServices, inferenceService(name));
  };
  let pinnedCount = 0;
  const waitPinned = async (cluster: SimCluster): Promise<void> => {
    const deadline = Date.now() + SETUP_TIMEOUT_MS;
    // Spread the reads of a thousand clusters over the poll interval (not the seeded mix).
    await delay(Math.floor(Math.random() * SETUP_POLL_MS));
    for (;;) {
      const pinned = await Promise.all([MAIN, PINNED].map(async (name) => statusOf(await cluster.client.get(Resources.inferenceServices, NAMESPACE, name)).pinnedRevisionName ?? ''));
      if (pinned.every(Boolean)) {
        cluster.pinnedRevision = pinned[1] ?? '';
        cluster.revisions = [...new Set(pinned)];
        pinnedCount += 1;
        return;
      }
      if (Date.now() > deadline) throw new Error(`${cluster.id}: ${MAIN} and ${PINNED} were not pinned within ${SETUP_TIMEOUT_MS / 1000} s`);
      await delay(SETUP_POLL_MS);
    }
  };
  const queue = [...clusters];
  const pins: Array<Promise<void>> = [];
  let created = 0;
  const setupProgress = setInterval(
    () => progress(`simulate  setup: ${created}/${clusters.length} clusters' objects created, ${pinnedCount} pinned, ${failedSetup.size} left out (${((Date.now() - setupBegan) / 1000).toFixed(0)} s)`),
    PROGRESS_EVERY_MS,
  );
  try {
    await Promise.all(
      Array.from({ length: Math.min(SETUP_CONCURRENCY, clusters.length) }, async () => {
        for (let next = queue.shift(); next; next = queue.shift()) {
          const cluster = next;
          try {
            await createOne(cluster);
            created += 1;
            pins.push(waitPinned(cluster).catch((error: unknown) => leaveOut(cluster, error)));
          } catch (error) {
            leaveOut(cluster, error);
          }
        }
      }),
    );
    await Promise.all(pins);
  } finally {
    clearInterval(setupProgress);
  }
  return failedSetup;
}

/** Runs the simulation and returns its report; stops everything it started. */
/** Where a window's changes are counted: the main window's, or one of the rate search's. */
interface WindowTally {
  started: number;
  latencies: number[];
  lags: number[];
  completedByKind: Partial<Record<ChangeKind, number>>;
  /** Late (not written within CHANGE_TIMEOUT_MS) or refused. */
  lost: number;
  failedToStart: number;
  /** Of the late ones, the time each took when seen written later. */
  lateLatencies: number[];
}

const newTally = (): WindowTally => ({ started: 0, latencies: [], lags: [], completedByKind: {}, lost: 0, failedToStart: 0, lateLatencies: [] });

/** Sums the API servers' counters. */
function sumRequestCounts(all: ReadonlyArray<RequestCounts | undefined>): RequestCounts {
  const sum: RequestCounts = { requests: 0, watches: 0, byMethod: {} };
  for (const counts of all) {
    if (!counts) continue;
    sum.requests += counts.requests;
    sum.watches += counts.watches;
    for (const [method, count] of Object.entries(counts.byMethod)) sum.byMethod[method] = (sum.byMethod[method] ?? 0) + count;
  }
  return sum;
}

/** The worst of the hosts' delays, figure by figure (each host's are in the report). */
function worstLoopDelay(delays: readonly LoopDelay[]): LoopDelay | null {
  if (delays.length === 0) return null;
  return { p50: Math.max(...delays.map((d) => d.p50)), p99: Math.max(...delays.map((d) => d.p99)), max: Math.max(...delays.map((d) => d.max)) };
}

const hostCpuMicros = (stats: readonly HostStats[]): number => stats.reduce((sum, host) => sum + host.cpuUserMicros + host.cpuSystemMicros, 0);

/** The plane's process and the API servers' processes, read at a window's start and end. */
interface ProcessProbe {
  /** Ends the window's readings: CPU milliseconds in each and the event loops' delay. */
  read(): Promise<{ planeCpuMs: number; serversCpuMs: number | null; planeLoopDelayMs: LoopDelay; serversLoopDelayMs: LoopDelay[] | null }>;
}

async function startProbe(plane: ControlPlane): Promise<ProcessProbe> {
  const planeCpuBefore = processCpuMicros();
  const hostsBefore = plane.clusterHosts ? await plane.clusterHosts.stats(true) : undefined;
  const loop = startLoopDelay();
  return {
    async read() {
      const planeCpuMs = (processCpuMicros() - planeCpuBefore) / 1000;
      const planeLoopDelayMs = loopDelayOf(loop);
      loop.disable();
      const hostsAfter = plane.clusterHosts && hostsBefore ? await plane.clusterHosts.stats() : undefined;
      return {
        planeCpuMs,
        serversCpuMs: hostsAfter && hostsBefore ? (hostCpuMicros(hostsAfter) - hostCpuMicros(hostsBefore)) / 1000 : null,
        planeLoopDelayMs,
        serversLoopDelayMs: hostsAfter ? hostsAfter.map((host) => host.loopDelayMs) : null,
      };
    },
  };
}

/** Runs the simulation and returns its report; stops everything it started. */
export async function runSimulation(options: SimulationOptions): Promise<SimulationReport> {
  const startedAt = new Date();
  const dataDir = await mkdtemp(join(tmpdir(), 'ome-simulate-'));
  const serverProcesses = options.serverProcesses ?? DEFAULT_SERVER_PROCESSES;
  const cpuAccounting = options.cpuAccounting ?? true;
  const byFunction: Record<string, FunctionCount> = {};
  /** The window's invocations, each with its CPU owner, summed at the window's end (late callbacks included). */
  const owned: Array<{ functionName: string; owner: CpuOwner }> = [];
  const cpu = new CpuAccountant();
  const eventIds = new Set<string>();
  /** Every invocation, measured or not, by `<function>@<cluster>` of the hints it carried (the sweeps count their cluster's). */
  const invocationCounts: Record<string, number> = {};
  const clusterByIdMap = new Map<string, SimCluster>();
  let logBytes = 0;
  let measuring = false;
  const forwarderEvents: Record<string, number> = {};
  const functionWarnings: Record<string, number> = {};
  const wrapTarget = (functionName: string, target: TargetHandler | undefined): TargetHandler | undefined =>
    target &&
    (async (event, context) => {
      const began = Date.now();
      const counted = measuring;
      if (counted) {
        const ids = isSqsEvent(event) ? event.Records.map((record) => (JSON.parse(record.body) as { id?: string }).id ?? record.messageId) : [(event as { id?: string }).id ?? ''];
        for (const id of ids) eventIds.add(id);
        for (const hint of hintsOf(event)) {
          const pending = clusterByIdMap.get(hint.clusterId)?.pending;
          if (pending && pending.forwardedAt === undefined && hint.name === pending.subject) pending.forwardedAt = began;
        }
      }
      // Counted as it starts: a sweep reads the count as soon as its last write shows, which
      // may be before the invocation that made it has returned.
      for (const clusterId of new Set(hintsOf(event).map((hint) => hint.clusterId))) {
        const key = `${functionName}@${clusterId}`;
        invocationCounts[key] = (invocationCounts[key] ?? 0) + 1;
      }
      const owner: CpuOwner = { cpuMicros: 0 };
      if (counted && cpuAccounting) owned.push({ functionName, owner });
      try {
        return await cpu.run(owner, () => callerOfWork.run(functionName, () => target(event, context)));
      } finally {
        if (counted) {
          const entry = (byFunction[functionName] ??= { invocations: 0, durationMs: 0 });
          entry.invocations += 1;
          entry.durationMs += Date.now() - began;
        }
      }
    });

  const memoryBefore = process.memoryUsage();
  const progress = options.progress;
  let clustersStarted = 0;
  const startBegan = Date.now();
  // The functions' own log lines (Powertools writes JSON lines to stdout and stderr) are
  // what CloudWatch Logs would ingest: counted while measuring, never shown.
  const restoreStreams = [process.stdout, process.stderr].map((stream) => {
    const write = stream.write.bind(stream);
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      if (!text.startsWith('{"level"')) return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
      if (measuring) {
        logBytes += Buffer.byteLength(text);
        const warning = warningOf(text);
        if (warning) functionWarnings[warning] = (functionWarnings[warning] ?? 0) + 1;
      }
      if (process.env.SIMULATE_SHOW_LOGS) return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
      (rest.find((arg) => typeof arg === 'function') as (() => void) | undefined)?.();
      return true;
    }) as typeof stream.write;
    return () => {
      stream.write = write as typeof stream.write;
    };
  });
  let plane: ControlPlane | undefined;
  const abort = new AbortController();
  // One listener per cluster's watch.
  setMaxListeners(0, abort.signal);
  try {
    plane = await startControlPlane({
      dataDir,
      clusters: options.clusters,
      clusterLatencyMs: options.latencyMs,
      // As kube-apiserver's watch cache: six watches a cluster at the embedded 5 s would be 1,200 bookmarks a second at 1,000 clusters.
      clusterBookmarkIntervalMs: BOOKMARK_INTERVAL_MS,
      clusterProcesses: serverProcesses,
      schedules: false,
      functionLogLevel: 'INFO',
      workloadReadyDelayMs: 50,
      wrapTarget,
      ...(options.shards === undefined ? {} : { forwarderShards: options.shards }),
      log: (line) => {
        if (measuring) {
          logBytes += Buffer.byteLength(line) + 1;
          const event = forwarderEventOf(line);
          if (event) forwarderEvents[event] = (forwarderEvents[event] ?? 0) + 1;
        }
        if (line.startsWith('cluster ')) {
          clustersStarted += 1;
          if (clustersStarted % 50 === 0) progress(`simulate  ${clustersStarted} clusters started (${((Date.now() - startBegan) / 1000).toFixed(0)} s)`);
        } else if (!line.startsWith('forwarder    local')) progress(line);
      },
    });
    const startSeconds = (Date.now() - startBegan) / 1000;
    const memoryAfterStart = process.memoryUsage();
    const serversAfterStart = plane.clusterHosts ? await plane.clusterHosts.stats() : undefined;
    const dynamo = countDynamoDb(plane);
    const clusters: SimCluster[] = plane.clusters.map((cluster, index) => ({
      index,
      id: cluster.id,
      client: cluster.client as ClusterClient,
      drifted: false,
      revisions: [],
      pinnedRevision: '',
      services: 2,
      edits: 0,
      late: [],
    }));
    for (const cluster of clusters) clusterByIdMap.set(cluster.id, cluster);
    const onIsvc = (cluster: SimCluster) => (event: { type: WatchEvent['type']; object: KubeObject }): void => {
      if (event.type === 'BOOKMARK') return;
      settleLate(cluster, event.object);
      const pending = cluster.pending;
      if (!pending || !pending.done(event.object)) return;
      const now = Date.now();
      cluster.pending = undefined;
      const { tally } = pending;
      tally.latencies.push(now - pending.startedAt);
      if (pending.forwardedAt !== undefined) tally.lags.push(pending.forwardedAt - pending.startedAt);
      tally.completedByKind[pending.kind] = (tally.completedByKind[pending.kind] ?? 0) + 1;
    };
    const watchCluster = async (cluster: SimCluster): Promise<void> => {
      while (!abort.signal.aborted) {
        await cluster.client.watch(Resources.inferenceServices, { namespace: NAMESPACE, signal: abort.signal }, onIsvc(cluster)).catch(() => delay(500));
      }
    };
    // A watch opened after the write misses it: a change unseen for a while is read back (in-process, not counted).
    const readBack = async (): Promise<void> => {
      const now = Date.now();
      for (const cluster of clusters) {
        await readBackLate(cluster, onIsvc(cluster));
        const pending = cluster.pending;
        if (!pending || now - pending.startedAt < READ_BACK_AFTER_MS) continue;
        const object = await cluster.client.get(Resources.inferenceServices, NAMESPACE, pending.isvc).catch(() => undefined);
        if (object && cluster.pending === pending) onIsvc(cluster)({ type: 'MODIFIED', object });
      }
    };
    const readBackTimer = setInterval(() => void readBack(), READ_BACK_AFTER_MS);
    abort.signal.addEventListener('abort', () => clearInterval(readBackTimer));

    // Setup: a runtime and two pinned InferenceServices per cluster, not measured.
    const setupBegan = Date.now();
    for (const cluster of clusters) void watchCluster(cluster);
    // The sweeps' cluster (the first) is prepared alongside, so its pins' waits overlap the fleet's.
    const [failedSetup, sweepCluster] = await Promise.all([
      setUpFleet(clusters, progress),
      prepareSweepCluster(plane, clusters[0], options, progress).catch((error: unknown) => {
        progress(`simulate  the sweeps are left out, their setup failed: ${error instanceof Error ? error.message : String(error)}`);
        return undefined;
      }),
    ]);
    const setupSeconds = (Date.now() - setupBegan) / 1000;
    // Changes go to the clusters that were set up; the rest keep being watched and counted.
    const setUpClusters = clusters.filter((cluster) => !failedSetup.has(cluster));
    if (setUpClusters.length === 0) throw new Error('no cluster could be set up');
    const active = changeClustersOf(setUpClusters, sweepCluster);
    progress(
      `simulate  ${setUpClusters.length} of ${clusters.length} clusters set up in ${setupSeconds.toFixed(1)} s; measuring ${options.durationMs / 1000} s at ${options.rate} changes/s over ${active.length}${sweepCluster ? ` (${sweepCluster.id} kept for the sweeps)` : ''}`,
    );

    const random = createPrng(options.seed);
    let changeSequence = 0;
    const startChange = async (cluster: SimCluster, tally: WindowTally): Promise<void> => {
      const allowed = CHANGE_KINDS.filter((kind) =>
        kind === 'runtimeEdit' ? !cluster.drifted : kind === 'syncToken' ? cluster.drifted : kind === 'repin' ? cluster.revisions.length >= 2 : true,
      );
      const kind = drawChangeKind(random, allowed);
      if (!kind) return;
      changeSequence += 1;
      tally.started += 1;
      const client = cluster.client;
      const begin = (pending: Omit<Pending, 'startedAt' | 'tally' | 'kind'>): void => {
        cluster.pending = { ...pending, kind, tally, startedAt: Date.now() };
      };
      switch (kind) {
        case 'runtimeEdit': {
          cluster.edits += 1;
          begin({ subject: RUNTIME, isvc: MAIN, done: (isvc) => isvc.metadata.name === MAIN && isDrifted(isvc) });
          cluster.drifted = true;
          await client.patch(Resources.servingRuntimes, NAMESPACE, RUNTIME, { spec: runtimeSpec(cluster.edits) }, { type: 'merge' });
          return;
        }
        case 'syncToken': {
          const token = `sim-${changeSequence}`;
          begin({
            subject: MAIN,
            isvc: MAIN,
            done: (isvc) => {
              const status = statusOf(isvc);
              if (isvc.metadata.name !== MAIN || status.lastRuntimeSyncToken !== token || isDrifted(isvc)) return false;
              if (status.pinnedRevisionName && !cluster.revisions.includes(status.pinnedRevisionName)) cluster.revisions.push(status.pinnedRevisionName);
              return true;
            },
          });
          cluster.drifted = false;
          await client.patch(Resources.inferenceServices, NAMESPACE, MAIN, { metadata: { annotations: { [SYNC_ANNOTATION]: token } } }, { type: 'merge' });
          return;
        }
        case 'repin': {
          const choices = cluster.revisions.filter((revision) => revision !== cluster.pinnedRevision);
          const target = choices[Math.floor(random() * choices.length)] ?? cluster.revisions[0] ?? '';
          begin({ subject: PINNED, isvc: PINNED, done: (isvc) => isvc.metadata.name === PINNED && statusOf(isvc).pinnedRevisionName === target });
          cluster.pinnedRevision = target;
          await client.patch(Resources.inferenceServices, NAMESPACE, PINNED, { spec: { runtime: { revision: target } } }, { type: 'merge' });
          return;
        }
        case 'newInferenceService': {
          cluster.services += 1;
          const name = `isvc-${cluster.services}`;
          begin({ subject: name, isvc: name, done: (isvc) => isvc.metadata.name === name && Boolean(statusOf(isvc).pinnedRevisionName) });
          await client.create(Resources.inferenceServices, inferenceService(name));
          return;
        }
      }
    };
    const timeouts = (): void => {
      const now = Date.now();
      for (const cluster of clusters) {
        if (cluster.pending && now - cluster.pending.startedAt > CHANGE_TIMEOUT_MS) {
          progress(`simulate  ${cluster.id}: ${cluster.pending.kind} not written within ${CHANGE_TIMEOUT_MS / 1000} s; counted late`);
          cluster.late.push(cluster.pending);
          cluster.pending.tally.lost += 1;
          cluster.pending = undefined;
        }
      }
    };
    /** One window: a change every 1/rate s on a free cluster for `durationMs`, then until every one is written or late. */
    const runWindow = async (rate: number, durationMs: number, label: string): Promise<{ tally: WindowTally; seconds: number }> => {
      const tally = newTally();
      const began = Date.now();
      const interval = 1000 / rate;
      let lastProgress = began;
      for (let tick = 0; Date.now() - began < durationMs; tick += 1) {
        const due = began + tick * interval;
        if (due > Date.now()) await delay(due - Date.now());
        timeouts();
        // A free cluster at random; a tick with every tried cluster busy makes no change.
        for (let attempt = 0; attempt < 8; attempt += 1) {
          const cluster = active[Math.floor(random() * active.length)];
          if (cluster && !cluster.pending) {
            startChange(cluster, tally).catch((error: unknown) => {
              progress(`simulate  ${cluster.id}: change failed: ${error instanceof Error ? error.message : String(error)}`);
              if (cluster.pending) {
                tally.lost += 1;
                tally.failedToStart += 1;
              }
              cluster.pending = undefined;
            });
            break;
          }
        }
        if (Date.now() - lastProgress >= PROGRESS_EVERY_MS) {
          lastProgress = Date.now();
          const { latencies } = tally;
          progress(
            `simulate  ${label}${((lastProgress - began) / 1000).toFixed(0)} s: ${tally.started} started, ${latencies.length} written, ${clusters.filter((c) => c.pending).length} in flight, ${tally.lost} lost; p50 ${percentile(latencies, 50) ?? '-'} ms p99 ${percentile(latencies, 99) ?? '-'} ms`,
          );
        }
      }
      // Let the changes in flight finish (or time out).
      while (clusters.some((cluster) => cluster.pending)) {
        timeouts();
        await delay(100);
      }
      return { tally, seconds: (Date.now() - began) / 1000 };
    };

    // Measurement.
    const kubeBefore = sumRequestCounts(await Promise.all(plane.clusters.map((cluster) => cluster.observe?.requestCounts())));
    const accessFrom = new Map(await Promise.all(plane.clusters.map(async (cluster) => [cluster.id, (await cluster.observe?.accessLog(Number.MAX_SAFE_INTEGER))?.length ?? 0] as const)));
    Object.assign(dynamo, { operations: 0, reads: 0, writes: 0, readUnits: 0, writeUnits: 0, byCommand: {}, byCaller: {} });
    if (cpuAccounting) cpu.enable();
    const probe = await startProbe(plane);
    measuring = true;
    const { tally: main, seconds: measuredSeconds } = await runWindow(options.rate, options.durationMs, '');
    measuring = false;
    const processes = await probe.read();
    const kubeAfter = sumRequestCounts(await Promise.all(plane.clusters.map((cluster) => cluster.observe?.requestCounts())));
    const kubeByCaller = await kubernetesCallers(plane, accessFrom);
    // The window's DynamoDB calls; the sweeps' come after.
    const dynamoOfWindow = { ...dynamo, byCommand: { ...dynamo.byCommand }, byCaller: structuredClone(dynamo.byCaller) };
    cpu.flush();
    const functionsCpuMs = chargeCpu(byFunction, owned);

    // The sweeps, after the window (their requests and invocations are their own figures).
    const sweeps = sweepCluster ? await runSweeps(sweepInputOf(plane, sweepCluster, options, (functionName) => invocationCounts[`${functionName}@${sweepCluster.id}`] ?? 0)) : null;

    // Late changes written during the sweeps were seen by the watch; one last look for the rest.
    await readBack();
    const unwrittenAtEnd = clusters.reduce((sum, cluster) => sum + cluster.late.filter((late) => late.tally === main).length, 0);
    // As at that look: the rate search's windows may see more of the window's late changes written.
    const mainLateLatencies = [...main.lateLatencies];

    const rateSearch = options.findRate
      ? await searchRate(options.findRate, options.rate, async (rate, windowMs) => {
          // The last window's late changes are written, or given up on, and the bus has
          // delivered what it holds (hints waiting for a redelivery), before the next.
          await waitUntil(() => clusters.every((cluster) => cluster.late.length === 0), CHANGE_TIMEOUT_MS);
          await Promise.race([plane!.bus.drain(), delay(CHANGE_TIMEOUT_MS)]);
          await delay(SEARCH_PAUSE_MS);
          const windowProbe = await startProbe(plane!);
          const { tally, seconds } = await runWindow(rate, windowMs, `rate ${rate}/s: `);
          const read = await windowProbe.read();
          const window = searchWindowOf(rate, windowMs, tally, seconds, read);
          progress(
            `simulate  rate ${rate}/s: ${window.passed ? 'passed' : 'failed'} — ${window.written} written, ${window.late} late, ${window.refused} refused of ${window.started} (offered ${window.offered}); p99 ${window.latencyMs.p99 ?? '-'} ms; plane loop delay p99 ${window.loopDelayMs.plane.p99.toFixed(0)} ms`,
          );
          return window;
        }, progress)
      : undefined;

    const completed = main.latencies.length;
    const floor = floorOfMix(main.completedByKind);
    const per = (count: number): number => (completed === 0 ? 0 : count / completed);
    const kubernetesRequests = kubeAfter.requests - kubeBefore.requests;
    const byMethod = Object.fromEntries(Object.entries(kubeAfter.byMethod).map(([method, count]) => [method, count - (kubeBefore.byMethod[method] ?? 0)]));
    const invocationsTotal = Object.values(byFunction).reduce((sum, entry) => sum + entry.invocations, 0);
    const shards = Number(process.env.FORWARDER_SHARDS ?? options.shards ?? 0);
    const forwarderDynamo = forwarderDynamoDbOf(dynamoOfWindow.byCaller.forwarder, (Math.max(1, shards) * measuredSeconds) / 60, completed);
    return {
      version: 1,
      startedAt: startedAt.toISOString(),
      options: { clusters: options.clusters, latencyMs: options.latencyMs, durationMs: options.durationMs, rate: options.rate, seed: options.seed, shards, serverProcesses: plane.clusterHosts ? serverProcesses : 0, cpuAccounting },
      setup: { seconds: setupSeconds, startSeconds, clustersSetUp: active.length },
      changes: {
        started: main.started,
        completed,
        lost: main.lost,
        lateWritten: mainLateLatencies.length,
        lateLatencyMs: medianAndMax(mainLateLatencies),
        unwrittenAtEnd,
        failedToStart: main.failedToStart,
        byKind: main.completedByKind,
        measuredSeconds,
        perSecond: completed / measuredSeconds,
        offeredPerSecond: options.rate,
      },
      latencyMs: { p50: percentile(main.latencies, 50) ?? null, p99: percentile(main.latencies, 99) ?? null, max: percentile(main.latencies, 100) ?? null, floor: options.latencyMs * floor.kubernetesRequests },
      // The hint's floor: the forwarder's one PutEvents after the watch event, no Kubernetes request in between.
      forwarderLagMs: { p50: percentile(main.lags, 50) ?? null, p99: percentile(main.lags, 99) ?? null, floor: 0 },
      kubernetes: { requests: kubernetesRequests, watches: kubeAfter.watches - kubeBefore.watches, byMethod, byCaller: kubeByCaller, perChange: per(kubernetesRequests), floorPerChange: floor.kubernetesRequests },
      dynamoDb: {
        ...dynamoOfWindow,
        perChange: per(dynamoOfWindow.operations),
        floorPerChange: floor.dynamoDbOperations,
        functionsPerChange: per(dynamoOfWindow.operations - forwarderDynamo.operations),
        forwarder: forwarderDynamo,
      },
      invocations: { total: invocationsTotal, perChange: per(invocationsTotal), floorPerChange: floor.invocations, byFunction },
      cpu: cpuOf(processes, cpuAccounting ? functionsCpuMs : null, per),
      loopDelayMs: { plane: processes.planeLoopDelayMs, servers: processes.serversLoopDelayMs, serversWorst: worstLoopDelay(processes.serversLoopDelayMs ?? []) },
      events: { hintEntries: eventIds.size, perChange: per(eventIds.size) },
      forwarderEvents,
      functionWarnings,
      logs: { bytes: logBytes, perChange: per(logBytes) },
      memory: memoryOf(memoryBefore, memoryAfterStart, serversAfterStart, options.clusters),
      floors: { ...CHANGE_FLOORS },
      sweeps,
      ...(rateSearch ? { rateSearch } : {}),
    };
  } finally {
    measuring = false;
    cpu.disable();
    abort.abort();
    await plane?.stop();
    for (const restore of restoreStreams) restore();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Of a logged error's message, what names a warning (the rest is usually ids and objects). */
const WARNING_CAUSE_CHARS = 120;

/** A function's JSON log line at WARN or above as `<level> <message>[: <error's message>]`; undefined for the rest. */
export function warningOf(line: string): string | undefined {
  if (!/^\{"level":"(WARN|ERROR|CRITICAL)"/.test(line)) return undefined;
  try {
    const { level, message, error } = JSON.parse(line) as { level?: string; message?: unknown; error?: { message?: unknown } };
    const cause = typeof error?.message === 'string' ? `: ${error.message.slice(0, WARNING_CAUSE_CHARS)}` : '';
    return `${level} ${typeof message === 'string' ? message : JSON.stringify(message)}${cause}`;
  } catch {
    return undefined;
  }
}

/** The plane's rss growth over the start, per cluster, and the API servers' processes' rss when they run apart. */
function memoryOf(before: NodeJS.MemoryUsage, afterStart: NodeJS.MemoryUsage, servers: readonly HostStats[] | undefined, clusters: number): SimulationReport['memory'] {
  const perClusterBytes = Math.max(0, (afterStart.rss - before.rss) / clusters);
  const base = { rssBeforeBytes: before.rss, rssAfterStartBytes: afterStart.rss, heapBeforeBytes: before.heapUsed, heapAfterStartBytes: afterStart.heapUsed, perClusterBytes };
  if (!servers) {
    return { ...base, note: 'rss growth from before the start to every forwarder watching, per cluster; the embedded API servers share the process, so this bounds the forwarder from above' };
  }
  const serversRssBytes = servers.reduce((sum, host) => sum + host.rssBytes, 0);
  return {
    ...base,
    serversRssBytes,
    serversPerClusterBytes: serversRssBytes / clusters,
    note: "the plane's process: rss growth from before the start to every forwarder watching, per cluster (the API servers run apart: serversRssBytes is their processes' rss after the start)",
  };
}

/** The window's CPU figures; `functionsMs` null when the invocations were not timed. */
function cpuOf(processes: { planeCpuMs: number; serversCpuMs: number | null }, functionsMs: number | null, per: (count: number) => number): NonNullable<SimulationReport['cpu']> {
  const { planeCpuMs, serversCpuMs } = processes;
  return {
    planeMs: planeCpuMs,
    functionsMs,
    otherMs: functionsMs === null ? null : Math.max(0, planeCpuMs - functionsMs),
    serversMs: serversCpuMs,
    perChangeMs: { plane: per(planeCpuMs), functions: functionsMs === null ? null : per(functionsMs), servers: serversCpuMs === null ? null : per(serversCpuMs) },
    note: CPU_NOTE,
  };
}

const CPU_NOTE =
  "CPU time (user + system) over the measured window. plane: the plane's process (functions, forwarders, bus, webhook and the simulation's own driver); functions: the synchronous slices run for the bus targets' invocations (scripts/simulate/cpu-accounting.ts); servers: the API servers' processes, when they run apart";

/** Sums each invocation's CPU into its function's figures; returns the total in milliseconds. */
function chargeCpu(byFunction: Record<string, FunctionCount>, owned: ReadonlyArray<{ functionName: string; owner: CpuOwner }>): number {
  const perInvocation = new Map<string, number[]>();
  for (const { functionName, owner } of owned) {
    const list = perInvocation.get(functionName) ?? [];
    list.push(owner.cpuMicros / 1000);
    perInvocation.set(functionName, list);
  }
  let total = 0;
  for (const [functionName, list] of perInvocation) {
    const entry = byFunction[functionName];
    if (!entry) continue;
    entry.cpuMs = list.reduce((sum, ms) => sum + ms, 0);
    entry.cpuMsPerInvocation = { p50: percentile(list, 50) ?? null, p99: percentile(list, 99) ?? null };
    total += entry.cpuMs;
  }
  return total;
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await delay(250);
}

function searchWindowOf(rate: number, windowMs: number, tally: WindowTally, seconds: number, read: Awaited<ReturnType<ProcessProbe['read']>>): RateSearchWindow {
  const offered = Math.floor((rate * windowMs) / 1000);
  const late = tally.lost - tally.failedToStart;
  const written = tally.latencies.length;
  return {
    rate,
    seconds,
    offered,
    started: tally.started,
    written,
    late,
    refused: tally.failedToStart,
    // A window whose ticks often found every tried cluster busy did not offer its rate.
    passed: tally.lost === 0 && tally.started >= OFFERED_SHARE * offered,
    latencyMs: { p50: percentile(tally.latencies, 50) ?? null, p99: percentile(tally.latencies, 99) ?? null },
    loopDelayMs: { plane: read.planeLoopDelayMs, serversWorst: worstLoopDelay(read.serversLoopDelayMs ?? []) },
    cpuPerChangeMs: { plane: written === 0 ? null : read.planeCpuMs / written, servers: read.serversCpuMs === null || written === 0 ? null : read.serversCpuMs / written },
  };
}

/**
 * The rate search: windows from `start` as `nextRate` says, each through `runWindow`, until
 * it is done or the next window (with its drain) would overrun the time budget.
 */
async function searchRate(
  search: NonNullable<SimulationOptions['findRate']>,
  start: number,
  runWindow: (rate: number, windowMs: number) => Promise<RateSearchWindow>,
  progress: (line: string) => void,
): Promise<RateSearchReport> {
  const limits: RateSearchLimits = { ...DEFAULT_RATE_SEARCH, ...(search.max === undefined ? {} : { max: search.max }), start };
  const began = Date.now();
  const windows: RateSearchWindow[] = [];
  let stoppedBy: RateSearchReport['stoppedBy'] = 'bracket';
  for (let rate = nextRate([], limits); rate !== undefined; rate = nextRate(windows, limits)) {
    // The waits before a window (late changes, the bus) and its drain: 60 s each at most.
    if (Date.now() - began + search.windowMs + 3 * CHANGE_TIMEOUT_MS + SEARCH_PAUSE_MS > search.budgetMs) {
      stoppedBy = 'budget';
      progress(`simulate  rate search: the time budget (${search.budgetMs / 60_000} min) leaves no room for a window at ${rate}/s`);
      break;
    }
    windows.push(await runWindow(rate, search.windowMs));
  }
  if (stoppedBy === 'bracket' && windows.length >= limits.maxTrials) stoppedBy = 'windows';
  const { passed, failed } = bracketOf(windows);
  return { windowMs: search.windowMs, budgetMs: search.budgetMs, limits, windows, highestPassed: passed ?? null, lowestFailed: failed ?? null, stoppedBy, seconds: (Date.now() - began) / 1000 };
}
