/**
 * The Prometheus launcher: where it finds the binary, a readable error when it cannot run,
 * loopback only, its temporary data gone after stop, and no Prometheus left behind when
 * its parent dies.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEBIAN_PROMETHEUS_BINARY, findPrometheusBinary, startPrometheus } from '../../local/prometheus';
import { nonLoopbackAddresses, tryConnect } from '../support/network';
import { alive, waitFor } from '../support/processes';

const binary = findPrometheusBinary();

describe('Function: findPrometheusBinary', () => {
  it('finds a prometheus on PATH when Debian\'s is absent', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'prometheus-path-'));
    try {
      await writeFile(join(dir, 'prometheus'), '#!/bin/sh\n');
      await chmod(join(dir, 'prometheus'), 0o755);
      const found = findPrometheusBinary(`/nonexistent:${dir}`);
      expect(found).toBe(existsSync(DEBIAN_PROMETHEUS_BINARY) ? DEBIAN_PROMETHEUS_BINARY : join(dir, 'prometheus'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('Function: startPrometheus', () => {
  it('says what the binary printed when it does not start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'prometheus-broken-'));
    try {
      const broken = join(dir, 'prometheus');
      await writeFile(broken, '#!/bin/sh\necho "err=\\"no such flag\\"" >&2\nexit 3\n');
      await chmod(broken, 0o755);
      const dataDir = join(dir, 'data');
      await expect(startPrometheus({ scrapeTargets: [], binary: broken, dataDir })).rejects.toThrow(/Prometheus exited with code 3; its output:\nerr="no such flag"/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a scrape interval that is not a whole number of seconds', async () => {
    await expect(startPrometheus({ scrapeTargets: [], binary: '/bin/true', scrapeIntervalSeconds: 0.5 })).rejects.toThrow('scrapeIntervalSeconds must be a whole number of at least 1');
  });

  it.skipIf(binary === undefined)('listens on 127.0.0.1 only and removes its temporary data on stop', async () => {
    const prometheus = await startPrometheus({ scrapeTargets: [] });
    const pid = prometheus.pid as number;
    try {
      expect(prometheus.address).toBe(`http://127.0.0.1:${prometheus.port}`);
      expect(await tryConnect('127.0.0.1', prometheus.port)).toBe('connected');
      for (const address of nonLoopbackAddresses()) expect([address, await tryConnect(address, prometheus.port)]).toEqual([address, 'ECONNREFUSED']);
      const dataDir = ((await (await fetch(`${prometheus.address}/api/v1/status/flags`)).json()) as { data: Record<string, string> }).data['storage.tsdb.path'] ?? '';
      expect(existsSync(dataDir)).toBe(true);
      await prometheus.stop();
      expect(alive(pid)).toBe(false);
      expect(existsSync(join(dataDir, '..'))).toBe(false);
    } finally {
      await prometheus.stop();
    }
  });

  it.skipIf(binary === undefined)('stops Prometheus and removes its temporary data when the parent process is killed outright', async () => {
    const module = fileURLToPath(new URL('../../local/prometheus.ts', import.meta.url));
    const script = `const { startPrometheus } = await import(${JSON.stringify(module)}); const p = await startPrometheus({ scrapeTargets: [] }); const flags = await (await fetch(p.address + '/api/v1/status/flags')).json(); process.stdout.write(String(p.pid) + ' ' + flags.data['storage.tsdb.path'] + '\\n'); setInterval(() => undefined, 1000);`;
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'ignore'] });
    const [pid, tsdb] = await new Promise<[number, string]>((resolve, reject) => {
      let out = '';
      parent.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        const line = out.split('\n').find((l) => /^\d+ \S+$/.test(l));
        if (line !== undefined) resolve([Number(line.split(' ')[0]), line.split(' ')[1] ?? '']);
      });
      parent.once('exit', (code) => reject(new Error(`parent exited early with ${String(code)}`)));
    });
    expect(alive(pid)).toBe(true);
    expect(existsSync(tsdb)).toBe(true);

    parent.kill('SIGKILL');

    expect(await waitFor(() => !alive(pid), 10_000)).toBe(true);
    // Its temporary directory goes too, once it has exited.
    expect(await waitFor(() => !existsSync(join(tsdb, '..')), 10_000)).toBe(true);
  });
});
