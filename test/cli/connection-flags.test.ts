/**
 * kubectl's connection flags on `kubectl ome`, through the real kubectl against the embedded
 * API server, which authenticates tokens, impersonates and authorizes by RBAC: `--as`,
 * `--as-group`, `--server`, `--token`, `--certificate-authority`,
 * `--insecure-skip-tls-verify`, `--user`, `--cluster`, and `-v=6` naming the request that
 * failed. A 403 or 404 shows as the API server said it, under the guarded commands' fixed message.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as toYaml } from 'yaml';

import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { Resources } from '../../shared/domain/model/resources';
import { driftedChat } from './fixtures';

const SERVICE_ACCOUNTS = { group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true } as const;
const BIN = resolve(__dirname, '../../bin');
const VIEWER = 'system:serviceaccount:prod:viewer';
const FORBIDDEN_GET = `Error from server (Forbidden): inferenceservices.ome.io "chat" is forbidden: User "${VIEWER}" cannot get resource "inferenceservices" in API group "ome.io" in the namespace "prod"`;
const REQUEST_FAILED = 'error: required Kubernetes API request failed; check access and connectivity';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let cluster: EmbeddedCluster;
let dir: string;
let kubeconfig: string;
let caFile: string;
let viewerToken: string;

function kubectl(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((done) => {
    const child = execFile(
      'kubectl',
      args,
      { env: { ...process.env, PATH: `${BIN}:${process.env.PATH ?? ''}`, KUBECONFIG: kubeconfig, ...env }, timeout: 50_000 },
      (error, stdout, stderr) => done({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

beforeAll(async () => {
  cluster = await startEmbeddedCluster();
  dir = await mkdtemp(join(tmpdir(), 'kubectl-ome-flags-'));
  await cluster.client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prod' } });
  const { uid: _uid, resourceVersion: _rv, generation: _gen, ...meta } = driftedChat().metadata;
  const { status: _status, ...chat } = driftedChat();
  await cluster.client.create(Resources.inferenceServices, { ...chat, metadata: meta });
  await cluster.client.create(SERVICE_ACCOUNTS, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'viewer', namespace: 'prod' } });
  viewerToken = cluster.serviceAccountToken('prod', 'viewer');
  caFile = join(dir, 'ca.crt');
  await writeFile(caFile, Buffer.from(cluster.caData, 'base64'));
  // The operator's kubeconfig, plus a user holding the viewer's token and a second name for the cluster.
  const config = parseYaml(cluster.kubeconfig) as {
    clusters: Array<{ name: string; cluster: Record<string, unknown> }>;
    users: Array<{ name: string; user: Record<string, unknown> }>;
  };
  config.users.push({ name: 'viewer', user: { token: viewerToken } });
  config.clusters.push({ name: 'unreachable', cluster: { server: 'https://127.0.0.1:1' } });
  kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, toYaml(config), { mode: 0o600 });
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('kubectl ome with kubectl connection flags', () => {
  it('--as impersonates: a guarded command shows the 403 under its fixed message', async () => {
    const result = await kubectl(['ome', 'rollout', 'repin', 'chat', '-n', 'prod', '--yes', '--as', VIEWER]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`${REQUEST_FAILED}\n${FORBIDDEN_GET}\n`);
    expect(result.stdout).toBe('');
  });

  it('--as with --as-group system:masters is allowed', async () => {
    const result = await kubectl(['ome', 'rollout', 'explain', 'chat', '-n', 'prod', '--as', 'someone', '--as-group', 'system:masters']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it('-v=6 logs the request that failed and its status on stderr', async () => {
    const result = await kubectl(['ome', 'rollout', 'repin', 'chat', '-n', 'prod', '--yes', '--as', VIEWER, '-v=6']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(`kubectl-ome\\] GET ${cluster.httpsUrl.replace(/[.]/g, '\\.')}/apis/ome\\.io/v1beta1/namespaces/prod/inferenceservices/chat 403 Forbidden in \\d+ milliseconds\\n`),
    );
    const quiet = await kubectl(['ome', 'rollout', 'repin', 'chat', '-n', 'prod', '--yes', '--as', VIEWER]);
    expect(quiet.stderr).not.toContain('kubectl-ome]');
  });

  it('a missing InferenceService is NotFound, not a generic failure', async () => {
    const result = await kubectl(['ome', 'rollout', 'repin', 'nope', '-n', 'prod', '--yes']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`${REQUEST_FAILED}\nError from server (NotFound): inferenceservices.ome.io "nope" not found\n`);
  });

  it('--user picks another kubeconfig user', async () => {
    const result = await kubectl(['ome', 'rollout', 'repin', 'chat', '-n', 'prod', '--yes', '--user', 'viewer']);
    expect(result.stderr).toBe(`${REQUEST_FAILED}\n${FORBIDDEN_GET}\n`);
  });

  it('--cluster picks another kubeconfig cluster', async () => {
    const result = await kubectl(['ome', 'rollout', 'explain', 'chat', '-n', 'prod', '--cluster', 'unreachable', '--insecure-skip-tls-verify']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('127.0.0.1:1');
  });

  it('--server, --token and --certificate-authority work without a kubeconfig', async () => {
    const flags = ['--server', cluster.httpsUrl, '--certificate-authority', caFile];
    const env = { KUBECONFIG: join(dir, 'absent'), HOME: dir };
    const admin = await kubectl(['ome', 'rollout', 'explain', 'chat', '-n', 'prod', ...flags, '--token', cluster.adminToken], env);
    expect(admin.stderr).toBe('');
    expect(admin.code).toBe(0);
    expect(admin.stdout).toMatch(/^VIEW +ITEM +DETAIL\n/);
    const viewer = await kubectl(['ome', 'rollout', 'repin', 'chat', '-n', 'prod', '--yes', ...flags, '--token', viewerToken], env);
    expect(viewer.stderr).toBe(`${REQUEST_FAILED}\n${FORBIDDEN_GET}\n`);
  });

  it('--insecure-skip-tls-verify connects without the CA; without either the certificate is refused', async () => {
    const env = { KUBECONFIG: join(dir, 'absent'), HOME: dir };
    const flags = ['ome', 'rollout', 'explain', 'chat', '-n', 'prod', '--server', cluster.httpsUrl, '--token', cluster.adminToken];
    const insecure = await kubectl([...flags, '--insecure-skip-tls-verify'], env);
    expect(insecure.code).toBe(0);
    const untrusted = await kubectl(flags, env);
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toMatch(/certificate/i);
  });
});
