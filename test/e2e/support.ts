/**
 * End-to-end walks of the user guides: the control plane started as `npm start` starts it,
 * the real `kubectl` (with this repository's `bin/` on PATH, so `kubectl ome` runs the
 * plugin) in a working directory holding the guide's files, and polling with a deadline
 * for every state that arrives eventually.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FUNCTION_SERVICE_ACCOUNTS, SERVICE_ACCOUNT_NAMESPACE } from '../../infra/identities';
import { eventsOfInvocation } from '../../local/bus';
import type { TargetHandler } from '../../local/bus';
import { startControlPlane } from '../../local/control-plane';
import type { ControlPlane } from '../../local/control-plane';
import type { PruneRecord } from '../../local/cluster';
import type { ClusterMode } from '../../shared/domain/cluster-mode';
import type { EventBridgeEnvelope, HintDetail } from '../../shared/domain/hint-event';
import type { KubeObject } from '../../shared/ports/cluster';
import { TEST_CLUSTER } from '../support/test-cluster';
import { serveUpstreamWebhook, startUpstreamController, type UpstreamController, type UpstreamStep } from '../support/upstream-controller';

const BIN_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin');

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A hint a function finished handling (returned from, not threw on). */
export interface HandledHint {
  functionName: string;
  detail: HintDetail;
}

/** The modes both guides are walked in: the plane as the controller, and beside upstream's (its stand-in). */
export const WALK_MODES: readonly ClusterMode[] = ['standalone', 'delegate'];

/**
 * In delegate mode: the stand-in for upstream OME's controller and webhooks running in the
 * embedded cluster, which is registered `delegate`. The plane's functions then only report.
 */
export interface UpstreamInCluster {
  controller: UpstreamController;
  stop(): Promise<void>;
}

/**
 * Starts the stand-in for upstream's controller and webhooks in `plane`'s first cluster;
 * each step it takes is reported to `onHandled` as the hint the plane's function taking the
 * same step in standalone mode would have handled.
 */
export async function startUpstreamInCluster(plane: ControlPlane, onHandled?: (functionName: UpstreamStep, object: KubeObject) => void): Promise<UpstreamInCluster> {
  const client = plane.clusters[0]?.client;
  if (!client) throw new Error('delegate walks need an embedded cluster');
  const controller = startUpstreamController(client, { omeNamespace: 'ome', ...(onHandled ? { onHandled } : {}) });
  const real = plane.clusters[0]?.real;
  const webhook = await serveUpstreamWebhook(client, 'ome', real ? { ...real.webhookTls, caData: real.caData } : undefined);
  return {
    controller,
    async stop() {
      await controller.stop();
      await webhook.stop();
    },
  };
}

/**
 * What the plane's functions did to the cluster, from its access log (a real server's audit
 * log): they reach it as their ServiceAccounts (kubectl comes as the operator, the stand-in
 * in-process or as the operator, a real cluster's controllers as theirs). `reads` counts
 * their GETs of InferenceServices; `writes` lists every other verb, as `user verb target ns/name`.
 */
export function planeRequests(plane: ControlPlane): { inferenceServiceReads: number; writes: string[] } {
  const planeUsers = new Set(Object.values(FUNCTION_SERVICE_ACCOUNTS).map((account) => `system:serviceaccount:${SERVICE_ACCOUNT_NAMESPACE}:${account}`));
  const records = (plane.clusters[0]?.accessLog?.() ?? []).filter((record) => planeUsers.has(record.username) && record.allowed);
  return {
    inferenceServiceReads: records.filter((record) => record.verb === 'get' && record.target === 'inferenceservices.ome.io').length,
    writes: records.filter((record) => !['get', 'list', 'watch'].includes(record.verb)).map((record) => `${record.username} ${record.verb} ${record.target} ${record.namespace}/${record.name}`),
  };
}

/** The hint detail a step of the stand-in stands for: the object as its reconcile read it. */
export function handledDetailOf(clusterId: string, object: KubeObject): HintDetail {
  return {
    clusterId,
    apiVersion: object.apiVersion,
    kind: object.kind,
    ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
    name: object.metadata.name,
    uid: object.metadata.uid ?? '',
    resourceVersion: object.metadata.resourceVersion ?? '',
    ...(object.metadata.generation === undefined ? {} : { generation: object.metadata.generation }),
    change: 'modified',
    changed: {},
  } as unknown as HintDetail;
}

export interface Walkthrough {
  mode: ClusterMode;
  /** Delegate mode only: upstream's stand-in. */
  upstream?: UpstreamInCluster;
  plane: ControlPlane;
  /**
   * Every hint a function handled, in order. Only observed: the targets run unchanged. A
   * handled hint of a resourceVersion at or after a change means the function re-read the
   * object after that change, which tells a state that stays the same from one not yet reached.
   */
  handled: HandledHint[];
  /** The kubeconfig `npm start` writes: `<dataDir>/kubeconfig`. */
  kubeconfigPath: string;
  /** The user's working directory, where the guide's files are written and applied from. */
  workDir: string;
  /** What the control plane logged, for a failing assertion's message. */
  log: string[];
  stop(): Promise<void>;
}

/**
 * Starts the control plane with `npm start`'s options (a data directory: schedules on,
 * default workload readiness) on a temporary directory, and a working directory beside it.
 * The functions log at LOG_LEVEL, else ERROR: their INFO lines would bury the test report.
 * In the real project (OME_TEST_CLUSTER=real) the cluster is a real kube-apiserver with
 * kwok nodes, as `npm start -- --real-cluster` runs it.
 */
export async function startWalkthrough(mode: ClusterMode = 'standalone'): Promise<Walkthrough> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ome-e2e-data-'));
  const workDir = await mkdtemp(join(tmpdir(), 'ome-e2e-work-'));
  const log: string[] = [];
  const handled: HandledHint[] = [];
  // In delegate mode the stand-in's steps are the controller's: the plane's own hints only report.
  const observe = (functionName: string, target: TargetHandler | undefined): TargetHandler | undefined =>
    mode === 'delegate' ? target : target &&
    (async (event, context) => {
      const result = await target(event, context);
      for (const { detail } of eventsOfInvocation(event) as Array<EventBridgeEnvelope<HintDetail>>) {
        if (detail && typeof detail === 'object' && 'resourceVersion' in detail) handled.push({ functionName, detail });
      }
      return result;
    });
  let plane: ControlPlane;
  try {
    // Redeliveries (a lease held by another function) in seconds, not minutes.
    plane = await startControlPlane({
      dataDir,
      log: (line) => log.push(line),
      wrapTarget: observe,
      functionLogLevel: process.env.LOG_LEVEL ?? 'ERROR',
      busTimeScale: 0.01,
      clusterMode: mode,
      ...(TEST_CLUSTER === 'real' ? { realCluster: {} } : {}),
    });
  } catch (error) {
    await Promise.all([rm(dataDir, { recursive: true, force: true }), rm(workDir, { recursive: true, force: true })]);
    throw new Error(`control plane did not start: ${String(error)}\n${log.join('\n')}`);
  }
  let upstream: UpstreamInCluster | undefined;
  if (mode === 'delegate') {
    try {
      upstream = await startUpstreamInCluster(plane, (functionName, object) => handled.push({ functionName, detail: handledDetailOf(plane.clusters[0]?.id ?? 'local', object) }));
    } catch (error) {
      await plane.stop();
      await Promise.all([rm(dataDir, { recursive: true, force: true }), rm(workDir, { recursive: true, force: true })]);
      throw error;
    }
  }
  return {
    mode,
    ...(upstream ? { upstream } : {}),
    plane,
    handled,
    kubeconfigPath: join(dataDir, 'kubeconfig'),
    workDir,
    log,
    async stop() {
      await upstream?.stop();
      await plane.stop();
      await Promise.all([rm(dataDir, { recursive: true, force: true }), rm(workDir, { recursive: true, force: true })]);
    },
  };
}

/**
 * Every write, on every embedded cluster of `plane`, whose object lost fields to pruning:
 * the clusters' CRDs mirror upstream OME's schema, so a field listed here is one a real
 * API server would drop (docs/upstream-schema.md).
 */
export function prunedWrites(plane: ControlPlane): PruneRecord[] {
  return plane.clusters.flatMap((cluster) => [...(cluster.prunedWrites?.() ?? [])]);
}

/**
 * Runs `kubectl ARGS` as a user would, with `KUBECONFIG` set, `bin/` first on PATH and the
 * walkthrough's working directory as the current directory. Never throws on a non-zero exit.
 */
export function runKubectl(walk: Pick<Walkthrough, 'kubeconfigPath' | 'workDir'>, args: string[], options: { timeoutMs?: number } = {}): Promise<CommandResult> {
  return new Promise((resolveRun) => {
    execFile(
      'kubectl',
      args,
      {
        cwd: walk.workDir,
        timeout: options.timeoutMs ?? 60_000,
        env: { ...process.env, KUBECONFIG: walk.kubeconfigPath, PATH: `${BIN_DIR}${delimiter}${process.env.PATH ?? ''}` },
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolveRun({ code, stdout, stderr: error && !stderr ? `${stderr}${error.message}` : stderr });
      },
    );
  });
}

/** Runs `kubectl ARGS` and resolves with its stdout; rejects with its stderr when it fails. */
export async function kubectlOk(walk: Pick<Walkthrough, 'kubeconfigPath' | 'workDir'>, args: string[]): Promise<string> {
  const result = await runKubectl(walk, args);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}${result.stdout}`);
  return result.stdout;
}

/** Writes `text` to `name` in the walkthrough's working directory. */
export async function writeWorkFile(walk: Pick<Walkthrough, 'workDir'>, name: string, text: string): Promise<void> {
  await writeFile(join(walk.workDir, name), text);
}

/**
 * Polls `read` every 250 ms until `accept` holds; resolves with that value. After
 * `timeoutMs` it rejects with the last value read, so a failure shows where it got stuck.
 */
export async function pollUntil<T>(what: string, read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!accept(value)) {
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms; last value:\n${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 250));
    value = await read();
  }
  return value;
}

/** Replaces each 8-hex revision hash in `text` with `<hash>`, to compare with a guide's output by pattern. */
export function maskRevisionHashes(text: string): string {
  return text.replace(/-[0-9a-f]{8}\b/g, '-<hash>');
}

/** A point in an object's history: a `generation` (spec changes) or a `resourceVersion` (any change). */
export type ObjectChange = { generation: number } | { resourceVersion: string };

/**
 * Resolves once `functionName` has handled a hint about `kind` `namespace/name` made at or
 * after `change` (the embedded API server's resourceVersions are increasing integers).
 */
export function handledSince(
  walk: Pick<Walkthrough, 'handled'>,
  functionName: string,
  object: { kind: string; namespace: string; name: string },
  change: ObjectChange,
): Promise<HandledHint[]> {
  const reached = (detail: HintDetail): boolean =>
    'generation' in change ? (detail.generation ?? 0) >= change.generation : Number(detail.resourceVersion) >= Number(change.resourceVersion);
  const matching = async () =>
    walk.handled.filter(
      (hint) => hint.functionName === functionName && hint.detail.kind === object.kind && hint.detail.namespace === object.namespace && hint.detail.name === object.name && reached(hint.detail),
    );
  return pollUntil(`${functionName} handling ${object.kind} ${object.namespace}/${object.name} at ${JSON.stringify(change)} or later`, matching, (hints) => hints.length > 0);
}
