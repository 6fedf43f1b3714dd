/**
 * The fleet simulation's two sweeps, run in one cluster of the fleet after the measured
 * window, under the same injected latency and the functions' client-side rate limit:
 *
 * - **Drift fan-out.** One runtime with `fanOut` pinned InferenceServices is edited; the
 *   figure is the time until every one of them shows RuntimeDrifted and the requests
 *   drift-check made for it, beside the floor (one list, one read of the pinned revision,
 *   one status write per InferenceService, at the rate limit after its burst).
 * - **Revision GC.** `gcRevisions` old revisions of that runtime appear at once (as after
 *   many sync tokens), then revision-gc sweeps the cluster as its five-minute schedule
 *   would (no hint wakes it); the figure is the time until that sweep has marked every
 *   one past the retention, and the requests revision-gc
 *   made, beside the floor (list the revisions, list the InferenceServices, one mark per
 *   collectable revision). Deletion follows the marks a grace period (24 h) later and is
 *   not part of the run.
 *
 * Requests are told apart by who made them (the API server's access log names each
 * function's ServiceAccount).
 */
import type { ClusterObservation } from '../../local/cluster-host';
import { Resources } from '../../shared/domain/model/resources';
import type { ClusterClient, KubeObject } from '../../shared/ports/cluster';
import { buildControllerRevision } from '../../shared/domain/runtime/revision';
import { Annotation, Label, RuntimeKind } from '../../shared/domain/vocabulary';

export const FAN_OUT_RUNTIME = 'sim-fanout';
const FAN_OUT_PREFIX = 'fan-';
const SWEEP_TIMEOUT_MS = 600_000;
const POLL_MS = 250;
/** InferenceServices created at once while setting up the fan-out. */
const CREATE_CONCURRENCY = 10;

export interface SweepCluster {
  id: string;
  client: ClusterClient;
  /** Its API server's counters and access log, wherever it runs. */
  observe: ClusterObservation;
}

export interface SweepLimits {
  latencyMs: number;
  /** The functions' client-side rate limit per cluster (KUBE_API_QPS, KUBE_API_BURST). */
  qps: number;
  burst: number;
}

export interface SweepFigure {
  /** InferenceServices updated (fan-out) or revisions marked (GC). */
  items: number;
  /** Until the last one was seen written; null when it was not within the wait. */
  seconds: number | null;
  /** Requests of the function doing the sweep, by verb. */
  requests: number;
  byVerb: Record<string, number>;
  /** Every request the cluster received meanwhile, all functions and the forwarder included. */
  clusterRequests: number;
  /** Invocations of the sweep's function for hints of this cluster. */
  invocations: number;
  floorRequests: number;
  /** The floor's requests at the rate limit after its burst, and at least one round trip. */
  floorSeconds: number;
}

export interface SweepReport {
  cluster: string;
  qps: number;
  burst: number;
  latencyMs: number;
  driftFanOut: SweepFigure & { inferenceServices: number };
  revisionGc: SweepFigure & { revisionsCreated: number; expectedMarks: number };
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The least time `requests` take under the rate limit (a full bucket to start with), and
 * at least `roundTrips` requests one after another at the injected latency.
 */
export function floorSecondsOf(requests: number, roundTrips: number, limits: SweepLimits): number {
  const throttled = Math.max(0, requests - limits.burst) / limits.qps;
  return Math.max(throttled, (roundTrips * limits.latencyMs) / 1000);
}

function isDrifted(object: KubeObject): boolean {
  const conditions = ((object.status ?? {}) as { conditions?: Array<{ type?: string; status?: string }> }).conditions ?? [];
  return conditions.some((condition) => condition.type === 'RuntimeDrifted' && condition.status === 'True');
}

const pinnedOf = (object: KubeObject): string => ((object.status ?? {}) as { pinnedRevisionName?: string }).pinnedRevisionName ?? '';

/** The access records `function` made since `from` (an index into the log). */
async function requestsOf(cluster: SweepCluster, from: number, functionName: string): Promise<{ requests: number; byVerb: Record<string, number> }> {
  const byVerb: Record<string, number> = {};
  let requests = 0;
  for (const record of (await cluster.observe.accessLog(from)).records) {
    if (!record.username.includes(functionName) || record.verb === 'watch') continue;
    requests += 1;
    byVerb[record.verb] = (byVerb[record.verb] ?? 0) + 1;
  }
  return { requests, byVerb };
}

const totalRequests = async (cluster: SweepCluster): Promise<number> => (await cluster.observe.requestCounts()).requests;
/** Where the access log ends now: the index the next records will start at. */
const logEnd = async (cluster: SweepCluster): Promise<number> => (await cluster.observe.accessLog(Number.MAX_SAFE_INTEGER)).length;

/**
 * Creates the fan-out runtime and its `count` InferenceServices in `namespace`, and waits
 * until all are pinned. Setup: not measured.
 */
export async function prepareFanOut(
  cluster: SweepCluster,
  namespace: string,
  count: number,
  build: { runtimeSpec: (edit: number) => Record<string, unknown>; inferenceService: (name: string, runtime: string) => KubeObject; ensure: (type: (typeof Resources)[keyof typeof Resources], object: KubeObject) => Promise<void> },
  progress: (line: string) => void,
): Promise<void> {
  await build.ensure(Resources.servingRuntimes, { apiVersion: 'ome.io/v1beta1', kind: 'ServingRuntime', metadata: { name: FAN_OUT_RUNTIME, namespace }, spec: build.runtimeSpec(0) });
  const names = Array.from({ length: count }, (_, index) => `${FAN_OUT_PREFIX}${index + 1}`);
  const queue = [...names];
  await Promise.all(
    Array.from({ length: Math.min(CREATE_CONCURRENCY, names.length) }, async () => {
      for (let name = queue.shift(); name; name = queue.shift()) await build.ensure(Resources.inferenceServices, build.inferenceService(name, FAN_OUT_RUNTIME));
    }),
  );
  const deadline = Date.now() + SWEEP_TIMEOUT_MS;
  for (let polls = 0; ; polls += 1) {
    const pinned = (await fanOutServices(cluster, namespace)).filter((object) => pinnedOf(object) !== '').length;
    if (pinned >= count) return;
    if (Date.now() > deadline) throw new Error(`${cluster.id}: ${pinned} of ${count} fan-out InferenceServices pinned within ${SWEEP_TIMEOUT_MS / 1000} s`);
    if (polls % 5 === 0) progress(`simulate  fan-out setup in ${cluster.id}: ${pinned}/${count} pinned`);
    await delay(2_000);
  }
}

async function fanOutServices(cluster: SweepCluster, namespace: string): Promise<KubeObject[]> {
  const page = await cluster.client.list<KubeObject>(Resources.inferenceServices, { namespace });
  return page.items.filter((object) => object.metadata.name.startsWith(FAN_OUT_PREFIX));
}

async function revisionsOfFanOut(cluster: SweepCluster, omeNamespace: string): Promise<KubeObject[]> {
  const page = await cluster.client.list<KubeObject>(Resources.controllerRevisions, { namespace: omeNamespace, labelSelector: `${Label.runtimeOf}=${FAN_OUT_RUNTIME}` });
  return page.items;
}

/**
 * Runs both sweeps in `cluster` (prepared with `prepareFanOut`) and returns their figures.
 * `invocationsOf` counts a function's invocations for this cluster's hints started so far.
 */
export async function runSweeps(input: {
  cluster: SweepCluster;
  namespace: string;
  omeNamespace: string;
  fanOut: number;
  gcRevisions: number;
  /** Revisions GC keeps besides the referenced ones (RUNTIME_REVISION_RETENTION). */
  retention: number;
  limits: SweepLimits;
  runtimeSpec: (edit: number) => Record<string, unknown>;
  invocationsOf: (functionName: string) => number;
  /** Runs revision-gc's sweep of this cluster, as its schedule does for every cluster. */
  sweepRevisions: () => Promise<unknown>;
  progress: (line: string) => void;
}): Promise<SweepReport> {
  const { cluster, namespace, omeNamespace, limits, progress } = input;

  // Drift fan-out: one edit, every InferenceService of the runtime drifts.
  const fanFrom = await logEnd(cluster);
  const fanRequestsBefore = await totalRequests(cluster);
  const fanInvocationsBefore = input.invocationsOf('drift-check');
  const fanBegan = Date.now();
  await cluster.client.patch(Resources.servingRuntimes, namespace, FAN_OUT_RUNTIME, { spec: input.runtimeSpec(1) }, { type: 'merge' });
  let fanSeconds: number | null = null;
  let drifted = 0;
  for (let lastProgress = fanBegan; Date.now() - fanBegan < SWEEP_TIMEOUT_MS; ) {
    drifted = (await fanOutServices(cluster, namespace)).filter(isDrifted).length;
    if (drifted >= input.fanOut) {
      fanSeconds = (Date.now() - fanBegan) / 1000;
      break;
    }
    if (Date.now() - lastProgress >= 5_000) {
      lastProgress = Date.now();
      progress(`simulate  drift fan-out in ${cluster.id}: ${drifted}/${input.fanOut} drifted (${((lastProgress - fanBegan) / 1000).toFixed(0)} s)`);
    }
    await delay(POLL_MS);
  }
  const fanRequests = await requestsOf(cluster, fanFrom, 'drift-check');
  const fanFloor = input.fanOut + 2;
  const driftFanOut = {
    inferenceServices: input.fanOut,
    items: drifted,
    seconds: fanSeconds,
    ...fanRequests,
    clusterRequests: (await totalRequests(cluster)) - fanRequestsBefore,
    invocations: input.invocationsOf('drift-check') - fanInvocationsBefore,
    floorRequests: fanFloor,
    // The list, the revision read, then the writes side by side.
    floorSeconds: floorSecondsOf(fanFloor, 3, limits),
  };
  progress(`simulate  drift fan-out in ${cluster.id}: ${drifted}/${input.fanOut} drifted in ${fanSeconds === null ? '-' : fanSeconds.toFixed(1)} s, ${fanRequests.requests} drift-check requests (floor ${fanFloor})`);

  // Revision GC: old revisions appear at once; the cluster's sweep marks them.
  const gcFrom = await logEnd(cluster);
  const gcRequestsBefore = await totalRequests(cluster);
  const gcInvocationsBefore = input.invocationsOf('revision-gc');
  const gcBegan = Date.now();
  for (let index = 0; index < input.gcRevisions; index += 1) {
    const revision = buildControllerRevision({ kind: RuntimeKind.namespaced, namespace, runtimeName: FAN_OUT_RUNTIME, mergedSpec: input.runtimeSpec(10_000 + index), omeNamespace });
    await cluster.client.create(Resources.controllerRevisions, revision).catch(() => undefined);
  }
  const referenced = new Set((await fanOutServices(cluster, namespace)).map(pinnedOf).filter(Boolean));
  const all = await revisionsOfFanOut(cluster, omeNamespace);
  const expectedMarks = Math.max(0, all.filter((revision) => !referenced.has(revision.metadata.name)).length - input.retention);
  const sweep = input.sweepRevisions().catch((error: unknown) => progress(`simulate  revision GC sweep failed: ${error instanceof Error ? error.message : String(error)}`));
  let marked = 0;
  let gcSeconds: number | null = null;
  for (let lastProgress = gcBegan; Date.now() - gcBegan < SWEEP_TIMEOUT_MS; ) {
    marked = (await revisionsOfFanOut(cluster, omeNamespace)).filter((revision) => revision.metadata.annotations?.[Annotation.gcEligibleSince] !== undefined).length;
    if (marked >= expectedMarks) {
      gcSeconds = (Date.now() - gcBegan) / 1000;
      break;
    }
    if (Date.now() - lastProgress >= 5_000) {
      lastProgress = Date.now();
      progress(`simulate  revision GC in ${cluster.id}: ${marked}/${expectedMarks} marked (${((lastProgress - gcBegan) / 1000).toFixed(0)} s)`);
    }
    await delay(POLL_MS);
  }
  await sweep;
  const gcRequests = await requestsOf(cluster, gcFrom, 'revision-gc');
  const gcFloor = 2 + expectedMarks;
  const revisionGc = {
    revisionsCreated: input.gcRevisions,
    expectedMarks,
    items: marked,
    seconds: gcSeconds,
    ...gcRequests,
    clusterRequests: (await totalRequests(cluster)) - gcRequestsBefore,
    // The sweep invoked for the cluster, and any hint invocation besides it.
    invocations: 1 + input.invocationsOf('revision-gc') - gcInvocationsBefore,
    floorRequests: gcFloor,
    // The two lists side by side, then the marks.
    floorSeconds: floorSecondsOf(gcFloor, 2, limits),
  };
  progress(`simulate  revision GC in ${cluster.id}: ${marked}/${expectedMarks} marked in ${gcSeconds === null ? '-' : gcSeconds.toFixed(1)} s, ${gcRequests.requests} revision-gc requests (floor ${gcFloor})`);
  return { cluster: cluster.id, qps: limits.qps, burst: limits.burst, latencyMs: limits.latencyMs, driftFanOut, revisionGc };
}
