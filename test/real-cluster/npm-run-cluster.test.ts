/**
 * `npm run cluster -- --real`: a real control plane by hand. It writes DIR/kubeconfig, prints
 * `ready` once the CRDs and access manifests are applied, its kwok nodes are Ready and a
 * Deployment becomes Ready Pods on them; SIGTERM stops every process it started.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { collect, eventually } from '../cluster/support';
import { alive, waitFor } from '../support/processes';

const run = promisify(execFile);

/** The control-plane processes `parent` started (its children running a built binary). */
function controlPlanePids(parent: number): number[] {
  const listing = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(parent)], { encoding: 'utf8' });
  return listing
    .split('\n')
    .filter((line) => /\/(etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kwok) /.test(line))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

describe('npm run cluster -- --real', () => {
  const dir = mkdtempSync(join(tmpdir(), 'real-main-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints ready with Ready kwok nodes that run a Deployment, and stops every process on SIGTERM', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'local/cluster/main.ts', '--real', '--nodes', '2', '--data-dir', join(dir, 'data')], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = collect(child.stdout);
    const err = collect(child.stderr);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const kubectl = async (...args: string[]): Promise<string> => (await run('kubectl', ['--kubeconfig', join(dir, 'data', 'kubeconfig'), ...args])).stdout;
    let pids: number[] = [];
    try {
      await eventually(() => out.text().includes('ready\n'), () => `${out.text()}${err.text()}`, 90_000);
      expect(err.text()).toMatch(/^kube-apiserver at https:\/\/127\.0\.0\.1:\d+$/m);
      expect(await kubectl('get', 'nodes', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}')).toBe('kwok-node-0=True kwok-node-1=True ');
      expect(await kubectl('get', 'crd', 'inferenceservices.ome.io', '-o', 'name')).toBe('customresourcedefinition.apiextensions.k8s.io/inferenceservices.ome.io\n');
      await kubectl('create', 'deployment', 'web', '--image=busybox', '--replicas=2');
      const ready = async (): Promise<string> => kubectl('get', 'deployment', 'web', '-o', 'jsonpath={.status.readyReplicas}');
      let readyReplicas = '';
      const deadline = Date.now() + 60_000;
      while (readyReplicas !== '2' && Date.now() < deadline) {
        readyReplicas = await ready();
        if (readyReplicas !== '2') await new Promise((resolveDelay) => setTimeout(resolveDelay, 250));
      }
      expect(readyReplicas).toBe('2');
      pids = controlPlanePids(child.pid ?? 0);
      expect(pids).toHaveLength(5);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(await waitFor(() => pids.every((pid) => !alive(pid)), 15_000)).toBe(true);
  });
});
