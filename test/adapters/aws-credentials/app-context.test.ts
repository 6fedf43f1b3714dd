/**
 * The whole path for an EKS-style record: the registry names an EKS cluster, the resolver
 * describes it and presigns a token, the context builds a client, and a real HTTP peer on
 * 127.0.0.1 stands in for the API server and its authenticator: it checks the bearer token's
 * SigV4 signature for its own cluster name, as STS would, before answering. A registry
 * record pointed at another host (a listening socket here) never receives the token.
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { DescribeClusterCommand, EKSClient } from '@aws-sdk/client-eks';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAwsCredentialResolver, EKS_TOKEN_PREFIX } from '../../../shared/adapters/aws-credentials';
import { createAppContext } from '../../../shared/app/context';
import { InvalidInputError } from '../../../shared/domain/errors';
import type { ControlPlaneConfig } from '../../../shared/app/config';
import { Resources } from '../../../shared/domain/model/resources';
import { createMemoryStores } from '../../../shared/adapters/memory';
import { reply, startCannedServer, status } from '../kubernetes/canned-server';
import type { CannedServer, RecordedRequest, Route } from '../kubernetes/canned-server';

const eksMock = mockClient(EKSClient);
const secretsMock = mockClient(SecretsManagerClient);

const CLUSTER_NAME = 'green-eks';
const REGION = 'eu-west-1';
const KEYS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session/token+=' };
const T0 = Date.parse('2026-03-01T10:00:00Z');
const MINUTE = 60_000;
const EMPTY_SHA256 = createHash('sha256').update('').digest('hex');

const config: ControlPlaneConfig = {
  tableName: 't',
  eventBusName: 'b',
  region: REGION,
  omeNamespace: 'ome',
  revisionRetention: 10,
  revisionGracePeriodMs: 86_400_000,
  renderWorkloads: true,
  leaseTtlMs: 30_000,
  maxConflictRetries: 5,
};

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
const rfc3986 = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * Why a bearer token would be refused by the authenticator for `clusterName`, or undefined
 * when it is a valid presigned GetCallerIdentity (SigV4 recomputed independently here).
 */
/** The credential resolver the functions use, with the test's keys and `clock`, under the test stage's secret prefix. */
function resolverOn(clock: { now(): number }) {
  return createAwsCredentialResolver({
    secrets: new SecretsManagerClient({ region: REGION }),
    eks: new EKSClient({ region: REGION }),
    credentials: async () => KEYS,
    clock,
    secretPrefix: 'ome-pinning/test/clusters/',
  });
}

function refuseToken(authorization: string | undefined, clusterName: string): string | undefined {
  if (!authorization?.startsWith(`Bearer ${EKS_TOKEN_PREFIX}`)) return `not an EKS bearer token: ${authorization}`;
  const url = new URL(Buffer.from(authorization.slice(`Bearer ${EKS_TOKEN_PREFIX}`.length), 'base64url').toString('utf8'));
  const query = url.searchParams;
  if (url.origin !== `https://sts.${REGION}.amazonaws.com` || url.pathname !== '/') return `wrong STS endpoint ${url.origin}${url.pathname}`;
  if (query.get('Action') !== 'GetCallerIdentity' || query.get('Version') !== '2011-06-15') return 'not GetCallerIdentity';
  if (query.get('X-Amz-Expires') !== '60') return 'X-Amz-Expires is not 60';
  if (query.get('X-Amz-SignedHeaders') !== 'host;x-k8s-aws-id') return `signed headers ${query.get('X-Amz-SignedHeaders')}`;
  const [accessKeyId, date, region, service] = (query.get('X-Amz-Credential') ?? '').split('/');
  if (accessKeyId !== KEYS.accessKeyId || region !== REGION || service !== 'sts' || !date) return 'wrong credential scope';
  const canonicalQuery = [...query.entries()]
    .filter(([name]) => name !== 'X-Amz-Signature')
    .map(([name, value]) => `${rfc3986(name)}=${rfc3986(value)}`)
    .sort()
    .join('&');
  const canonicalRequest = ['GET', '/', canonicalQuery, `host:${url.host}`, `x-k8s-aws-id:${clusterName}`, '', 'host;x-k8s-aws-id', EMPTY_SHA256].join('\n');
  const scope = `${date}/${REGION}/sts/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', query.get('X-Amz-Date'), scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${KEYS.secretAccessKey}`, date), REGION), 'sts'), 'aws4_request');
  const expected = hmac(key, stringToSign).toString('hex');
  return query.get('X-Amz-Signature') === expected ? undefined : `signature does not match cluster ${clusterName}`;
}

let server: CannedServer;
let eksRoute: Route;

beforeAll(async () => {
  server = await startCannedServer();
  eksRoute = (request: RecordedRequest, response) => {
    const refusal = refuseToken(request.headers.authorization, CLUSTER_NAME);
    if (refusal) return reply(response, 401, status(401, 'Unauthorized', refusal));
    if (request.method === 'GET' && request.path === '/api/v1/namespaces/ome') {
      return reply(response, 200, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ome', uid: 'ns-uid' } });
    }
    return reply(response, 404, status(404, 'NotFound', `${request.path} not found`));
  };
});

/** Answers 401 to the first request (a token revoked or expired early), then routes as `next`. */
function unauthorizedOnce(next: Route): Route {
  let refused = false;
  return (request, response) => {
    if (refused) return next(request, response);
    refused = true;
    return reply(response, 401, status(401, 'Unauthorized', 'Unauthorized'));
  };
}

afterAll(async () => {
  await server?.stop();
});

beforeEach(() => {
  eksMock.reset();
  secretsMock.reset();
  server.requests.length = 0;
  server.route = eksRoute;
  eksMock.on(DescribeClusterCommand).resolves({
    cluster: { name: CLUSTER_NAME, status: 'ACTIVE', endpoint: server.url, certificateAuthority: { data: Buffer.from('unused for http').toString('base64') } },
  });
});

async function newContext() {
  const clock = { time: T0, now: () => clock.time };
  const stores = createMemoryStores(clock);
  await stores.clusters.putCluster({
    mode: 'standalone', id: 'green',
    server: 'https://stale.example:443',
    credentials: { kind: 'eks', clusterName: CLUSTER_NAME, region: REGION },
    omeNamespace: 'ome',
  });
  const resolveCredentials = resolverOn(clock);
  // clientTtlMs above the token's life: only the credential's expiry can make the context rebuild.
  return { clock, app: createAppContext({ config, stores, clock, resolveCredentials, clientTtlMs: 60 * MINUTE }) };
}

describe('createAppContext with the AWS resolver', () => {
  it('gives a working client for an EKS record: the API server accepts its token', async () => {
    // Prepare
    const { app } = await newContext();

    // Act
    const handle = await app.cluster('green');
    const namespace = await handle.client.get(Resources.namespaces, undefined, 'ome');

    // Assess
    expect(namespace.metadata.uid).toBe('ns-uid');
    expect(handle.omeNamespace).toBe('ome');
    expect(server.requests).toHaveLength(1);
    expect(refuseToken(server.requests[0]?.headers.authorization, CLUSTER_NAME)).toBeUndefined();
    // The same token names no other cluster.
    expect(refuseToken(server.requests[0]?.headers.authorization, 'another-cluster')).toContain('signature does not match');
  });

  it('reuses the client while the token lives and builds one on a fresh token before it dies', async () => {
    // Prepare
    const { app, clock } = await newContext();
    const first = await app.cluster('green');
    await first.client.get(Resources.namespaces, undefined, 'ome');

    // Act
    clock.time = T0 + 14 * MINUTE - 1;
    const reused = await app.cluster('green');
    clock.time = T0 + 14 * MINUTE;
    const rebuilt = await app.cluster('green');
    await rebuilt.client.get(Resources.namespaces, undefined, 'ome');

    // Assess
    expect(reused).toBe(first);
    expect(rebuilt).not.toBe(first);
    const [before, after] = server.requests.map((request) => request.headers.authorization);
    expect(after).not.toBe(before);
    expect(refuseToken(after, CLUSTER_NAME)).toBeUndefined();
    expect(eksMock.commandCalls(DescribeClusterCommand)).toHaveLength(1);
  });
});

describe('createAppContext after a 401', () => {
  it('signs a new EKS token for the next client instead of reusing the refused one', async () => {
    // Prepare
    const { app, clock } = await newContext();
    server.route = unauthorizedOnce(eksRoute);
    const first = await app.cluster('green');
    const refusal = await first.client.get(Resources.namespaces, undefined, 'ome').catch((error: unknown) => error);

    // Act
    clock.time = T0 + 1_000;
    const second = await app.cluster('green');
    const namespace = await second.client.get(Resources.namespaces, undefined, 'ome');

    // Assess
    expect((refusal as Error & { retryable: boolean }).retryable).toBe(true);
    expect(second).not.toBe(first);
    expect(namespace.metadata.uid).toBe('ns-uid');
    const [refused, accepted] = server.requests.map((request) => request.headers.authorization);
    expect(accepted).not.toBe(refused);
    expect(refuseToken(accepted, CLUSTER_NAME)).toBeUndefined();
    // Only the token was replaced: the endpoint is still the one described before.
    expect(eksMock.commandCalls(DescribeClusterCommand)).toHaveLength(1);
  });

  it("reads the function's secret again and uses the rotated token", async () => {
    // Prepare: the peer accepts only the rotated token; the secret still held the old one
    // when it was first read.
    const clock = { time: T0, now: () => clock.time };
    const stores = createMemoryStores(clock);
    await stores.clusters.putCluster({ mode: 'standalone', id: 'blue', server: server.url, credentials: { kind: 'secret' }, omeNamespace: 'ome' });
    secretsMock
      .on(GetSecretValueCommand, { SecretId: 'ome-pinning/test/clusters/blue/pin' })
      .resolvesOnce({ SecretString: JSON.stringify({ token: 'revoked', server: server.url }) })
      .resolvesOnce({ SecretString: JSON.stringify({ token: 'rotated', server: server.url }) });
    server.route = (request, response) =>
      request.headers.authorization === 'Bearer rotated'
        ? reply(response, 200, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ome', uid: 'ns-uid' } })
        : reply(response, 401, status(401, 'Unauthorized', 'Unauthorized'));
    const resolveCredentials = resolverOn(clock);
    // Local mode: the peer is plain HTTP, which deployed mode refuses.
    const app = createAppContext({ config: { ...config, mode: 'local', functionName: 'pin' }, stores, clock, resolveCredentials });
    const refusal = await (await app.cluster('blue')).client.get(Resources.namespaces, undefined, 'ome').catch((error: unknown) => error);

    // Act
    const namespace = await (await app.cluster('blue')).client.get(Resources.namespaces, undefined, 'ome');

    // Assess
    expect(refusal).toBeInstanceOf(Error);
    expect(namespace.metadata.uid).toBe('ns-uid');
    expect(server.requests.map((request) => request.headers.authorization)).toEqual(['Bearer revoked', 'Bearer rotated']);
    expect(secretsMock.commandCalls(GetSecretValueCommand)).toHaveLength(2);
  });
});

/** A listening socket that records every byte sent to it, standing in for a host a rewritten record points at. */
async function startTrap(): Promise<{ url: string; connections: number; received: () => string; stop: () => Promise<void> }> {
  const chunks: Buffer[] = [];
  const state = { connections: 0 };
  const trap: TcpServer = createTcpServer((socket) => {
    state.connections += 1;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolveListen) => trap.listen(0, '127.0.0.1', resolveListen));
  const { port } = trap.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return state.connections;
    },
    received: () => Buffer.concat(chunks).toString('latin1'),
    stop: () => new Promise<void>((resolveClose) => trap.close(() => resolveClose())),
  };
}

describe('createAppContext with a record that names another server than the credential', () => {
  let trap: Awaited<ReturnType<typeof startTrap>>;

  beforeEach(async () => {
    trap = await startTrap();
    return () => trap.stop();
  });

  async function redirectedContext(credentials: { kind: 'secret' } | { kind: 'eks'; clusterName: string; region: string }) {
    const clock = { time: T0, now: () => clock.time };
    const stores = createMemoryStores(clock);
    // Whoever can write the table (but not the secret) pointed the record at their own host.
    await stores.clusters.putCluster({ mode: 'standalone', id: 'blue', server: trap.url, caData: Buffer.from('their CA').toString('base64'), credentials, omeNamespace: 'ome' });
    const resolveCredentials = resolverOn(clock);
    // Local mode: both peers are plain HTTP, which deployed mode refuses.
    return createAppContext({ config: { ...config, mode: 'local', functionName: 'pin' }, stores, clock, resolveCredentials });
  }

  it("sends a secret's token only to the server the secret names", async () => {
    // Prepare
    secretsMock.on(GetSecretValueCommand, { SecretId: 'ome-pinning/test/clusters/blue/pin' }).resolves({ SecretString: JSON.stringify({ token: 'sa-token', server: server.url }) });
    server.route = (_request, response) => reply(response, 200, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ome', uid: 'ns-uid' } });
    const app = await redirectedContext({ kind: 'secret' });

    // Act
    const namespace = await (await app.cluster('blue')).client.get(Resources.namespaces, undefined, 'ome');

    // Assess
    expect(namespace.metadata.uid).toBe('ns-uid');
    expect(server.requests.map((request) => request.headers.authorization)).toEqual(['Bearer sa-token']);
    expect(trap.connections).toBe(0);
  });

  it('refuses a secret that names no server, and sends its token nowhere', async () => {
    // Prepare: a secret written when the record's server was used.
    secretsMock.on(GetSecretValueCommand, { SecretId: 'ome-pinning/test/clusters/blue/pin' }).resolves({ SecretString: JSON.stringify({ token: 'sa-token' }) });
    const app = await redirectedContext({ kind: 'secret' });

    // Act
    const error = await app.cluster('blue').catch((caught: unknown) => caught);

    // Assess
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toContain('the secret holds a token but no "server"; put the API server\'s URL in the secret as "server"');
    expect(trap.connections).toBe(0);
    expect(trap.received()).not.toContain('sa-token');
    expect(server.requests).toEqual([]);
  });

  it('sends an EKS token only to the endpoint EKS describes', async () => {
    // Prepare
    const app = await redirectedContext({ kind: 'eks', clusterName: CLUSTER_NAME, region: REGION });

    // Act
    const namespace = await (await app.cluster('blue')).client.get(Resources.namespaces, undefined, 'ome');

    // Assess
    expect(namespace.metadata.uid).toBe('ns-uid');
    expect(refuseToken(server.requests[0]?.headers.authorization, CLUSTER_NAME)).toBeUndefined();
    expect(trap.connections).toBe(0);
    expect(trap.received()).not.toMatch(/authorization/i);
  });
});
