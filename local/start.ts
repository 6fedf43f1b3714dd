/**
 * `npm start`: the whole control plane on this machine (see local/control-plane.ts).
 * Prints `ready` on a line of its own once it serves; SIGINT or SIGTERM stops it cleanly.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LOCAL_REGISTRY_FILE } from '../cli/dashboard/local-registry';
import { parseClusterMode, type ClusterMode } from '../shared/domain/cluster-mode';
import type { ControlPlane } from './control-plane';

const USAGE = `Usage: npm start -- [options]

Runs the OME pinning control plane locally: embedded Kubernetes API server(s), DynamoDB
Local, the local event bus with the rules of serverless.yml, the watch forwarder, every
function and the scheduled revision GC; and, when Debian's prometheus package is installed,
a local Prometheus scraping the embedded clusters' simulated engine pods for canary analysis.

Options:
  --data-dir DIR     where kubeconfigs are written (default .ome-local)
  --clusters N       start N embedded clusters: local, local-2, ... (default 1)
  --kubeconfig FILE  use this real cluster instead of an embedded one (registered as local;
                     the file is referenced, its credentials are not copied anywhere)
  --context NAME     the kubeconfig context to use with --kubeconfig
  --real-cluster     run a real Kubernetes control plane on loopback instead of the
                     embedded API server (kube-apiserver, etcd, controller-manager,
                     scheduler and kwok nodes; build it first with
                     scripts/build-real-cluster.sh)
  --mode MODE        how the cluster is registered: standalone (no OME controller runs
                     there; the plane renders and writes status) or delegate (OME's
                     controller runs there; the plane acts through annotations and
                     spec.runtime.revision). Default: standalone for embedded clusters,
                     delegate with --kubeconfig
  --no-prometheus    do not start the local Prometheus (analysis steps then park unless
                     PROMETHEUS_ADDRESS names another)
  -h, --help         show this help

Environment: FORWARDER_SHARDS=N spreads the clusters over N forwarder shards (default 4),
as the deployed schedule rules do.

Then: KUBECONFIG=<data-dir>/kubeconfig kubectl get inferenceservices -A
`;

/** Scrapes every 5 s: enough for minute-long analysis intervals, little load on a laptop. */
const NPM_START_SCRAPE_INTERVAL_SECONDS = 5;

interface StartFlags {
  dataDir: string;
  clusters: number;
  kubeconfig?: string;
  context?: string;
  realCluster: boolean;
  mode?: ClusterMode;
  prometheus: boolean;
  help: boolean;
}

/** Parses the flags; throws an Error whose message is meant for the user. */
export function parseStartFlags(argv: string[]): StartFlags {
  const { values } = parseArgs({
    args: argv,
    options: {
      'data-dir': { type: 'string' },
      clusters: { type: 'string' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      mode: { type: 'string' },
      'no-prometheus': { type: 'boolean' },
      'real-cluster': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  const clusters = values.clusters === undefined ? 1 : Number(values.clusters);
  if (!Number.isInteger(clusters) || clusters < 1) throw new Error(`--clusters must be a whole number of at least 1 (got ${values.clusters})`);
  if (values.context !== undefined && values.kubeconfig === undefined) throw new Error('--context needs --kubeconfig');
  if (values.kubeconfig !== undefined && values.clusters !== undefined) throw new Error('--clusters starts embedded clusters; it cannot be combined with --kubeconfig');
  if (values['real-cluster'] && (values.kubeconfig !== undefined || values.clusters !== undefined)) throw new Error('--real-cluster starts one local cluster; it cannot be combined with --kubeconfig or --clusters');
  const mode = values.mode === undefined ? undefined : parseClusterMode(values.mode);
  if (values.mode !== undefined && mode === undefined) throw new Error(`--mode must be standalone or delegate (got ${values.mode})`);
  return {
    dataDir: values['data-dir'] ?? '.ome-local',
    clusters,
    ...(values.kubeconfig === undefined ? {} : { kubeconfig: values.kubeconfig }),
    ...(values.context === undefined ? {} : { context: values.context }),
    realCluster: values['real-cluster'] ?? false,
    ...(mode === undefined ? {} : { mode }),
    prometheus: !(values['no-prometheus'] ?? false),
    help: values.help ?? false,
  };
}

/**
 * The AWS SDK warns on Node 20 that its releases from 2027 will need Node 22; locally that
 * line only hides the progress. The SDK's own switch turns it off; other warnings print.
 */
function quietNodeVersionWarning(): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}

async function main(): Promise<number> {
  let flags: StartFlags;
  try {
    flags = parseStartFlags(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  if (flags.help) {
    process.stdout.write(USAGE);
    return 0;
  }

  quietNodeVersionWarning();
  const { startControlPlane } = await import('./control-plane');
  const started = Date.now();
  let plane: ControlPlane | undefined;
  let stopRequested = false;
  const stopped = new Promise<void>((resolveStopped) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopRequested) return;
      stopRequested = true;
      process.stdout.write(`${signal}: stopping\n`);
      resolveStopped();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });

  try {
    plane = await startControlPlane({
      dataDir: flags.dataDir,
      clusters: flags.clusters,
      ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
      ...(flags.context ? { context: flags.context } : {}),
      ...(flags.realCluster ? { realCluster: {} } : {}),
      ...(flags.mode ? { clusterMode: flags.mode } : {}),
      ...(flags.prometheus ? { prometheus: { scrapeIntervalSeconds: NPM_START_SCRAPE_INTERVAL_SECONDS } } : {}),
    });
  } catch (error) {
    process.stderr.write(`npm start failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }

  if (!stopRequested) {
    const first = plane.clusters[0];
    process.stdout.write(`started in ${((Date.now() - started) / 1000).toFixed(1)} s; try: KUBECONFIG=${first?.kubeconfigPath} kubectl get inferenceservices -A\n`);
    // Where the table is, for `kubectl ome dashboard` run from this directory without flags.
    await writeFile(join(flags.dataDir, LOCAL_REGISTRY_FILE), `${JSON.stringify({ tableName: plane.tableName, endpoint: plane.dynamoDbEndpoint, region: 'us-east-1' })}\n`);
    process.stdout.write('ready\n');
  }
  await stopped;
  await plane.stop();
  await rm(join(flags.dataDir, LOCAL_REGISTRY_FILE), { force: true });
  process.stdout.write('stopped\n');
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
    // Sockets kept alive by SDK clients must not hold the process once everything stopped.
    setTimeout(() => process.exit(code), 1_000).unref();
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
