/**
 * Helpers for the walk of the "Repin a drifted rollout plan" guide: the control plane as
 * `npm start` starts it, a user's shell (bash, the real `kubectl`, this repository's
 * `bin/` on PATH) with a kubeconfig whose context is named as the guide's reader's, a
 * terminal for the plugin's prompt, and a way to hold the bus's deliveries so that a
 * state the controller passes through quickly (evidence not yet reported, a canary still
 * scaling) can be looked at.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventsOfInvocation } from '../../local/bus';
import type { TargetHandler } from '../../local/bus';
import { startControlPlane } from '../../local/control-plane';
import type { ControlPlane } from '../../local/control-plane';
import type { ClusterMode } from '../../shared/domain/cluster-mode';
import { startUpstreamInCluster, type UpstreamInCluster } from './support';

const BIN_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin');

/** The context the walk's kubeconfig names: the guide's follow-up shows `--context=pr...`. */
export const CONTEXT = 'prod-cluster';

export interface ShellResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Which deliveries to hold: by function, and by the object a hint names (none for schedules). */
export type HoldPredicate = (functionName: string, objectName: string | undefined) => boolean;

export interface RolloutWalk {
  mode: ClusterMode;
  /** Delegate mode only: upstream's stand-in. */
  upstream?: UpstreamInCluster;
  plane: ControlPlane;
  kubeconfigPath: string;
  workDir: string;
  /** What the control plane logged, for a failing assertion's message. */
  log: string[];
  /**
   * Holds every delivery `predicate` matches (before its function runs) until the returned
   * release is called: a slow bus, as EventBridge may be. Keep holds to seconds: a held
   * delivery counts against its function's timeout.
   */
  hold(predicate: HoldPredicate): () => void;
  stop(): Promise<void>;
}

/** Starts the control plane on temporary directories with a kubeconfig named for the guide. */
export async function startRolloutWalk(mode: ClusterMode = 'standalone'): Promise<RolloutWalk> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ome-repin-data-'));
  const workDir = await mkdtemp(join(tmpdir(), 'ome-repin-work-'));
  const log: string[] = [];
  const holds = new Set<HoldPredicate>();
  let released: () => void = () => undefined;
  let nextRelease = new Promise<void>((done) => (released = done));
  const gate = (functionName: string, target: TargetHandler | undefined): TargetHandler | undefined =>
    target &&
    (async (event, context) => {
      const names = eventsOfInvocation(event).map(({ detail }) => {
        const name = (detail as { name?: unknown } | undefined)?.name;
        return typeof name === 'string' ? name : undefined;
      });
      while ([...holds].some((held) => names.some((objectName) => held(functionName, objectName)))) await nextRelease;
      return target(event, context);
    });
  let plane: ControlPlane;
  try {
    // Redeliveries (a lease held by another function) in seconds, not minutes.
    plane = await startControlPlane({ dataDir, workloadReadyDelayMs: 50, functionLogLevel: 'ERROR', log: (line) => log.push(line), wrapTarget: gate, busTimeScale: 0.01, clusterMode: mode });
  } catch (error) {
    await Promise.all([rm(dataDir, { recursive: true, force: true }), rm(workDir, { recursive: true, force: true })]);
    throw new Error(`control plane did not start: ${String(error)}\n${log.join('\n')}`);
  }
  let upstream: UpstreamInCluster | undefined;
  if (mode === 'delegate') {
    try {
      upstream = await startUpstreamInCluster(plane);
    } catch (error) {
      await plane.stop();
      await Promise.all([rm(dataDir, { recursive: true, force: true }), rm(workDir, { recursive: true, force: true })]);
      throw error;
    }
  }
  const kubeconfigPath = join(workDir, 'kubeconfig');
  await writeFile(kubeconfigPath, await readFile(join(dataDir, 'kubeconfig'), 'utf8'), { mode: 0o600 });
  const walk: RolloutWalk = {
    mode,
    ...(upstream ? { upstream } : {}),
    plane,
    kubeconfigPath,
    workDir,
    log,
    hold(predicate) {
      holds.add(predicate);
      // In delegate mode the controller is upstream's stand-in: its steps are held alike.
      const releaseUpstream = upstream?.controller.hold((step, objectName) => predicate(step, objectName));
      return () => {
        releaseUpstream?.();
        holds.delete(predicate);
        const wake = released;
        nextRelease = new Promise<void>((done) => (released = done));
        wake();
      };
    },
    async stop() {
      const wake = released;
      holds.clear();
      wake();
      await upstream?.stop();
      await plane.stop();
      await Promise.all([rm(dataDir, { recursive: true, force: true }), rm(workDir, { recursive: true, force: true })]);
    },
  };
  const renamed = await sh(walk, `kubectl config rename-context embedded ${CONTEXT}`);
  if (renamed.code !== 0) throw new Error(`kubectl config rename-context failed: ${renamed.stderr}`);
  return walk;
}

function userEnv(walk: Pick<RolloutWalk, 'kubeconfigPath'>): NodeJS.ProcessEnv {
  return { ...process.env, KUBECONFIG: walk.kubeconfigPath, PATH: `${BIN_DIR}${delimiter}${process.env.PATH ?? ''}` };
}

/** Runs one command line in bash, as the guide shows it, in the walk's working directory. Never throws on a non-zero exit. */
export function sh(walk: Pick<RolloutWalk, 'kubeconfigPath' | 'workDir'>, commandLine: string, stdin = ''): Promise<ShellResult> {
  return new Promise((done, fail) => {
    const child = spawn('bash', ['-c', commandLine], { cwd: walk.workDir, env: userEnv(walk) });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code: code ?? 1, stdout, stderr });
    });
    // A command that exits without reading its input closes the pipe under us (EPIPE); its
    // exit code and output are the result.
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
  });
}

/** Runs a command line and resolves with its stdout; rejects when it exits non-zero. */
export async function shOk(walk: Pick<RolloutWalk, 'kubeconfigPath' | 'workDir'>, commandLine: string): Promise<string> {
  const result = await sh(walk, commandLine);
  if (result.code !== 0) throw new Error(`${commandLine} exited ${result.code}: ${result.stderr}${result.stdout}`);
  return result.stdout;
}

export interface TerminalResult {
  code: number;
  /** The command's stdout (redirected to a file, as `> file` would). */
  stdout: string;
  /** What the terminal showed: stderr, the prompt and the echoed answer (CR LF line ends). */
  terminal: string;
}

/**
 * Runs a command line on a terminal (util-linux `script` gives it a pseudo-terminal, so
 * the plugin's prompt is interactive), waits for `prompt`, runs `beforeAnswer`, then types
 * `answer` and Enter. stdout goes to a file so it is exactly what the command printed.
 */
export async function runOnTerminal(
  walk: Pick<RolloutWalk, 'kubeconfigPath' | 'workDir'>,
  commandLine: string,
  options: { prompt: string; answer: string; beforeAnswer?: () => Promise<void> },
): Promise<TerminalResult> {
  const outFile = join(walk.workDir, `stdout-${Date.now()}.txt`);
  const child = spawn('script', ['--quiet', '--return', '--command', `${commandLine} > ${outFile}`, '/dev/null'], { cwd: walk.workDir, env: userEnv(walk) });
  // The terminal may close before the answer is typed; the exit code says what happened.
  child.stdin.on('error', () => undefined);
  let terminal = '';
  let answered = false;
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const exited = new Promise<number>((done, fail) => {
    child.on('error', fail);
    child.on('close', (code) => done(code ?? 1));
  });
  await new Promise<void>((done) => {
    child.stdout.on('data', (chunk: Buffer) => {
      terminal += chunk.toString();
      if (!answered && terminal.includes(options.prompt)) {
        answered = true;
        done();
      }
    });
    void exited.then(() => done());
  });
  if (answered) {
    await options.beforeAnswer?.();
    child.stdin.write(`${options.answer}\n`);
  }
  const code = await exited;
  clearTimeout(timer);
  child.stdin.end();
  const stdout = await readFile(outFile, 'utf8').catch(() => '');
  await rm(outFile, { force: true });
  return { code, stdout, terminal };
}

/**
 * Polls `read` until `accept` holds; resolves with that value. After `timeoutMs` it
 * rejects with the last value read, so a failure shows where the walk got stuck. The
 * default is generous: on a loaded machine, deliveries that lost the object's lease to
 * another function are retried with the bus's backoff, which grows to tens of seconds.
 */
export async function eventually<T>(what: string, read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!accept(value)) {
    if (Date.now() > deadline) {
      throw new Error(`${what}: not reached within ${timeoutMs} ms; last value:\n${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}`);
    }
    await new Promise((wait) => setTimeout(wait, 250));
    value = await read();
  }
  return value;
}

/** The rows of one view of `kubectl ome rollout explain`, as `ITEM  DETAIL` with single spaces. */
export function explainView(output: string, view: 'Declared' | 'Live' | 'Effective'): string[] {
  const rows: string[] = [];
  let current = '';
  for (const line of output.split('\n').slice(1)) {
    if (line.trim() === '') continue;
    const label = line.slice(0, 12).trim();
    if (label !== '') current = label;
    if (current === view) rows.push(line.slice(12).trim().replace(/\s{2,}/, '  '));
  }
  return rows;
}

/** Collects the EMF metric lines the functions print to stdout, keeping them out of the test's output. */
export function captureEmfMetrics(): { lines: string[]; restore(): void } {
  const lines: string[] = [];
  const original = process.stdout.write.bind(process.stdout) as (...args: unknown[]) => boolean;
  const capture = (chunk: unknown, ...rest: unknown[]): boolean => {
    const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString() : '';
    if (!text.includes('"_aws"')) return original(chunk, ...rest);
    lines.push(...text.split('\n').filter((line) => line.includes('"_aws"')));
    return true;
  };
  process.stdout.write = capture as typeof process.stdout.write;
  return {
    lines,
    restore() {
      process.stdout.write = original as typeof process.stdout.write;
    },
  };
}
