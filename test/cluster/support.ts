/** Helpers shared by the embedded-cluster tests: kubectl as a subprocess, temp dirs. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const FIXTURE_CRDS = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'crds');
/** This repository's bin/, first on kubectl's PATH, so `kubectl ome` runs the plugin. */
const BIN_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin');

export interface KubectlResult {
  stdout: string;
  stderr: string;
  code: number;
}

/** A scratch directory with the cluster's kubeconfig and kubectl's own cache in it. */
export class KubectlHarness {
  readonly dir = mkdtempSync(join(tmpdir(), 'embedded-kubectl-'));
  readonly kubeconfig = join(this.dir, 'kubeconfig');

  constructor(cluster: { kubeconfig: string }) {
    writeFileSync(this.kubeconfig, cluster.kubeconfig);
  }

  private argv(args: string[]): string[] {
    return ['--kubeconfig', this.kubeconfig, '--cache-dir', join(this.dir, 'cache'), ...args];
  }

  private env(): NodeJS.ProcessEnv {
    return { ...process.env, HOME: this.dir, KUBECONFIG: this.kubeconfig, PATH: `${BIN_DIR}${delimiter}${process.env.PATH ?? ''}` };
  }

  /** Writes a file in the scratch directory and returns its path. */
  file(name: string, text: string): string {
    const path = join(this.dir, name);
    writeFileSync(path, text);
    return path;
  }

  run(...args: string[]): Promise<KubectlResult> {
    return new Promise((resolve) => {
      execFile('kubectl', this.argv(args), { env: this.env(), timeout: 30_000 }, (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ stdout, stderr, code });
      });
    });
  }

  /** `kubectl ome ARGS`: kubectl takes no flags before a plugin's name, so the kubeconfig goes by KUBECONFIG. */
  plugin(...args: string[]): Promise<KubectlResult> {
    return new Promise((resolve) => {
      execFile('kubectl', ['ome', ...args], { env: this.env(), timeout: 60_000 }, (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ stdout, stderr, code });
      });
    });
  }

  spawn(...args: string[]): ChildProcess {
    return spawn('kubectl', this.argv(args), { env: this.env(), stdio: ['ignore', 'pipe', 'pipe'] });
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Replaces ages (`0s`, `12s`, `3m4s`) that end a table line, so tables compare exactly. */
export function maskAges(text: string): string {
  return text.replace(/ (\d+[smhdy])+$/gm, ' <age>');
}

/** Collects a stream's text as it arrives. */
export function collect(stream: NodeJS.ReadableStream | null): { text: () => string } {
  let text = '';
  stream?.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  return { text: () => text };
}

/** Polls `check` until it returns true; fails with `describe()` after the timeout. */
export async function eventually(check: () => boolean, describe: () => string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out; last state:\n${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
