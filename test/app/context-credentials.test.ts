/**
 * The app context as functions use it: the process's mode decides which records connect,
 * and the calling function's identity picks its own credentials from a kubeconfig file.
 * A real HTTP peer on 127.0.0.1 records which credential each request carried.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createAppContext, runAsFunction } from '../../shared/app/context';
import type { ControlPlaneConfig } from '../../shared/app/config';
import { InvalidInputError } from '../../shared/domain/errors';
import { Resources } from '../../shared/domain/model/resources';
import { createMemoryStores } from '../../shared/adapters/memory';
import { reply, startCannedServer } from '../adapters/kubernetes/canned-server';
import type { CannedServer } from '../adapters/kubernetes/canned-server';

const config: ControlPlaneConfig = {
  tableName: 't',
  eventBusName: 'b',
  region: 'eu-west-1',
  omeNamespace: 'ome',
  revisionRetention: 10,
  revisionGracePeriodMs: 86_400_000,
  renderWorkloads: true,
  leaseTtlMs: 30_000,
  maxConflictRetries: 5,
};

const dir = mkdtempSync(join(tmpdir(), 'context-credentials-'));
let server: CannedServer;
let kubeconfigPath: string;

beforeAll(async () => {
  server = await startCannedServer();
  server.route = (_request, response) => reply(response, 200, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ome', uid: 'ns-uid' } });
  kubeconfigPath = join(dir, 'kubeconfig');
  // As an embedded cluster writes it: one context per function, the admin one current.
  writeFileSync(
    kubeconfigPath,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'local', cluster: { server: server.url } }],
      users: ['admin', 'pin', 'drift-check'].map((name) => ({ name, user: { token: `${name}-token` } })),
      contexts: ['admin', 'pin', 'drift-check'].map((name) => ({ name, context: { cluster: 'local', user: name } })),
      'current-context': 'admin',
    }),
  );
});

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  server.requests.length = 0;
});

async function contextWith(mode: 'local' | 'deployed', functionName?: 'pin' | 'revision-gc') {
  const stores = createMemoryStores();
  await stores.clusters.putCluster({ mode: 'standalone', id: 'file', server: server.url, credentials: { kind: 'kubeconfig-file', path: kubeconfigPath }, omeNamespace: 'ome' });
  await stores.clusters.putCluster({ mode: 'standalone', id: 'inline', server: server.url, credentials: { kind: 'kubeconfig', kubeconfig: 'apiVersion: v1' }, omeNamespace: 'ome' });
  return createAppContext({ config: { ...config, mode, ...(functionName ? { functionName } : {}) }, stores });
}

describe('createAppContext: modes', () => {
  it.each([
    ['inline', 'kubeconfig records keep credentials in the table and are refused in deployed mode'],
    ['file', "kubeconfig-file records name a file on the operator's machine and work only with npm start"],
  ])('deployed mode refuses the %s kubeconfig record before any request', async (clusterId, message) => {
    // Prepare
    const app = await contextWith('deployed', 'pin');

    // Act
    const error = await app.cluster(clusterId).catch((caught: unknown) => caught);

    // Assess
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toContain(message);
    expect(server.requests).toHaveLength(0);
  });
});

describe('createAppContext: function identity', () => {
  it("gives each function in one process its own context of the kubeconfig file, and a separate client", async () => {
    // Prepare
    const app = await contextWith('local');

    // Act
    const pin = await runAsFunction('pin', () => app.cluster('file'));
    const drift = await runAsFunction('drift-check', () => app.cluster('file'));
    const unnamed = await app.cluster('file');
    for (const handle of [pin, drift, unnamed]) await handle.client.get(Resources.namespaces, undefined, 'ome');

    // Assess
    expect(new Set([pin, drift, unnamed]).size).toBe(3);
    expect(server.requests.map((request) => request.headers.authorization)).toEqual(['Bearer pin-token', 'Bearer drift-check-token', 'Bearer admin-token']);
  });

  it("uses the configured function name in a process that hosts one function, and the current context when the file has none for it", async () => {
    // Prepare
    const pinApp = await contextWith('local', 'pin');
    const gcApp = await contextWith('local', 'revision-gc');

    // Act
    await (await pinApp.cluster('file')).client.get(Resources.namespaces, undefined, 'ome');
    await (await gcApp.cluster('file')).client.get(Resources.namespaces, undefined, 'ome');

    // Assess
    expect(server.requests.map((request) => request.headers.authorization)).toEqual(['Bearer pin-token', 'Bearer admin-token']);
  });
});
