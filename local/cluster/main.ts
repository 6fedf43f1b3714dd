/**
 * `npm run cluster -- --data-dir DIR [--port N] [--crd-dir DIR]`: runs the embedded API
 * server, writes DIR/kubeconfig (the operator) and DIR/clusters/local.kubeconfig (one
 * context per function identity), prints `ready` once the CRDs are served and namespace
 * `ome` exists, and stops cleanly on SIGINT/SIGTERM.
 */
import { join, resolve } from 'node:path';
import { parseArgs as parseFlags } from 'node:util';
import { startEmbeddedCluster, type EmbeddedClusterOptions } from './index';

/** The id the data directory's identity kubeconfig is named after, as `npm start` names its first cluster. */
const CLUSTER_ID = 'local';

interface CliOptions {
  dataDir: string;
  cluster: EmbeddedClusterOptions;
}

const USAGE = 'usage: npm run cluster -- --data-dir DIR [--port N] [--host H] [--crd-dir DIR]';

function parseArgs(argv: string[]): CliOptions {
  let values: { 'data-dir'?: string; port?: string; host?: string; 'crd-dir'?: string };
  try {
    ({ values } = parseFlags({
      args: argv,
      options: { 'data-dir': { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, 'crd-dir': { type: 'string' } },
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
