import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { START_TIMEOUT_MS, kubectl } from './support';

/** Resolves with the output so far once a line equal to `line` appears, or rejects on exit. */
function waitForLine(child: ChildProcess, output: () => string, line: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "${line}" within ${timeoutMs} ms:\n${output()}`)), timeoutMs);
    const check = (): void => {
      if (output().split('\n').includes(line)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited with ${code} before "${line}":\n${output()}`));
    });
  });
}

function startScript(): string {
  const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  return manifest.scripts.start ?? '';
}

function waitForExit(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('npm start (the start script)', () => {
  let dataDir: string;
  let child: ChildProcess;
  let output = '';
  /** From spawn to `ready`: this machine's pace for the stop to be measured against. */
  let startMs = 0;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ome-npm-start-'));
    // The command of the `start` script, without npm around it: npm 11 answers SIGTERM by
    // dying of it at once, without waiting for its child, so only the command's own exit
    // code says whether the control plane stopped cleanly. Its own process group, so the
    // clean-up below can reach everything it started.
    const [command = '', ...args] = startScript().split(' ');
    const spawnedAt = Date.now();
    child = spawn(join('node_modules', '.bin', command), [...args, '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    await waitForLine(child, () => output, 'ready', START_TIMEOUT_MS - 10_000);
    startMs = Date.now() - spawnedAt;
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    if (child.exitCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  it('prints ready and writes a kubeconfig that kubectl uses', async () => {
    // Assess
    const kubeconfig = join(dataDir, 'kubeconfig');
    expect(existsSync(kubeconfig)).toBe(true);
    const namespaces = await kubectl(kubeconfig, ['get', 'ns', '-o', 'name']);
    expect(namespaces.split('\n')).toContain('namespace/ome');
  });

  it('tells kubectl ome dashboard where its table is: the dashboard needs no flag', async () => {
    expect(JSON.parse(readFileSync(join(dataDir, 'registry.json'), 'utf8'))).toMatchObject({ tableName: 'ome-pinning-local', endpoint: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
    const dashboard = spawn('kubectl', ['ome', 'dashboard', '--data-dir', dataDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      env: { ...process.env, PATH: `${join(process.cwd(), 'bin')}:${process.env.PATH ?? ''}`, TABLE_NAME: '', DYNAMODB_ENDPOINT: '' },
    });
    let printed = '';
    dashboard.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
    dashboard.stderr?.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
    try {
      await waitForLine(dashboard, () => printed.replace(/^Serving the fleet dashboard on .*$/m, 'serving'), 'serving', 60_000);
      const url = /^Serving the fleet dashboard on (\S+)$/m.exec(printed)?.[1] ?? '';
      const snapshot = (await (await fetch(url.replace('/?token=', '/snapshot.json?token='))).json()) as { clusters: Array<{ id: string; readError?: string }> };
      expect(snapshot.clusters.map((cluster) => [cluster.id, cluster.readError])).toEqual([['local', undefined]]);
    } finally {
      if (dashboard.pid !== undefined && dashboard.exitCode === null) process.kill(-dashboard.pid, 'SIGINT');
    }
    expect(await waitForExit(dashboard)).toBe(0);
  });

  it('stops on SIGTERM with exit code 0 in a fraction of the time it took to start', async () => {
    // Act
    const started = Date.now();
    child.kill('SIGTERM');
    const code = await waitForExit(child);
    const stopMs = Date.now() - started;

    // Assess: stopping closes what starting opened, with no Java to boot and nothing to list:
    // on an idle machine 0.15 s against a 10 s start, and a busy machine slows both. A quarter
    // of the start leaves room for that and still catches a stop that waits out a timeout
    // (DynamoDB Local's 5 s exit wait, a lease's TTL) instead of being told to stop.
    expect(code).toBe(0);
    expect(stopMs).toBeLessThan(startMs / 4);
    expect(output).toContain('stopped');
    expect(existsSync(join(dataDir, 'registry.json'))).toBe(false);
  });
});
