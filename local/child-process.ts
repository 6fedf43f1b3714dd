/**
 * What the local services run as child processes (DynamoDB Local, Prometheus) share: a
 * watchdog that outlives a SIGKILL of this process, and a bounded wait for an exit.
 */
import { spawn as spawnProcess } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/**
 * Kills `childPid` once `parentPid` is gone, covering SIGKILL of the parent, and then
 * removes `temporaryDir` (when given) once the child has exited. `name` shows in `ps`.
 */
export function startWatchdog(name: string, parentPid: number, childPid: number, temporaryDir?: string): ChildProcess {
  const script = [
    'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done',
    'kill -0 "$1" 2>/dev/null && exit 0',
    'kill "$2" 2>/dev/null',
    'n=0; while kill -0 "$2" 2>/dev/null && [ "$n" -lt 50 ]; do sleep 0.1; n=$((n+1)); done',
    '[ -n "$3" ] && rm -rf "$3"',
    'exit 0',
  ].join('; ');
  const watchdog = spawnProcess('sh', ['-c', script, name, String(parentPid), String(childPid), temporaryDir ?? ''], { stdio: 'ignore', detached: true });
  watchdog.on('error', () => undefined);
  watchdog.unref();
  return watchdog;
}

/** Resolves true once `child` has exited, or false after `timeoutMs`. */
export function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolveExit) => {
    const timer = setTimeout(() => resolveExit(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolveExit(true);
    });
  });
}

/** A loopback port free at the time of asking (the service then binds it). */
export async function findFreePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}
