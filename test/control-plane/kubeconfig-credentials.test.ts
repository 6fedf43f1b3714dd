/**
 * `npm start --kubeconfig FILE`: the operator's kubeconfig stays in its file. DynamoDB Local
 * (no authentication) gets a reference to it, never a token, certificate or key, and the
 * control plane still serves the cluster through it, credential plugin included. A real
 * embedded API server stands in for the operator's cluster. Such a cluster is taken to run
 * upstream OME's own controller, so it is registered `delegate`: the stand-in for that
 * controller pins there, and the plane reads and writes no status or workload.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startEmbeddedCluster } from '../../local/cluster';
import type { EmbeddedCluster } from '../../local/cluster';
import { createDynamoClient } from '../../shared/adapters/dynamodb';
import { nonLoopbackAddresses, tryConnect } from '../support/network';
import { startUpstreamController, type UpstreamController } from '../support/upstream-controller';
import { kubectlApply, pinnedRevision, REV_090, seedManifests, START_TIMEOUT_MS, startObservedControlPlane, waitFor } from './support';
import type { ObservedControlPlane } from './support';

const sentinel = (what: string): string => `${what}-${randomBytes(12).toString('hex')}`;
/** What must never reach the table: every credential in the file, of every context. */
// The exec plugin's token is the embedded server's own operator token (it authenticates).
const SECRETS = {
  stagingToken: sentinel('staging-token'),
  certificate: Buffer.from(sentinel('client-certificate')).toString('base64'),
  key: Buffer.from(sentinel('client-key')).toString('base64'),
  password: sentinel('password'),
};

let dir: string;
let cluster: EmbeddedCluster;
let observed: ObservedControlPlane;
let upstream: UpstreamController;
let adminKubeconfig: string;
let operatorKubeconfig: string;

beforeAll(async () => {
  cluster = await startEmbeddedCluster({ workloadReadyDelayMs: 20 });
  dir = await mkdtemp(join(tmpdir(), 'kubeconfig-credentials-'));
  adminKubeconfig = join(dir, 'admin');
  await cluster.writeKubeconfig(adminKubeconfig);
  operatorKubeconfig = join(dir, 'operator');
  await writeFile(
    operatorKubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'embedded', cluster: { server: cluster.httpsUrl, 'certificate-authority-data': cluster.caData } },
        { name: 'staging', cluster: { server: 'https://staging.example:6443', 'certificate-authority-data': SECRETS.certificate } },
      ],
      users: [
        {
          name: 'operator',
          user: {
            exec: {
              apiVersion: 'client.authentication.k8s.io/v1beta1',
              command: process.execPath,
              args: ['-e', `process.stdout.write(JSON.stringify({apiVersion:"client.authentication.k8s.io/v1beta1",kind:"ExecCredential",status:{token:"${cluster.adminToken}"}}))`],
            },
          },
        },
        { name: 'staging', user: { token: SECRETS.stagingToken, 'client-certificate-data': SECRETS.certificate, 'client-key-data': SECRETS.key, username: 'ops', password: SECRETS.password } },
      ],
      contexts: [
        { name: 'operator', context: { cluster: 'embedded', user: 'operator' } },
        { name: 'staging', context: { cluster: 'staging', user: 'staging' } },
      ],
      'current-context': 'staging',
    }),
    { mode: 0o600 },
  );
  upstream = startUpstreamController(cluster.client, { omeNamespace: 'ome' });
  observed = await startObservedControlPlane({ kubeconfig: operatorKubeconfig, context: 'operator' });
}, START_TIMEOUT_MS);

afterAll(async () => {
  await upstream?.stop();
  await observed?.stop();
  await cluster?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('npm start --kubeconfig', () => {
  it('stores a reference to the file in DynamoDB Local, and no credential of any context', async () => {
    // Act
    const client = createDynamoClient({ endpoint: observed.plane.dynamoDbEndpoint, region: 'us-east-1' });
    const items: unknown[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await client.send(new ScanCommand({ TableName: observed.plane.tableName, ExclusiveStartKey: startKey }));
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    client.destroy();

    // Assess
    const table = JSON.stringify(items);
    for (const [name, value] of Object.entries({ ...SECRETS, execToken: cluster.adminToken })) expect([name, table.includes(value)]).toEqual([name, false]);
    expect(table).not.toMatch(/exec|client-certificate|client-key|token"/);
    expect(await observed.plane.app.stores.clusters.getCluster('local')).toMatchObject({
      id: 'local',
      mode: 'delegate',
      credentials: { kind: 'kubeconfig-file', path: operatorKubeconfig, context: 'operator' },
    });
  });

  it('still serves the cluster beside its OME controller: an InferenceService applied with kubectl is pinned by OME, and the plane writes no status, revision or workload', async () => {
    // Act
    await kubectlApply(adminKubeconfig, seedManifests('0.9'));
    const pinned = await waitFor(() => pinnedRevision(adminKubeconfig), (value) => value !== '');
    await waitFor(
      async () => observed.deliveries.filter((delivery) => delivery.functionName === 'pin' && delivery.detail.kind === 'InferenceService').length,
      (count) => count > 0,
    );

    // Assess: the plane reached the cluster through the file (its pin deliveries read the
    // InferenceService), and every status, revision and Deployment write came from OME.
    expect(pinned).toBe(REV_090);
    expect(observed.deliveries.filter((delivery) => delivery.functionName === 'pin' && delivery.outcome !== 'ok')).toEqual([]);
    expect(cluster.accessLog().filter((record) => record.verb === 'get' && record.target === 'inferenceservices.ome.io').length).toBeGreaterThan(0);
    const owned = new Set(['inferenceservices.ome.io/status', 'controllerrevisions.apps', 'deployments.apps']);
    expect(cluster.accessLog().filter((record) => owned.has(record.target) && !['get', 'list', 'watch'].includes(record.verb))).toEqual([]);
    expect(upstream.statusWrites().size).toBeGreaterThan(0);
  });

  it('keeps DynamoDB Local off the network: only loopback connects', async () => {
    // Act
    const port = Number(new URL(observed.plane.dynamoDbEndpoint).port);
    const outcomes = await Promise.all(nonLoopbackAddresses().map(async (address) => [address, await tryConnect(address, port)]));

    // Assess
    expect(await tryConnect('127.0.0.1', port)).toBe('connected');
    expect(outcomes.filter(([, outcome]) => outcome !== 'ECONNREFUSED')).toEqual([]);
  });
});
