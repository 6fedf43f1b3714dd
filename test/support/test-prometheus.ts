/**
 * A real, empty Prometheus for analysis tests: the Debian binary as a child process on a
 * free loopback port, with no scrape targets. An empty server is enough to answer PromQL
 * over literals (`vector(0.02)`, `0/0`), refuse a syntax error with `bad_data`, and return
 * no data for any selector.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const PROMETHEUS_BINARY = process.env.PROMETHEUS_BINARY ?? '/usr/bin/prometheus';

export interface TestPrometheus {
  readonly address: string;
  stop(): Promise<void>;
}

export function prometheusInstalled(): boolean {
  return existsSync(PROMETHEUS_BINARY);
}

/** A port nothing listens on right now (the kernel's pick, released at once). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Starts Prometheus and resolves once `/-/ready` answers 200. */
export async function startTestPrometheus(): Promise<TestPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'analysis-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  await writeFile(config, 'global:\n  scrape_interval: 1m\nscrape_configs: []\n');
  const port = await freePort();
  const address = `http://127.0.0.1:${port}`;
  const child = spawn(
    PROMETHEUS_BINARY,
    [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const stop = async () => {
    await terminate(child);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitReady(address, child, () => stderr);
  } catch (error) {
    await stop();
    throw error;
  }
  return { address, stop };
}

async function waitReady(address: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}: ${stderr()}`);
    try {
      const response = await fetch(`${address}/-/ready`);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`prometheus at ${address} not ready within 60s: ${stderr()}`);
}

function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
