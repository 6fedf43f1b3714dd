/**
 * `npm run cluster -- --data-dir DIR`: writes DIR/kubeconfig (and the function identities'
 * DIR/clusters/local.kubeconfig), answers only authenticated requests, prints `ready` once the
 * project's CRDs (infra/crds) are served and namespace `ome` exists, stops on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { collect, eventually } from './support';

describe('npm run cluster', () => {
  const dir = mkdtempSync(join(tmpdir(), 'embedded-main-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints ready with the CRDs served and namespace ome present, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'local/cluster/main.ts', '--data-dir', join(dir, 'data')], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = collect(child.stdout);
    const err = collect(child.stderr);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await eventually(() => out.text().includes('ready\n'), () => `${out.text()}${err.text()}`, 60_000);
      const kubeconfig = join(dir, 'data', 'kubeconfig');
      expect(existsSync(kubeconfig)).toBe(true);
      const server = /embedded API server at (\S+)/.exec(err.text())?.[1] ?? '';
      const config = parse(readFileSync(kubeconfig, 'utf8')) as { users: Array<{ user: { token: string } }> };
      const headers = { Authorization: `Bearer ${config.users[0]?.user.token ?? ''}` };
      const fetch = (url: string): Promise<Response> => globalThis.fetch(url, { headers });
      expect(statSync(join(dir, 'data', 'clusters', 'local.kubeconfig')).mode & 0o777).toBe(0o600);
      // No token is system:anonymous, whom RBAC refuses (kube-apiserver's default --anonymous-auth).
      expect((await globalThis.fetch(`${server}/api/v1/namespaces/ome`)).status).toBe(403);
      const crds = (await (await fetch(`${server}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`)).json()) as { items: Array<{ metadata: { name: string } }> };
      expect(crds.items.map((c) => c.metadata.name)).toEqual(expect.arrayContaining([
        'clusterbasemodels.ome.io', 'clusterservingruntimes.ome.io', 'inferenceservices.ome.io', 'rolloutpolicies.ome.io', 'servingruntimes.ome.io',
      ]));
      expect((await fetch(`${server}/apis/ome.io/v1beta1/namespaces/ome/inferenceservices`)).status).toBe(200);
      expect((await fetch(`${server}/api/v1/namespaces/ome`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
