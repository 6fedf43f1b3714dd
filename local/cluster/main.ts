/**
 * `npm run cluster -- --data-dir DIR [--port N] [--crd-dir DIR]`: runs the embedded API
 * server, writes DIR/kubeconfig (the operator) and DIR/clusters/local.kubeconfig (one
 * context per function identity), prints `ready` once the CRDs are served and namespace
 * `ome` exists, and stops cleanly on SIGINT/SIGTERM.
 */
import { join, resolve } from 'node:path';
import { startEmbeddedCluster, type EmbeddedClusterOptions } from './index';

/** The id the data directory's identity kubeconfig is named after, as `npm start` names its first cluster. */
const CLUSTER_ID = 'local';

interface CliOptions {
  dataDir: string;
  cluster: EmbeddedClusterOptions;
}

function parseArgs(argv: string[]): CliOptions {
  const options: CliOptions = { dataDir: '.ome-local', cluster: {} };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = argv[i + 1];
    if (arg === '--data-dir' && value) options.dataDir = value;
    else if (arg === '--port' && value) options.cluster.port = Number(value);
    else if (arg === '--host' && value) options.cluster.host = value;
    else if (arg === '--crd-dir' && value) options.cluster.crdDir = resolve(value);
    else throw new Error(`unknown or incomplete argument: ${String(arg)}\nusage: npm run cluster -- --data-dir DIR [--port N] [--host H] [--crd-dir DIR]`);
    i += 1;
  }
  if (options.cluster.port !== undefined && !Number.isInteger(options.cluster.port)) throw new Error('--port must be an integer');
  return options;
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const cluster = await startEmbeddedCluster(options.cluster);
  const kubeconfigPath = join(resolve(options.dataDir), 'kubeconfig');
  await cluster.writeKubeconfig(kubeconfigPath);
  await cluster.writeIdentityKubeconfig(join(resolve(options.dataDir), 'clusters', `${CLUSTER_ID}.kubeconfig`));
  process.stderr.write(`embedded API server at ${cluster.url}\nexport KUBECONFIG=${kubeconfigPath}\n`);
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
