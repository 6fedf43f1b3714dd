/**
 * `npm run -s scale-check -- --clusters 200 [--shards 4] [--verbose]`: starts the local
 * control plane with N embedded clusters (as `npm start -- --clusters N` does, schedules
 * off), then applies the seed's runtime and InferenceService to the last cluster and waits
 * until the pin function has pinned it. Prints how long the start and the pin took and the
 * process's memory; exits 1 when the plane does not start or the last cluster is not
 * served within the wait. The figures for 200 clusters are in docs/operations.md.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startControlPlane } from '../local/control-plane';
import { Resources } from '../shared/domain/model/resources';
import { AlreadyExistsError } from '../shared/domain/errors';
import type { ClusterClient, KubeObject, ResourceType } from '../shared/ports/cluster';
import { buildSeedRuntimeSpec } from '../test/runtime/fixtures/seed-runtime';

const NAMESPACE = 'llama-demo';
const RUNTIME = 'sglang-llama-3-2-3b';
const ISVC = 'llama-3-2-3b-instruct';
const SERVE_TIMEOUT_MS = 120_000;

function parseFlags(argv: string[]): { clusters: number; shards: number | undefined; verbose: boolean } {
  const { values } = parseArgs({
    args: argv,
    options: { clusters: { type: 'string' }, shards: { type: 'string' }, verbose: { type: 'boolean' } },
    strict: true,
  });
  const clusters = Number(values.clusters ?? 200);
  if (!Number.isInteger(clusters) || clusters < 1) throw new Error(`--clusters must be a whole number of at least 1 (got ${values.clusters})`);
  const shards = values.shards === undefined ? undefined : Number(values.shards);
  return { clusters, shards, verbose: values.verbose ?? false };
}

/** Creates it, or finds it already there; a failed call (the admission webhook timing out on a loaded machine) is tried again, as a user would. */
async function ensure(client: ClusterClient, type: ResourceType, object: KubeObject): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await client.create(type, object);
      return;
    } catch (error) {
      if (error instanceof AlreadyExistsError) return;
      if (attempt >= 5) throw error;
      process.stdout.write(`scale-check  creating ${type.kind} ${object.metadata.name} failed (${error instanceof Error ? error.message : String(error)}); trying again\n`);
    }
  }
}

async function applySeed(client: ClusterClient): Promise<void> {
  await ensure(client, Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  await ensure(client, Resources.servingRuntimes, { apiVersion: 'ome.io/v1beta1', kind: 'ServingRuntime', metadata: { name: RUNTIME, namespace: NAMESPACE }, spec: buildSeedRuntimeSpec('0.9') });
  await ensure(client, Resources.inferenceServices, {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name: ISVC, namespace: NAMESPACE },
    spec: { model: { name: ISVC }, runtime: { name: RUNTIME, kind: 'ServingRuntime', autoSync: false }, engine: { minReplicas: 1, maxReplicas: 1 } },
  });
}

async function waitForPin(client: ClusterClient): Promise<string | undefined> {
  const deadline = Date.now() + SERVE_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const isvc = await client.get<KubeObject & { status?: { pinnedRevisionName?: string } }>(Resources.inferenceServices, NAMESPACE, ISVC);
    if (isvc.status?.pinnedRevisionName) return isvc.status.pinnedRevisionName;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return undefined;
}

const mb = (bytes: number): string => `${Math.round(bytes / 1e6)} MB`;

async function main(): Promise<number> {
  const flags = parseFlags(process.argv.slice(2));
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const dataDir = await mkdtemp(join(tmpdir(), 'ome-scale-check-'));
  const started = Date.now();
  let clustersStarted = 0;
  const log = (line: string): void => {
    if (line.startsWith('cluster ')) clustersStarted += 1;
    // Without --verbose only the parts' summaries and a progress line per 50 clusters.
    if (flags.verbose || !/^(cluster |forwarder +local)/.test(line)) process.stdout.write(`${line}\n`);
    else if (line.startsWith('cluster ') && clustersStarted % 50 === 0) {
      process.stdout.write(`scale-check  ${clustersStarted} clusters started (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
    }
  };
  try {
    const plane = await startControlPlane({
      dataDir,
      clusters: flags.clusters,
      schedules: false,
      functionLogLevel: 'ERROR',
      log,
      ...(flags.shards === undefined ? {} : { forwarderShards: flags.shards }),
    });
    const startSeconds = (Date.now() - started) / 1000;
    const last = plane.clusters[plane.clusters.length - 1];
    process.stdout.write(`scale-check  ${plane.clusters.length} clusters ready in ${startSeconds.toFixed(1)} s; rss ${mb(process.memoryUsage().rss)}\n`);
    let served: string | undefined;
    const changed = Date.now();
    if (last?.client) {
      await applySeed(last.client);
      served = await waitForPin(last.client);
    }
    const serveSeconds = (Date.now() - changed) / 1000;
    process.stdout.write(
      served
        ? `scale-check  ${last?.id} (shard ${last?.shard}) served: pinned to ${served} ${serveSeconds.toFixed(1)} s after the change; rss ${mb(process.memoryUsage().rss)}\n`
        : `scale-check  ${last?.id} was not served within ${SERVE_TIMEOUT_MS / 1000} s\n`,
    );
    await plane.stop();
    return served ? 0 : 1;
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`scale-check failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
