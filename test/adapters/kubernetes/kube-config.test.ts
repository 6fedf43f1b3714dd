import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { KubeConfig } from '@kubernetes/client-node';
import { connectLocalCluster, connectionFromKubeConfig, loadKubeConfig, type ConnectionRequestOptions } from '../../../shared/adapters/kubernetes';
import { InvalidInputError } from '../../../shared/domain/errors';
import type { ClusterRecord } from '../../../shared/ports/store';

const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function kubeconfig(contexts: Array<[name: string, server: string]>, current?: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: contexts.map(([name, server]) => ({ name, cluster: { server } })),
    users: contexts.map(([name]) => ({ name, user: { token: `token-${name}` } })),
    contexts: contexts.map(([name]) => ({ name, context: { cluster: name, user: name } })),
    ...(current ? { 'current-context': current } : {}),
  });
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const first = file('first', kubeconfig([['shared', 'https://first.example:6443'], ['a', 'https://a.example']], 'a'));
const second = file('second', kubeconfig([['shared', 'https://second.example:6443'], ['b', 'https://b.example']], 'b'));

describe('loadKubeConfig', () => {
  it('merges the KUBECONFIG files like kubectl: the first definition and current context win, missing files are skipped', () => {
    const config = loadKubeConfig({ env: { KUBECONFIG: [join(dir, 'missing'), first, second].join(delimiter) } });
    expect(config.getCurrentContext()).toBe('a');
    expect(config.getContexts().map((context) => context.name).sort()).toEqual(['a', 'b', 'shared']);
    expect(config.getCluster('shared')?.server).toBe('https://first.example:6443');
  });

  it('picks --context, and --kubeconfig overrides KUBECONFIG', () => {
    expect(loadKubeConfig({ env: { KUBECONFIG: [first, second].join(delimiter) }, context: 'b' }).getCurrentCluster()?.server).toBe('https://b.example');
    expect(loadKubeConfig({ env: { KUBECONFIG: first }, kubeconfigPath: second }).getCurrentContext()).toBe('b');
  });

  it('reads ~/.kube/config when KUBECONFIG is unset', () => {
    const home = join(dir, 'home');
    mkdirSync(join(home, '.kube'), { recursive: true });
    writeFileSync(join(home, '.kube', 'config'), kubeconfig([['home', 'https://home.example']], 'home'));
    expect(loadKubeConfig({ env: { HOME: home } }).getCurrentCluster()?.server).toBe('https://home.example');
  });

  it.each([
    [{ env: { KUBECONFIG: first }, context: 'nope' }, 'context "nope" does not exist'],
    [{ env: {}, kubeconfigPath: join(dir, 'missing') }, 'no such file'],
    [{ env: { KUBECONFIG: file('no-current', kubeconfig([['x', 'https://x.example']])) } }, 'no usable kubeconfig'],
    [{ env: {} }, 'no usable kubeconfig'],
  ])('refuses %j', (options, message) => {
    expect(() => loadKubeConfig(options)).toThrow(InvalidInputError);
    expect(() => loadKubeConfig(options)).toThrow(message);
  });
});

describe('connectionFromKubeConfig', () => {
  function kubeConfigOf(cluster: { server: string; skipTLSVerify?: boolean; proxyUrl?: string; caData?: string }): KubeConfig {
    const config = new KubeConfig();
    config.loadFromOptions({
      clusters: [{ name: 'c', skipTLSVerify: false, ...cluster }],
      users: [{ name: 'u', token: 'the-token' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    return config;
  }

  it('applies what client-node applies: the bearer token and the CA', async () => {
    const connection = connectionFromKubeConfig(kubeConfigOf({ server: 'https://a.example', caData: Buffer.from('CA').toString('base64') }));
    const options: ConnectionRequestOptions = { headers: {} };
    await connection.applyTo(options);
    expect(connection.server).toBe('https://a.example');
    expect(connection.providesAgent).toBe(false);
    expect(options.headers.Authorization).toBe('Bearer the-token');
    expect(String(options.ca)).toBe('CA');
  });

  it('accepts a plain-HTTP server without insecure-skip-tls-verify, as kubectl does', async () => {
    const options: ConnectionRequestOptions = { headers: {} };
    await connectionFromKubeConfig(kubeConfigOf({ server: 'http://127.0.0.1:8080' })).applyTo(options);
    expect(options.headers.Authorization).toBe('Bearer the-token');
  });

  it("uses client-node's agent when the cluster has a proxy", () => {
    expect(connectionFromKubeConfig(kubeConfigOf({ server: 'https://a.example', proxyUrl: 'http://proxy:3128' })).providesAgent).toBe(true);
  });
});

describe('connectLocalCluster', () => {
  const base = { mode: 'standalone' as const, id: 'local', server: 'https://exec.example', omeNamespace: 'ome' };
  // A credential plugin as the operator's kubeconfig may hold one (aws eks get-token, gke-gcloud-auth-plugin).
  const execUser = {
    exec: {
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      command: process.execPath,
      args: ['-e', 'process.stdout.write(JSON.stringify({apiVersion:"client.authentication.k8s.io/v1beta1",kind:"ExecCredential",status:{token:"exec-token"}}))'],
    },
  };
  const execKubeconfig = stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://exec.example' } }],
    users: [{ name: 'operator', user: execUser }],
    contexts: [{ name: 'operator', context: { cluster: 'c', user: 'operator' } }],
    'current-context': 'operator',
  });

  it("runs the credential plugin of the operator's own kubeconfig file", async () => {
    const record: ClusterRecord = { ...base, credentials: { kind: 'kubeconfig-file', path: file('exec-file', execKubeconfig) } };
    const options: ConnectionRequestOptions = { headers: {} };
    await connectLocalCluster(record, {}, { mode: 'local', functionName: 'pin' }).applyTo(options);
    expect(options.headers.Authorization).toBe('Bearer exec-token');
  });

  it('never runs a plugin from a record whose kubeconfig came from the table', () => {
    const record: ClusterRecord = { ...base, credentials: { kind: 'kubeconfig', kubeconfig: execKubeconfig } };
    expect(() => connectLocalCluster(record, {}, { mode: 'local' })).toThrow('functions cannot run credential plugins');
  });

  it('never runs a plugin from a kubeconfig held in a secret', () => {
    const record: ClusterRecord = { ...base, credentials: { kind: 'secret' } };
    expect(() => connectLocalCluster(record, { kubeconfig: execKubeconfig }, { mode: 'local' })).toThrow('functions cannot run credential plugins');
  });

  it('refuses a kubeconfig-file record in deployed mode', () => {
    const record: ClusterRecord = { ...base, credentials: { kind: 'kubeconfig-file', path: file('exec-deployed', execKubeconfig) } };
    expect(() => connectLocalCluster(record, {}, { mode: 'deployed' })).toThrow('work only with npm start');
  });

  it('names the file and the missing context', () => {
    const record: ClusterRecord = { ...base, credentials: { kind: 'kubeconfig-file', path: file('exec-context', execKubeconfig), context: 'gone' } };
    expect(() => connectLocalCluster(record, {}, { mode: 'local' })).toThrow(/cluster local: kubeconfig file .*exec-context: context "gone" does not exist/);
  });
});
