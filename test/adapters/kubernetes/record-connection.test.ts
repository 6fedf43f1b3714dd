import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  connectionFromRecord,
  createClusterClient,
  kubeconfigFileContextFor,
  type ClosableClusterClient,
  type ConnectionPolicy,
  type ConnectionRequestOptions,
  type ResolvedCredentials,
} from '../../../shared/adapters/kubernetes';
import { InvalidInputError } from '../../../shared/domain/errors';
import { Resources } from '../../../shared/domain/model/resources';
import type { ClusterRecord } from '../../../shared/ports/store';
import { startCannedServer, type CannedServer } from './canned-server';

const dir = mkdtempSync(join(tmpdir(), 'record-connection-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const b64 = (text: string): string => Buffer.from(text).toString('base64');
const caFile = file('ca.crt', 'CA FROM FILE');
const certFile = file('client.crt', 'CERT FROM FILE');
const keyFile = file('client.key', 'KEY FROM FILE');
const tokenFile = file('token', 'token-from-file\n');

interface KubeconfigParts {
  cluster?: Record<string, unknown>;
  user?: Record<string, unknown> | undefined;
  current?: string | undefined;
  extra?: Record<string, unknown>;
}

/** A kubeconfig with context `main` (cluster `c`, user `u`) and a second context `other`. */
function kubeconfig({ cluster = { server: 'https://main.example:6443' }, user = { token: 'main-token' }, current = 'main', extra = {} }: KubeconfigParts = {}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'c', cluster },
      { name: 'other', cluster: { server: 'https://other.example' } },
    ],
    users: [
      { name: 'u', user },
      { name: 'other', user: { token: 'other-token' } },
    ],
    contexts: [
      { name: 'main', context: { cluster: 'c', user: 'u' } },
      { name: 'other', context: { cluster: 'other', user: 'other' } },
    ],
    ...(current ? { 'current-context': current } : {}),
    ...extra,
  });
}

const base = { mode: 'standalone' as const, id: 'prod-eu', server: 'https://record.example:443', caData: b64('RECORD CA'), omeNamespace: 'ome' };
const kubeconfigRecord = (text: string, context?: string): ClusterRecord => ({ ...base, credentials: { kind: 'kubeconfig', kubeconfig: text, ...(context ? { context } : {}) } });
const eksRecord: ClusterRecord = { ...base, credentials: { kind: 'eks', clusterName: 'prod', region: 'eu-west-1' } };
const secretRecord: ClusterRecord = { ...base, credentials: { kind: 'secret' } };
const fileRecord = (path: string, context?: string): ClusterRecord => ({ ...base, credentials: { kind: 'kubeconfig-file', path, ...(context ? { context } : {}) } });
const DEPLOYED: ConnectionPolicy = { mode: 'deployed', functionName: 'pin' };

/** What the connection puts on a request, with buffers as text. */
async function applied(record: ClusterRecord, resolved?: ResolvedCredentials, policy?: ConnectionPolicy): Promise<{ server: string; options: Record<string, unknown> }> {
  const connection = connectionFromRecord(record, resolved, policy);
  const options: ConnectionRequestOptions = { headers: {} };
  await connection.applyTo(options);
  const readable = Object.fromEntries(Object.entries(options).map(([key, value]) => [key, Buffer.isBuffer(value) ? value.toString('utf8') : value]));
  return { server: connection.server, options: readable };
}

describe('Function: connectionFromRecord', () => {
  describe('kubeconfig records', () => {
    it.each<[string, ClusterRecord, { server: string; options: Record<string, unknown> }]>([
      [
        'current context, token, CA data',
        kubeconfigRecord(kubeconfig({ cluster: { server: 'https://main.example:6443/', 'certificate-authority-data': b64('CA DATA') } })),
        { server: 'https://main.example:6443', options: { headers: { Authorization: 'Bearer main-token' }, ca: 'CA DATA' } },
      ],
      [
        "the record's context over the current one",
        kubeconfigRecord(kubeconfig(), 'other'),
        { server: 'https://other.example', options: { headers: { Authorization: 'Bearer other-token' } } },
      ],
      [
        'CA file, tls-server-name',
        kubeconfigRecord(kubeconfig({ cluster: { server: 'https://10.0.0.1', 'certificate-authority': caFile, 'tls-server-name': 'api.internal' } })),
        { server: 'https://10.0.0.1', options: { headers: { Authorization: 'Bearer main-token' }, ca: 'CA FROM FILE', servername: 'api.internal' } },
      ],
      [
        'insecure-skip-tls-verify',
        kubeconfigRecord(kubeconfig({ cluster: { server: 'https://main.example', 'insecure-skip-tls-verify': true } })),
        { server: 'https://main.example', options: { headers: { Authorization: 'Bearer main-token' }, rejectUnauthorized: false } },
      ],
      [
        'client certificate data',
        kubeconfigRecord(kubeconfig({ user: { 'client-certificate-data': b64('CERT DATA'), 'client-key-data': b64('KEY DATA') } })),
        { server: 'https://main.example:6443', options: { headers: {}, cert: 'CERT DATA', key: 'KEY DATA' } },
      ],
      [
        'client certificate files',
        kubeconfigRecord(kubeconfig({ user: { 'client-certificate': certFile, 'client-key': keyFile } })),
        { server: 'https://main.example:6443', options: { headers: {}, cert: 'CERT FROM FILE', key: 'KEY FROM FILE' } },
      ],
      [
        'tokenFile (kubectl spelling), trimmed',
        kubeconfigRecord(kubeconfig({ user: { tokenFile } })),
        { server: 'https://main.example:6443', options: { headers: { Authorization: 'Bearer token-from-file' } } },
      ],
      [
        'token-file (client-node spelling)',
        kubeconfigRecord(kubeconfig({ user: { 'token-file': tokenFile } })),
        { server: 'https://main.example:6443', options: { headers: { Authorization: 'Bearer token-from-file' } } },
      ],
      [
        'basic auth and impersonation',
        kubeconfigRecord(kubeconfig({ user: { username: 'admin', password: 'pw', as: 'jane' } })),
        { server: 'https://main.example:6443', options: { headers: { 'Impersonate-User': 'jane' }, auth: 'admin:pw' } },
      ],
      [
        'a plain-HTTP server and a user with no credentials (the embedded API server)',
        kubeconfigRecord(kubeconfig({ cluster: { server: 'http://127.0.0.1:8080', 'insecure-skip-tls-verify': true }, user: {} })),
        { server: 'http://127.0.0.1:8080', options: { headers: {}, rejectUnauthorized: false } },
      ],
      [
        'JSON instead of YAML',
        kubeconfigRecord(JSON.stringify({ clusters: [{ name: 'j', cluster: { server: 'https://json.example' } }], contexts: [{ name: 'j', context: { cluster: 'j' } }], 'current-context': 'j' })),
        { server: 'https://json.example', options: { headers: {} } },
      ],
    ])('%s', async (_name, record, expected) => {
      expect(await applied(record)).toEqual(expected);
    });

    it('reads a token file again for every request, so a rotated token is used', async () => {
      const rotating = file('rotating-token', 'first');
      const connection = connectionFromRecord(kubeconfigRecord(kubeconfig({ user: { tokenFile: rotating } })));
      const first: ConnectionRequestOptions = { headers: {} };
      await connection.applyTo(first);
      writeFileSync(rotating, 'second');
      const second: ConnectionRequestOptions = { headers: {} };
      await connection.applyTo(second);
      expect([first.headers.Authorization, second.headers.Authorization]).toEqual(['Bearer first', 'Bearer second']);
    });

    it.each<[string, ClusterRecord, string]>([
      ['an exec plugin', kubeconfigRecord(kubeconfig({ user: { exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: 'aws', args: ['eks', 'get-token'] } } })), 'runs a credential plugin (exec: aws); functions cannot run credential plugins'],
      ['an auth-provider plugin', kubeconfigRecord(kubeconfig({ user: { 'auth-provider': { name: 'gcp', config: {} } } })), 'uses an auth provider plugin (auth-provider: gcp); functions cannot run credential plugins'],
      ['no current context and none named', kubeconfigRecord(kubeconfig({ current: '' })), 'no usable kubeconfig'],
      ['an unknown context', kubeconfigRecord(kubeconfig(), 'nope'), 'context "nope" does not exist'],
      ['a context naming an undefined cluster', kubeconfigRecord(kubeconfig({ extra: { contexts: [{ name: 'main', context: { cluster: 'gone', user: 'u' } }] } })), 'names a cluster that is not defined'],
      ['a context naming an undefined user', kubeconfigRecord(kubeconfig({ extra: { contexts: [{ name: 'main', context: { cluster: 'c', user: 'gone' } }] } })), 'names a user that is not defined'],
      ['a cluster without a server', kubeconfigRecord(kubeconfig({ cluster: {} })), 'cluster "c" has no server'],
      ['a server that is not a URL', kubeconfigRecord(kubeconfig({ cluster: { server: 'main.example:6443' } })), 'must be an https:// (or http://) URL'],
      ['a proxy', kubeconfigRecord(kubeconfig({ cluster: { server: 'https://main.example', 'proxy-url': 'http://proxy:3128' } })), 'proxy-url is not supported'],
      ['a certificate without its key', kubeconfigRecord(kubeconfig({ user: { 'client-certificate-data': b64('CERT') } })), 'needs both client-certificate(-data) and client-key(-data)'],
      ['a missing CA file', kubeconfigRecord(kubeconfig({ cluster: { server: 'https://main.example', 'certificate-authority': join(dir, 'missing.crt') } })), 'cannot read certificate-authority'],
      ['text that is not YAML', kubeconfigRecord('clusters: [unclosed'), 'the kubeconfig is not valid YAML or JSON'],
      ['a YAML scalar', kubeconfigRecord('just text'), 'the kubeconfig is not a mapping'],
      ['clusters that are not a list', kubeconfigRecord(stringify({ clusters: { c: {} }, contexts: [{ name: 'main', context: { cluster: 'c' } }], 'current-context': 'main' })), 'the kubeconfig\'s "clusters" must be a list'],
    ])('refuses %s with an InvalidInputError naming the cluster', (_name, record, message) => {
      const attempt = (): unknown => connectionFromRecord(record);
      expect(attempt).toThrow(InvalidInputError);
      expect(attempt).toThrow(`cluster prod-eu: `);
      expect(attempt).toThrow(message);
    });

    it('says what to store instead of a credential plugin, and never quotes the kubeconfig', () => {
      const record = kubeconfigRecord(kubeconfig({ user: { exec: { command: 'aws' }, token: 'do-not-log' } }));
      expect(() => connectionFromRecord(record)).toThrow(/a token .*a client certificate .*EKS record/);
      expect(() => connectionFromRecord(record)).not.toThrow(/do-not-log/);
      expect(() => connectionFromRecord(kubeconfigRecord('token: do-not-log\n  bad: [indent'))).not.toThrow(/do-not-log/);
    });
  });

  describe('token records', () => {
    it.each<[string, ClusterRecord, ResolvedCredentials, { server: string; options: Record<string, unknown> }]>([
      ['EKS: the resolved endpoint and CA, not the record\'s', eksRecord, { token: 'k8s-aws-v1.abc', server: 'https://eks.example', caData: b64('EKS CA') }, { server: 'https://eks.example', options: { headers: { Authorization: 'Bearer k8s-aws-v1.abc' }, ca: 'EKS CA' } }],
      ['secret JSON token: its server and CA, not the record\'s', secretRecord, { token: 'sa-token', server: 'https://secret.example', caData: b64('SECRET CA') }, { server: 'https://secret.example', options: { headers: { Authorization: 'Bearer sa-token' }, ca: 'SECRET CA' } }],
      ["secret JSON token without a CA: the system's roots, never the record's CA", secretRecord, { token: 'sa-token', server: 'https://secret.example' }, { server: 'https://secret.example', options: { headers: { Authorization: 'Bearer sa-token' } } }],
      ['a plain-HTTP server', { ...secretRecord, caData: undefined }, { token: 'sa-token', server: 'http://127.0.0.1:8080' }, { server: 'http://127.0.0.1:8080', options: { headers: { Authorization: 'Bearer sa-token' } } }],
    ])('%s', async (_name, record, resolved, expected) => {
      expect(await applied(record, resolved)).toEqual(expected);
    });

    it('reads a secret holding a kubeconfig like a kubeconfig record', async () => {
      expect(await applied(secretRecord, { kubeconfig: kubeconfig() })).toEqual({ server: 'https://main.example:6443', options: { headers: { Authorization: 'Bearer main-token' } } });
    });

    it.each<[string, ClusterRecord, ResolvedCredentials, string]>([
      ['unresolved secret credentials', secretRecord, {}, 'must be resolved to a token or a kubeconfig first'],
      ['unresolved EKS credentials', eksRecord, {}, 'must be resolved'],
      ['a resolved server that is not a URL', eksRecord, { token: 't', server: 'eks.example' }, 'must be an https:// (or http://) URL'],
      // A token never falls back to the record's server: whoever writes the table could point it anywhere.
      ['a secret token without a server', secretRecord, { token: 'sa-token' }, 'the secret credentials resolved to a token without a server; a token goes only to the server the secret names ("server", with its CA in "caData"), never to the record\'s server'],
      ['an EKS token without an endpoint', eksRecord, { token: 'k8s-aws-v1.abc' }, 'the eks credentials resolved to a token without a server; a token goes only to the endpoint EKS DescribeCluster reports, never to the record\'s server'],
    ])('refuses %s', (_name, record, resolved, message) => {
      expect(() => connectionFromRecord(record, resolved)).toThrow(InvalidInputError);
      expect(() => connectionFromRecord(record, resolved)).toThrow(message);
    });
  });

  describe('over HTTP', () => {
    let server: CannedServer;
    let client: ClosableClusterClient;

    beforeEach(async () => {
      server = await startCannedServer();
    });
    afterEach(async () => {
      client.close();
      await server.stop();
    });

    it('sends the token of a kubeconfig record to a plain-HTTP server', async () => {
      const text = kubeconfig({ cluster: { server: server.url }, user: { tokenFile } });
      client = createClusterClient(connectionFromRecord(kubeconfigRecord(text)), { requestTimeoutMs: 5000 });
      await client.get(Resources.deployments, 'ome', 'settings');
      expect(server.requests[0]).toMatchObject({ method: 'GET', path: '/apis/apps/v1/namespaces/ome/deployments/settings' });
      expect(server.requests[0]?.headers.authorization).toBe('Bearer token-from-file');
    });

    it('sends a resolved token', async () => {
      client = createClusterClient(connectionFromRecord(eksRecord, { token: 'k8s-aws-v1.abc', server: server.url }), { requestTimeoutMs: 5000 });
      await client.get(Resources.deployments, 'ome', 'settings');
      expect(server.requests[0]?.headers.authorization).toBe('Bearer k8s-aws-v1.abc');
    });
  });

  describe('deployed mode', () => {
    const https = 'https://main.example:6443';
    it.each<[string, ClusterRecord, ResolvedCredentials, string]>([
      ['a kubeconfig record (credentials in the table)', kubeconfigRecord(kubeconfig()), {}, 'kubeconfig records keep credentials in the table and are refused in deployed mode; register the cluster as {"kind": "secret"}'],
      ['a kubeconfig-file record (a file on the operator\'s machine)', fileRecord(file('deployed-file', kubeconfig())), {}, 'kubeconfig-file records name a file on the operator\'s machine and work only with npm start; register the cluster as {"kind": "secret"}'],
      ['a client certificate file', secretRecord, { kubeconfig: kubeconfig({ user: { 'client-certificate': certFile, 'client-key-data': b64('KEY') } }) }, 'client-certificate names a file, and deployed functions read no files; put the file\'s base64 content in client-certificate-data instead'],
      ['a client key file', secretRecord, { kubeconfig: kubeconfig({ user: { 'client-certificate-data': b64('CERT'), 'client-key': keyFile } }) }, 'client-key names a file, and deployed functions read no files; put the file\'s base64 content in client-key-data instead'],
      ['a CA file', secretRecord, { kubeconfig: kubeconfig({ cluster: { server: https, 'certificate-authority': caFile } }) }, 'certificate-authority names a file, and deployed functions read no files; put the file\'s base64 content in certificate-authority-data instead'],
      ['a tokenFile', secretRecord, { kubeconfig: kubeconfig({ user: { tokenFile } }) }, 'tokenFile names a file, and deployed functions read no files; put the token itself in "token" instead'],
      ['a token-file', secretRecord, { kubeconfig: kubeconfig({ user: { 'token-file': tokenFile } }) }, 'token-file names a file, and deployed functions read no files; put the token itself in "token" instead'],
      ['a plain-HTTP server in a kubeconfig', secretRecord, { kubeconfig: kubeconfig({ cluster: { server: 'http://main.example:8080' } }) }, 'server "http://main.example:8080" is plain HTTP, which deployed functions refuse (tokens would cross the network in clear); use the API server\'s https:// URL'],
      ['a plain-HTTP server in a token secret', secretRecord, { token: 'sa-token', server: 'http://secret.example' }, 'server "http://secret.example" is plain HTTP'],
      ['a plain-HTTP EKS endpoint', eksRecord, { token: 'k8s-aws-v1.abc', server: 'http://eks.example' }, 'server "http://eks.example" is plain HTTP'],
      ['insecure-skip-tls-verify', secretRecord, { kubeconfig: kubeconfig({ cluster: { server: https, 'insecure-skip-tls-verify': true } }) }, 'insecure-skip-tls-verify is refused in deployed mode (anyone on the path could take the credentials); remove it and set certificate-authority-data to the API server\'s CA'],
    ])('refuses %s, saying what to do instead', (_name, record, resolved, message) => {
      const attempt = (): unknown => connectionFromRecord(record, resolved, DEPLOYED);
      expect(attempt).toThrow(InvalidInputError);
      expect(attempt).toThrow('cluster prod-eu: ');
      expect(attempt).toThrow(message);
    });

    it.each<[string, ClusterRecord, ResolvedCredentials]>([
      ['a kubeconfig record', kubeconfigRecord(kubeconfig({ cluster: { server: 'http://main.example:8080', 'insecure-skip-tls-verify': true }, user: { tokenFile } })), {}],
      ['a secret kubeconfig with files', secretRecord, { kubeconfig: kubeconfig({ cluster: { server: https, 'certificate-authority': caFile }, user: { 'client-certificate': certFile, 'client-key': keyFile } }) }],
      ['a plain-HTTP token server', secretRecord, { token: 'sa-token', server: 'http://127.0.0.1:8080' }],
    ])('accepts the same in local mode: %s', (_name, record, resolved) => {
      expect(() => connectionFromRecord(record, resolved, { mode: 'local' })).not.toThrow();
    });

    it.each<[string, ClusterRecord, ResolvedCredentials, { server: string; options: Record<string, unknown> }]>([
      ['a secret kubeconfig with inline data', secretRecord, { kubeconfig: kubeconfig({ cluster: { server: https, 'certificate-authority-data': b64('CA') }, user: { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') } }) }, { server: https, options: { headers: {}, ca: 'CA', cert: 'CERT', key: 'KEY' } }],
      ['an EKS token over HTTPS', eksRecord, { token: 'k8s-aws-v1.abc', server: 'https://eks.example', caData: b64('EKS CA') }, { server: 'https://eks.example', options: { headers: { Authorization: 'Bearer k8s-aws-v1.abc' }, ca: 'EKS CA' } }],
    ])('connects with %s', async (_name, record, resolved, expected) => {
      expect(await applied(record, resolved, DEPLOYED)).toEqual(expected);
    });
  });

  describe('kubeconfig-file records (local)', () => {
    /** The embedded cluster's file: one context per function, plus the admin context as current. */
    const perFunction = file(
      'per-function',
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: 'https://file.example' } }],
        users: [
          { name: 'admin', user: { token: 'admin-token' } },
          { name: 'pin', user: { token: 'pin-token' } },
          { name: 'other', user: { token: 'other-token' } },
        ],
        contexts: [
          { name: 'admin', context: { cluster: 'c', user: 'admin' } },
          { name: 'pin', context: { cluster: 'c', user: 'pin' } },
          { name: 'other', context: { cluster: 'c', user: 'other' } },
        ],
        'current-context': 'admin',
      }),
    );

    it.each<[string, ClusterRecord, string | undefined, string]>([
      ["the function's own context when the file has it", fileRecord(perFunction, 'other'), 'pin', 'Bearer pin-token'],
      ["the record's context when the file has none for the function", fileRecord(perFunction, 'other'), 'drift-check', 'Bearer other-token'],
      ["the file's current context otherwise", fileRecord(perFunction), 'drift-check', 'Bearer admin-token'],
      ['the current context for a caller without a name', fileRecord(perFunction), undefined, 'Bearer admin-token'],
    ])('uses %s', async (_name, record, functionName, authorization) => {
      const { options } = await applied(record, {}, { mode: 'local', ...(functionName ? { functionName } : {}) });
      expect((options.headers as Record<string, unknown>).Authorization).toBe(authorization);
    });

    it('reads the file when the client is built, so a rewritten file is picked up by the next client', async () => {
      const path = file('rewritten', kubeconfig());
      const before = await applied(fileRecord(path));
      writeFileSync(path, kubeconfig({ user: { token: 'new-token' } }));
      const after = await applied(fileRecord(path));
      expect([before.options.headers, after.options.headers]).toEqual([{ Authorization: 'Bearer main-token' }, { Authorization: 'Bearer new-token' }]);
    });

    it('refuses a missing file without quoting anything but its path', () => {
      expect(() => connectionFromRecord(fileRecord(join(dir, 'absent')))).toThrow(`cluster prod-eu: cannot read kubeconfig file ${join(dir, 'absent')}: ENOENT`);
    });

    it('never runs a credential plugin: the static reader refuses exec', () => {
      const path = file('exec', kubeconfig({ user: { exec: { command: 'aws' } } }));
      expect(() => connectionFromRecord(fileRecord(path))).toThrow('functions cannot run credential plugins');
    });
  });
});

describe('Function: kubeconfigFileContextFor', () => {
  it.each<[readonly string[], string | undefined, string | undefined, string | undefined]>([
    [['admin', 'pin'], 'admin', 'pin', 'pin'],
    [['admin', 'pin'], 'admin', 'drift-check', 'admin'],
    [['admin', 'pin'], undefined, 'drift-check', undefined],
    [['admin', 'pin'], undefined, undefined, undefined],
    [['admin'], 'ops', undefined, 'ops'],
  ])('contexts %j, record %s, function %s: %s', (names, recordContext, functionName, expected) => {
    expect(kubeconfigFileContextFor(names, recordContext, functionName)).toBe(expected);
  });
});
