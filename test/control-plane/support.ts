/**
 * End-to-end helpers: a control plane on a temporary data directory whose bus targets are
 * observed, the real kubectl against its clusters, and the seed's runtime and
 * InferenceService as a user applies them.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { failedMessageIds, isSqsEvent } from '../../local/bus';
import type { TargetHandler } from '../../local/bus';
import { startControlPlane } from '../../local/control-plane';
import type { ControlPlane, ControlPlaneOptions } from '../../local/control-plane';
import type { EventBridgeEnvelope, HintDetail } from '../../shared/domain/hint-event';
import { buildSeedRuntimeSpec } from '../runtime/fixtures/seed-runtime';
import { TEST_CLUSTER } from '../support/test-cluster';

const execFileAsync = promisify(execFile);

export const NS = 'llama-demo';
export const RUNTIME = 'sglang-llama-3-2-3b';
export const ISVC = 'llama-3-2-3b-instruct';
/** The seed's revision names for the runtime with `--mem-frac=0.9` and `0.85`. */
export const REV_090 = 'r-llama-demo-sglang-llama-3-2-3b-590753e8';
export const REV_085 = 'r-llama-demo-sglang-llama-3-2-3b-af9539ac';

/**
 * Starting takes ~20 s on an idle two-core machine (most of it DynamoDB Local's JVM) and
 * several times that while other suites build bundles or run Java alongside.
 */
export const START_TIMEOUT_MS = 240_000;

/** 180 s of visibility timeout become 1.8 s: redeliveries within a test's patience. */
export const BUS_TIME_SCALE = 0.01;

export interface Delivery {
  functionName: string;
  /** The event's id: the same for the bus's duplicates and retries of one event. */
  eventId: string;
  detail: HintDetail;
  /** `ok` when the handler was done with it; otherwise why it failed (the queue redelivers it). */
  outcome: 'ok' | string;
}

export interface ObservedControlPlane {
  plane: ControlPlane;
  dataDir: string;
  /** Every delivery the bus made to a function, duplicates included, in order. */
  deliveries: Delivery[];
  stop(): Promise<void>;
}

export interface ObserveOptions {
  /**
   * While this answers true for a function, its invocations fail every hint as a function
   * that cannot reach its cluster does (all records in `batchItemFailures`), without
   * running the handler.
   */
  unreachable?: (functionName: string) => boolean;
}

/** Starts the control plane with every target wrapped to record its deliveries. */
export async function startObservedControlPlane(options: Partial<ControlPlaneOptions> = {}, observe: ObserveOptions = {}): Promise<ObservedControlPlane> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ome-control-plane-'));
  const deliveries: Delivery[] = [];
  const lines: string[] = [];
  // A hint queue's invocation is a batch: one delivery per record, failed when the handler
  // threw or named the record in batchItemFailures (the queue redelivers it).
  const wrapTarget = (functionName: string, target: TargetHandler | undefined): TargetHandler | undefined =>
    target &&
    (async (event, context) => {
      const records = isSqsEvent(event) ? event.Records.map((record) => ({ messageId: record.messageId, hint: JSON.parse(record.body) as EventBridgeEnvelope<HintDetail> })) : [];
      const record = (failed: Set<string>, why: string): void => {
        for (const { messageId, hint } of records) {
          const { id: eventId, detail } = hint;
          if (detail && typeof detail === 'object' && 'uid' in detail) deliveries.push({ functionName, eventId, detail, outcome: failed.has(messageId) ? why : 'ok' });
        }
      };
      if (observe.unreachable?.(functionName)) {
        record(new Set(records.map((entry) => entry.messageId)), 'cluster unreachable');
        return { batchItemFailures: records.map((entry) => ({ itemIdentifier: entry.messageId })) };
      }
      try {
        const result = await target(event, context);
        record(failedMessageIds(records, { threw: false, result }, true), 'reported in batchItemFailures');
        return result;
      } catch (error) {
        record(new Set(records.map((entry) => entry.messageId)), error instanceof Error ? `${error.name}: ${error.message}` : String(error));
        throw error;
      }
    });
  let plane: ControlPlane;
  try {
    plane = await startControlPlane({
      dataDir,
      schedules: false,
      functionLogLevel: 'ERROR',
      workloadReadyDelayMs: 20,
      busTimeScale: BUS_TIME_SCALE,
      log: (line) => lines.push(line),
      wrapTarget,
      // The real project runs the plane on a real kube-apiserver (test/support/test-cluster.ts).
      ...(TEST_CLUSTER === 'real' ? { realCluster: {} } : {}),
      ...options,
    });
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw new Error(`control plane did not start: ${String(error)}\n${lines.join('\n')}`);
  }
  return {
    plane,
    dataDir,
    deliveries,
    async stop() {
      await plane.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs the real kubectl against `kubeconfigPath`; resolves with its stdout. */
export async function kubectl(kubeconfigPath: string, args: string[], stdin?: string): Promise<string> {
  const child = execFileAsync('kubectl', ['--kubeconfig', kubeconfigPath, ...args], { timeout: 30_000 });
  if (stdin !== undefined) {
    child.child.stdin?.end(stdin);
  }
  const { stdout } = await child;
  return stdout;
}

/** The seed's namespace, runtime (with `memFrac`) and a pinned InferenceService, as one YAML stream. */
export function seedManifests(memFrac: '0.9' | '0.85' = '0.9', isvcNames: string[] = [ISVC]): string {
  const docs: unknown[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
    { apiVersion: 'ome.io/v1beta1', kind: 'ServingRuntime', metadata: { name: RUNTIME, namespace: NS }, spec: buildSeedRuntimeSpec(memFrac) },
    ...isvcNames.map((name) => ({
      apiVersion: 'ome.io/v1beta1',
      kind: 'InferenceService',
      metadata: { name, namespace: NS },
      spec: {
        model: { name: 'llama-3-2-3b-instruct' },
        runtime: { name: RUNTIME, kind: 'ServingRuntime', autoSync: false },
        engine: { minReplicas: 1, maxReplicas: 1 },
      },
    })),
  ];
  return docs.map((doc) => stringify(doc)).join('---\n');
}

/** Applies `manifests` with `kubectl apply -f -`. */
export function kubectlApply(kubeconfigPath: string, manifests: string): Promise<string> {
  return kubectl(kubeconfigPath, ['apply', '-f', '-'], manifests);
}

/** `status.pinnedRevisionName` of an InferenceService, read with kubectl's jsonpath. */
export function pinnedRevision(kubeconfigPath: string, name = ISVC): Promise<string> {
  return kubectl(kubeconfigPath, ['get', 'inferenceservice', name, '-n', NS, '-o', 'jsonpath={.status.pinnedRevisionName}']);
}

/** Polls `read` until `accept` holds or `timeoutMs` passes; resolves with the last value. */
export async function waitFor<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!accept(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    value = await read();
  }
  return value;
}

/** Lets the forwarder's batches and the bus's deliveries (and what they cause) settle. */
export async function settle(plane: ControlPlane, quietMs = 1_500): Promise<void> {
  await plane.bus.drain();
  await new Promise((resolve) => setTimeout(resolve, quietMs));
  await plane.bus.drain();
}

/** The distinct events (by id) among `deliveries`, each once, in order of first delivery. */
export function distinctEvents(deliveries: Delivery[]): Delivery[] {
  const seen = new Set<string>();
  return deliveries.filter((d) => !seen.has(d.eventId) && seen.add(d.eventId));
}

/** Deliveries whose handler returned (not those it threw on and the bus retried). */
export function completed(deliveries: Delivery[]): Delivery[] {
  return deliveries.filter((d) => d.outcome === 'ok');
}

/** Deliveries to `functionName` about InferenceService `name` in `clusterId`. */
export function deliveriesOf(observed: ObservedControlPlane, functionName: string, name: string, clusterId = 'local'): Delivery[] {
  return observed.deliveries.filter(
    (d) => d.functionName === functionName && d.detail.kind === 'InferenceService' && d.detail.name === name && d.detail.clusterId === clusterId,
  );
}

/** What the retried deliveries threw, for a failing assertion's message. */
export function retryReasons(observed: ObservedControlPlane): string[] {
  return observed.deliveries.filter((d) => d.outcome !== 'ok').map((d) => `${d.functionName} ${d.detail.clusterId}/${d.detail.name}: ${d.outcome}`);
}
