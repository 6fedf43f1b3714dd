/**
 * `kubectl ome dashboard` through the command table, with the world faked: which table it
 * opens (flags, else npm start's registry.json), how each record's cluster is read
 * (kubeconfig-file records from the record, secret records through --cluster-context or a
 * context named as the cluster), and its refusals. The command serves until interrupted;
 * the test fetches the JSON snapshot from the URL it prints, then interrupts it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runApp, type AppDeps, type ConnectOptions } from '../../cli/app';
import type { ClusterAdminRegistry } from '../../cli/admin/cluster-onboarding';
import { parseClusterContexts } from '../../cli/dashboard/command';
import type { FleetSnapshot } from '../../cli/dashboard/gather';
import { LOCAL_REGISTRY_FILE } from '../../cli/dashboard/local-registry';
import type { RegistryOptions } from '../../cli/command';
import { Resources } from '../../shared/domain/model/resources';
import type { ClusterRecord } from '../../shared/ports/store';
import { FakeCluster } from '../cli/fake-cluster';
import { createEnv } from '../cli/harness';

const RECORDS: ClusterRecord[] = [
  { id: 'local', mode: 'standalone', server: 'https://127.0.0.1:6443', credentials: { kind: 'kubeconfig-file', path: '/tmp/kubeconfig' }, omeNamespace: 'ome' },
  { id: 'prod-eu', mode: 'delegate', server: 'https://eu.example:443', credentials: { kind: 'eks', clusterName: 'eu', region: 'eu-west-1' }, omeNamespace: 'ome' },
  { id: 'prod-us', mode: 'delegate', server: 'https://us.example:443', credentials: { kind: 'secret' }, omeNamespace: 'ome' },
];

function clusterWith(name: string): FakeCluster {
  const cluster = new FakeCluster();
  cluster.put(Resources.inferenceServices, {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace: 'prod' },
    spec: {},
    status: { conditions: [{ type: 'RuntimeDrifted', status: 'True', reason: 'RevisionMismatch', message: '' }] },
  });
  return cluster;
}

function world(environment: Record<string, string | undefined> = {}) {
  const { env, out } = createEnv();
  const registries: RegistryOptions[] = [];
  const connects: Array<Partial<ConnectOptions>> = [];
  const recordReads: string[] = [];
  const registry = {
    listClusters: async () => RECORDS,
    listCheckpoints: async () => [],
    loadForwarderError: async () => undefined,
  } as unknown as ClusterAdminRegistry;
  const deps: AppDeps = {
    io: env.io,
    connect: async (options) => {
      connects.push(options);
      const context = options.context ?? 'prod-us';
      return { client: clusterWith(`via-${context}`), contextName: context };
    },
    now: () => new Date(),
    newRequestId: env.newRequestId,
    sleep: env.sleep,
    environment,
    openRegistry: async (options) => {
      registries.push(options);
      return registry;
    },
    openRecordReader: async (record) => {
      recordReads.push(record.id);
      return clusterWith(`from-${record.id}`);
    },
  };
  return { deps, out, registries, connects, recordReads };
}

/** Runs the command until it prints its URL, fetches the snapshot, then interrupts it. */
async function serveOnce(argv: string[], deps: AppDeps, out: { stdout: string }): Promise<{ code: number; snapshot: FleetSnapshot }> {
  let interrupt: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (interrupt = resolve));
  const running = runApp(['dashboard', ...argv], { ...deps, interrupted: () => stopped });
  let url: string | undefined;
  while (!url) {
    const done = await Promise.race([running.then(() => true), new Promise<false>((resolve) => setImmediate(() => resolve(false)))]);
    if (done) throw new Error(`the dashboard ended before serving: ${out.stdout}`);
    url = /^Serving the fleet dashboard on (\S+)$/m.exec(out.stdout)?.[1];
  }
  const snapshot = (await (await fetch(url.replace('/?token=', '/snapshot.json?token='))).json()) as FleetSnapshot;
  interrupt();
  return { code: await running, snapshot };
}

let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'ome-dashboard-data-'));
  await writeFile(join(dataDir, LOCAL_REGISTRY_FILE), JSON.stringify({ tableName: 'ome-pinning-local', endpoint: 'http://127.0.0.1:41234', region: 'us-east-1' }));
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('kubectl ome dashboard', () => {
  it("finds npm start's table in its data directory when no flag or variable names one", async () => {
    const { deps, out, registries } = world();
    const { code } = await serveOnce(['--data-dir', dataDir], deps, out);
    expect(code).toBe(0);
    expect(registries).toEqual([{ tableName: 'ome-pinning-local', endpoint: 'http://127.0.0.1:41234', region: 'us-east-1' }]);
    expect(out.stdout).toMatch(/^Serving the fleet dashboard on http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{32}\n/);
  });

  it('prefers the flags and the environment to the data directory', async () => {
    const { deps, out, registries } = world({ DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000' });
    await serveOnce(['--data-dir', dataDir, '--table', 'ome-control-plane', '--region', 'eu-west-1'], deps, out);
    expect(registries).toEqual([{ tableName: 'ome-control-plane', endpoint: 'http://127.0.0.1:8000', region: 'eu-west-1' }]);
  });

  it('reads kubeconfig-file records from the record, mapped ids through their context, others through a context named as the id', async () => {
    const { deps, out, connects, recordReads } = world();
    const { snapshot } = await serveOnce(['--table', 't', '--cluster-context', 'prod-eu=eu-admin'], deps, out);
    expect(recordReads).toEqual(['local']);
    expect(connects.map((options) => options.context)).toEqual(expect.arrayContaining(['eu-admin', undefined]));
    expect(snapshot.drift.map((row) => `${row.cluster}/${row.name}`)).toEqual(['local/from-local', 'prod-eu/via-eu-admin', 'prod-us/via-prod-us']);
  });

  it('says how to reach a secret or eks record the current context does not name', async () => {
    const { deps, out } = world();
    deps.connect = async () => ({ client: new FakeCluster(), contextName: 'someone-else' });
    const { snapshot } = await serveOnce(['--table', 't'], deps, out);
    expect(snapshot.clusters.find((row) => row.id === 'prod-eu')?.readError).toBe('eks record: the CLI reads it through your kubeconfig; pass --cluster-context prod-eu=CONTEXT');
    expect(snapshot.clusters.find((row) => row.id === 'local')?.readError).toBeUndefined();
  });

  it.each([
    [['dashboard', '--table', 't', 'extra'], 'error: dashboard takes no arguments\n'],
    [['dashboard', '--table', 't', '--port', 'http'], 'error: invalid argument "http" for "--port" flag: must be a whole number\n'],
    [['dashboard', '--table', 't', '--refresh', '100ms'], 'error: --refresh must be at least 1s\n'],
    [['dashboard', '--table', 't', '--cluster-context', 'prod-eu'], 'error: invalid argument "prod-eu" for "--cluster-context" flag: use ID=CONTEXT\n'],
    [['dashboard', '--data-dir', '/nonexistent'], 'error: the registry table is unknown: pass --table or set TABLE_NAME\n'],
  ])('refuses %j', async (argv, message) => {
    const { deps, out } = world();
    expect(await runApp(argv, deps)).toBe(1);
    expect(out.stderr).toBe(message);
  });

  it.each([
    [[], []],
    [['a=b'], [['a', 'b']]],
    [['a=b=c', 'd=e'], [['a', 'b=c'], ['d', 'e']]],
  ])('parses --cluster-context %j', (values, pairs) => {
    expect([...parseClusterContexts(values)]).toEqual(pairs);
  });
});
