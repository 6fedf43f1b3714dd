/**
 * `kubectl ome dashboard`: the read-only fleet view in a browser, served on 127.0.0.1
 * until interrupted. The registry is the functions' table (as `admin cluster`: --table,
 * --dynamodb-endpoint, --region, the environment, else what `npm start` left in
 * `.ome-local/registry.json`). Each cluster is read with what its record names, as the
 * local plane connects: kubeconfig-file and kubeconfig records directly; secret and eks
 * records carry no credential the CLI can use, so they are read through a context of the
 * operator's own kubeconfig, given with --cluster-context ID=CONTEXT, or the current
 * context when it is named as the cluster id.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { ClusterRecord } from '../../shared/ports/store';
import { DEFAULT_REVISION_RETENTION } from '../../shared/domain/runtime/gc';
import { parseDurationFlag, stringFlag, stringsFlag, type FlagSpec, type ParsedArgs } from '../args';
import { openClusterRegistry, REGISTRY_FLAGS } from '../admin/cluster';
import type { Command, Invocation } from '../command';
import { CliError } from '../errors';
import { gatherFleet, type ClusterReader } from './gather';
import { LOCAL_REGISTRY_FILE, type LocalRegistry } from './local-registry';
import { startDashboardServer } from './server';

const DEFAULT_DATA_DIR = '.ome-local';
const DEFAULT_REFRESH = '5s';
/** Each cluster read must end: one unreachable cluster must not stall the view. */
const CLUSTER_REQUEST_TIMEOUT_MS = 10_000;

const FLAGS: FlagSpec[] = [
  { name: 'port', type: 'string', description: 'Port on 127.0.0.1 to serve on; 0 picks a free one', default: '0' },
  { name: 'refresh', type: 'string', description: 'How often an open page is updated', default: DEFAULT_REFRESH },
  { name: 'cluster-context', type: 'string', multiple: true, description: 'ID=CONTEXT: read cluster ID through this context of your kubeconfig (needed for secret and eks records)' },
  { name: 'retention', type: 'string', description: 'Revisions kept per runtime, as the GC function\'s RUNTIME_REVISION_RETENTION', default: String(DEFAULT_REVISION_RETENTION) },
  { name: 'data-dir', type: 'string', description: `npm start's data directory, read for the table when none is given`, default: DEFAULT_DATA_DIR },
  ...REGISTRY_FLAGS,
];

/** Adds npm start's table and endpoint when neither flags nor the environment name a table. */
async function withLocalRegistry(invocation: Invocation): Promise<ParsedArgs> {
  const { args, deps } = invocation;
  if (stringFlag(args, 'table') || deps.environment?.TABLE_NAME) return args;
  const path = join(stringFlag(args, 'data-dir') || DEFAULT_DATA_DIR, LOCAL_REGISTRY_FILE);
  let local: LocalRegistry;
  try {
    local = JSON.parse(await readFile(path, 'utf8')) as LocalRegistry;
  } catch {
    return args;
  }
  const flags = new Map(args.flags);
  if (typeof local.tableName === 'string') flags.set('table', local.tableName);
  if (typeof local.endpoint === 'string' && !stringFlag(args, 'dynamodb-endpoint') && !deps.environment?.DYNAMODB_ENDPOINT) flags.set('dynamodb-endpoint', local.endpoint);
  if (typeof local.region === 'string' && !stringFlag(args, 'region')) flags.set('region', local.region);
  return { ...args, flags };
}

/** Parses `--cluster-context ID=CONTEXT`, repeatable. */
export function parseClusterContexts(values: readonly string[]): Map<string, string> {
  const contexts = new Map<string, string>();
  for (const value of values) {
    const at = value.indexOf('=');
    if (at <= 0 || at === value.length - 1) throw new CliError(`invalid argument "${value}" for "--cluster-context" flag: use ID=CONTEXT`);
    contexts.set(value.slice(0, at), value.slice(at + 1));
  }
  return contexts;
}

function positiveInteger(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new CliError(`invalid argument "${raw}" for "--${name}" flag: must be a whole number`);
  return Number(raw);
}

/** How each record's cluster is read; readers are made once and kept for the run. */
function clusterReaders(invocation: Invocation, contexts: Map<string, string>): (record: ClusterRecord) => Promise<ClusterReader> {
  const readers = new Map<string, Promise<ClusterReader>>();
  const open = async (record: ClusterRecord): Promise<ClusterReader> => {
    const context = contexts.get(record.id);
    if (context) return (await invocation.connectWith({ context, requestTimeoutMs: CLUSTER_REQUEST_TIMEOUT_MS })).client;
    const kind = record.credentials.kind;
    if (kind === 'kubeconfig-file' || kind === 'kubeconfig') {
      if (!invocation.deps.openRecordReader) throw new CliError('this build cannot read clusters from their records');
      return invocation.deps.openRecordReader(record, CLUSTER_REQUEST_TIMEOUT_MS);
    }
    const current = await invocation.connectWith({ requestTimeoutMs: CLUSTER_REQUEST_TIMEOUT_MS });
    if (current.contextName === record.id) return current.client;
    throw new CliError(`${kind} record: the CLI reads it through your kubeconfig; pass --cluster-context ${record.id}=CONTEXT`);
  };
  return (record) => {
    let reader = readers.get(record.id);
    if (!reader) {
      reader = open(record);
      readers.set(record.id, reader);
      // A failed connection is tried again at the next refresh.
      reader.catch(() => readers.delete(record.id));
    }
    return reader;
  };
}

function interrupted(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

export const DASHBOARD_COMMAND: Command = {
  path: 'dashboard',
  summary: 'Serve a read-only fleet view on 127.0.0.1: clusters, drift, pins, GC backlog and rollouts',
  usage: 'kubectl ome dashboard [--port N] [--table T] [--dynamodb-endpoint URL] [--region R] [flags]',
  description:
    'Reads the registry table and every registered cluster and serves the result as a web page on 127.0.0.1,\n' +
    'updated live while open: clusters with their mode and forwarder lag, InferenceServices by RuntimeDrifted reason,\n' +
    'pinned revisions, the revision GC backlog, and active rollout runs with their step, hold and plan drift.\n' +
    'The printed URL carries a token made for this run; every request needs it. Stop with Ctrl-C.\n' +
    'kubeconfig-file records are read as the local plane reads them; secret and eks records through a context of\n' +
    'your kubeconfig: --cluster-context ID=CONTEXT, or the current context when it is named as the cluster id.',
  flags: FLAGS,
  async run(invocation) {
    if (invocation.operands.length > 0) throw new CliError('dashboard takes no arguments');
    const { deps } = invocation;
    const args = await withLocalRegistry(invocation);
    const port = positiveInteger('port', stringFlag(args, 'port'), 0);
    if (port > 65535) throw new CliError(`invalid argument "${port}" for "--port" flag: must be at most 65535`);
    const refreshMs = parseDurationFlag('refresh', stringFlag(args, 'refresh') || DEFAULT_REFRESH);
    if (refreshMs < 1000) throw new CliError('--refresh must be at least 1s');
    const retention = positiveInteger('retention', stringFlag(args, 'retention'), DEFAULT_REVISION_RETENTION);
    const contexts = parseClusterContexts(stringsFlag(args, 'cluster-context'));
    const registry = await openClusterRegistry(args, deps);
    const readerFor = clusterReaders(invocation, contexts);
    const server = await startDashboardServer({
      port,
      refreshMs,
      gather: () => gatherFleet({ registry, readerFor, now: () => deps.now().getTime(), retention }),
      onError: (error) => deps.io.stderr.write(`dashboard: reading the fleet failed: ${error instanceof Error ? error.message : String(error)}\n`),
    });
    deps.io.stdout.write(`Serving the fleet dashboard on ${server.url}\nThe URL's token is the only key to it; stop with Ctrl-C.\n`);
    await (deps.interrupted ?? interrupted)();
    await server.close();
    return 0;
  },
};
