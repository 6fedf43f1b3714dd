/**
 * Runs `osls package` (offline) into a temporary directory and reads the template it
 * writes. Packaging builds in the repository's own work folders (`.serverless`,
 * `.esbuild`), so two suites packaging at once would break each other: a lock directory
 * makes them take turns. scripts/lint-template.sh takes the same lock (same name, same pid file).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export interface PackagedService {
  outDir: string;
  template: { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>; Parameters?: Record<string, Record<string, unknown>>; Conditions?: Record<string, unknown> };
  remove(): Promise<void>;
}

const LOCK = join(tmpdir(), `ome-package-lock-${createHash('sha256').update(resolve('.')).digest('hex').slice(0, 12)}`);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Takes the lock, waiting for another suite's packaging to finish (or its process to be gone). */
async function lock(): Promise<() => Promise<void>> {
  for (;;) {
    try {
      await mkdir(LOCK);
      await writeFile(join(LOCK, 'pid'), String(process.pid));
      return () => rm(LOCK, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(await readFile(join(LOCK, 'pid'), 'utf8').catch(() => '0'));
      if (holder > 0 && !alive(holder)) await rm(LOCK, { recursive: true, force: true });
      else await new Promise((wake) => setTimeout(wake, 500));
    }
  }
}

export async function packageService(stage: string): Promise<PackagedService> {
  const outDir = await mkdtemp(join(tmpdir(), 'ome-package-'));
  const release = await lock();
  try {
    await execFileAsync(join('node_modules', '.bin', 'osls'), ['package', '--package', outDir, '--stage', stage], {
      timeout: 280_000,
      env: { ...process.env, SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off' },
    });
  } finally {
    await release();
  }
  const template = JSON.parse(await readFile(join(outDir, 'cloudformation-template-update-stack.json'), 'utf8')) as PackagedService['template'];
  return { outDir, template, remove: () => rm(outDir, { recursive: true, force: true }) };
}
