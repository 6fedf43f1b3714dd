/**
 * `npm run cluster -- --data-dir DIR [--port N] [--crd-dir DIR]`: runs the embedded API
 * server, writes DIR/kubeconfig (the operator) and DIR/clusters/local.kubeconfig (one
 * context per function identity), prints `ready` once the CRDs are served and namespace
 * `ome` exists, and stops cleanly on SIGINT/SIGTERM.
 *
 * `npm run cluster -- --real [--nodes N]` runs a real control plane instead (etcd,
 * kube-apiserver, controller-manager, scheduler and kwok nodes; local/real-cluster), with
 * the same files and the same `ready`.
 */
import { join, resolve } from 'node:path';
import { parseArgs as parseFlags } from 'node:util';
import { startRealCluster } from '../real-cluster';
import { startEmbeddedCluster, type EmbeddedClusterOptions } from './index';

/** The id the data directory's identity kubeconfig is named after, as `npm start` names its first cluster. */
const CLUSTER_ID = 'local';

interface CliOptions {
  dataDir: string;
  cluster: EmbeddedClusterOptions;
  /** Fake nodes of a real control plane; absent for the embedded server. */
  real?: { nodes: number };
}

const USAGE = 'usage: npm run cluster -- --data-dir DIR [--port N] [--host H] [--crd-dir DIR]\n       npm run cluster -- --real [--data-dir DIR] [--nodes N]';

function parseArgs(argv: string[]): CliOptions {
  let values: { 'data-dir'?: string; port?: string; host?: string; 'crd-dir'?: string; real?: boolean; nodes?: string };
  try {
    ({ values } = parseFlags({
      args: argv,
      options: { 'data-dir': { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, 'crd-dir': { type: 'string' }, real: { type: 'boolean' }, nodes: { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`, { cause: error });
  }
  const options: CliOptions = { dataDir: values['data-dir'] || '.ome-local', cluster: {} };
  if (values.port !== undefined) options.cluster.port = Number(values.port);
  if (values.host) options.cluster.host = values.host;
  if (values['crd-dir']) options.cluster.crdDir = resolve(values['crd-dir']);
  if (options.cluster.port !== undefined && !Number.isInteger(options.cluster.port)) throw new Error('--port must be an integer');
  if (values.real) {
    if (values.port !== undefined || values.host || values['crd-dir']) throw new Error(`--real takes only --data-dir and --nodes\n${USAGE}`);
    const nodes = values.nodes === undefined ? 3 : Number(values.nodes);
    if (!Number.isInteger(nodes) || nodes < 1 || nodes > 50) throw new Error('--nodes must be a whole number from 1 to 50');
    options.real = { nodes };
  } else if (values.nodes !== undefined) {
    throw new Error(`--nodes needs --real\n${USAGE}`);
  }
  return options;
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const cluster = options.real
    ? await startRealCluster({ nodes: options.real.nodes, log: (line) => process.stderr.write(`${line}\n`) })
    : await startEmbeddedCluster(options.cluster);
  const kubeconfigPath = join(resolve(options.dataDir), 'kubeconfig');
  await cluster.writeKubeconfig(kubeconfigPath);
  await cluster.writeIdentityKubeconfig(join(resolve(options.dataDir), 'clusters', `${CLUSTER_ID}.kubeconfig`));
  const url = 'url' in cluster ? cluster.url : cluster.httpsUrl;
  process.stderr.write(`${options.real ? 'kube-apiserver' : 'embedded API server'} at ${url}\nexport KUBECONFIG=${kubeconfigPath}\n`);
  process.stdout.write('ready\n');
  const shutdown = (): void => {
    cluster.stop().then(
      () => process.stderr.write('stopped\n'),
      (error: unknown) => {
        process.stderr.write(`${String(error)}\n`);
        process.exitCode = 1;
      },
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
