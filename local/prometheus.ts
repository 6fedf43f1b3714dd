/**
 * A real Prometheus (Debian's `prometheus` package, /usr/bin/prometheus) as a child process,
 * for `npm start` and tests: it scrapes the embedded clusters' simulated engine pods
 * (local/cluster/engine-metrics.ts), and canary analysis queries it over its HTTP API as it
 * would query the bundled Prometheus of an OME install. It has no authentication, so it
 * listens on 127.0.0.1 only. Like DynamoDB Local (local/dynamodb-local.ts) it never outlives
 * this process: `stop()`, the exit hook and a tiny watchdog stop it.
 */
import { spawn as spawnProcess } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { findFreePort, startWatchdog, waitForExit } from './child-process';

/** Where Debian's package puts it; then PATH is searched. */
export const DEBIAN_PROMETHEUS_BINARY = '/usr/bin/prometheus';
/**
 * The functions' environment variable naming the default metrics source of canary analysis,
 * the part upstream's `canaryAnalysis.bundledPrometheusAddress` plays.
 */
export const PROMETHEUS_ADDRESS_ENV = 'PROMETHEUS_ADDRESS';
/** What to tell a user who has none. */
export const PROMETHEUS_INSTALL_HINT = 'apt-get install prometheus';
/** Scrape interval of tests (the default); `npm start` passes 5. */
export const DEFAULT_SCRAPE_INTERVAL_SECONDS = 1;
/**
 * Samples are kept for an hour: analysis queries look back minutes (upstream advises
 * ranges within 30 minutes), and a long `npm start` session must not grow without bound.
 */
const RETENTION = '1h';
const JOB_NAME = 'ome-engines';
/** Kept so an error can show what Prometheus said before it died. */
const OUTPUT_TAIL_CHARS = 4_000;
const STOP_GRACE_MS = 5_000;

export interface PrometheusOptions {
  /** `host:port` of each metrics endpoint to scrape (path `/metrics`). */
  scrapeTargets: string[];
  /** Default 1 (tests); `npm start` uses 5. */
  scrapeIntervalSeconds?: number;
  /** Default: findPrometheusBinary(). */
  binary?: string;
  /** Holds the configuration and the TSDB; kept on stop. Default: a temporary directory, removed on stop. */
  dataDir?: string;
  /** How long to wait for `/-/ready`. Default 60 s: a busy two-core machine is slow to start it. */
  startTimeoutMs?: number;
}

export interface LocalPrometheus {
  /** `http://127.0.0.1:<port>`: the base URL of its HTTP API (`/api/v1/query`). */
  address: string;
  port: number;
  /** The running process's id; undefined while paused. */
  readonly pid: number | undefined;
  /** Stops the process and waits for it to exit; removes a temporary data directory. Safe to call twice. */
  stop(): Promise<void>;
  /** Stops the process but keeps its port, configuration and data, so a test can simulate an outage. */
  pause(): Promise<void>;
  /** Starts the paused process again on the same port and data; resolves once it is ready. */
  resume(): Promise<void>;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The Prometheus binary to run: Debian's, else the first `prometheus` on PATH; undefined when none is installed. */
export function findPrometheusBinary(path: string | undefined = process.env.PATH): string | undefined {
  const candidates = [DEBIAN_PROMETHEUS_BINARY, ...(path ?? '').split(delimiter).filter((dir) => dir !== '').map((dir) => join(dir, 'prometheus'))];
  return candidates.find(isExecutable);
}

/** `binary` when it is an executable file (undefined when not), else findPrometheusBinary(). */
export function resolvePrometheusBinary(binary?: string): string | undefined {
  if (binary === undefined) return findPrometheusBinary();
  return isExecutable(binary) ? binary : undefined;
}

/**
 * The whole configuration: one job over the given targets. `honor_labels` keeps the labels
 * the pods expose (`namespace`, `pod`, ...) as they are, as the bundled Prometheus's
 * relabelling gives them, instead of renaming clashes to `exported_*`.
 */
export function renderPrometheusConfig(targets: readonly string[], intervalSeconds: number): string {
  const interval = `${intervalSeconds}s`;
  const lines = [
    'global:',
    `  scrape_interval: ${interval}`,
    `  scrape_timeout: ${interval}`,
    `  evaluation_interval: ${interval}`,
    'scrape_configs:',
    `  - job_name: ${JOB_NAME}`,
    '    honor_labels: true',
    '    metrics_path: /metrics',
    '    static_configs:',
    `      - targets: [${targets.map((target) => JSON.stringify(target)).join(', ')}]`,
  ];
  return `${lines.join('\n')}\n`;
}

/** True once this port answers as a ready Prometheus (another local server may have taken the port). */
async function isReady(address: string): Promise<boolean> {
  try {
    const response = await fetch(`${address}/-/ready`, { signal: AbortSignal.timeout(1_000) });
    return response.ok && /Prometheus/i.test(await response.text());
  } catch {
    return false;
  }
}

/** Prometheus logs logfmt lines; the last ones say why it stopped. */
function summarise(output: string): string {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(-10)
    .join('\n');
}

interface Running {
  child: ChildProcess;
  watchdog: ChildProcess | undefined;
  killOnExit: () => void;
}

interface Launch {
  binary: string;
  /** Removed by the watchdog when this process dies outright. */
  temporaryDir: string | undefined;
  args: string[];
  address: string;
  startTimeoutMs: number;
}

/** Starts the process and resolves once it is ready; kills it and throws when it is not. */
async function launch(spec: Launch): Promise<Running> {
  // Its own process group: a Ctrl-C at the terminal reaches `npm start`, which stops it in order.
  const child = spawnProcess(spec.binary, spec.args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let tail = '';
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exitReason: string | undefined;
  child.once('error', (error) => {
    exitReason = `could not run ${spec.binary}: ${error.message}`;
  });
  child.once('exit', (code, signal) => {
    exitReason ??= `exited with ${signal ?? `code ${String(code)}`}`;
  });
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const deadline = Date.now() + spec.startTimeoutMs;
  let problem: string | undefined = `did not become ready on ${spec.address} within ${spec.startTimeoutMs} ms`;
  while (Date.now() < deadline) {
    if (exitReason !== undefined) {
      problem = exitReason;
      break;
    }
    if (await isReady(spec.address)) {
      problem = undefined;
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  if (problem !== undefined) {
    process.removeListener('exit', killOnExit);
    child.kill('SIGKILL');
    await waitForExit(child, STOP_GRACE_MS);
    const output = summarise(tail);
    throw new Error(`Prometheus ${problem}${output ? `; its output:\n${output}` : ''}`);
  }
  const watchdog = child.pid === undefined ? undefined : startWatchdog('prometheus-watchdog', process.pid, child.pid, spec.temporaryDir);
  // Neither the process nor its pipes keep this process alive; the hooks above stop it.
  child.unref();
  for (const stream of [child.stdout, child.stderr]) (stream as { unref?: () => void } | null)?.unref?.();
  return { child, watchdog, killOnExit };
}

/** SIGTERM lets it close its TSDB (the data outlives a pause); SIGKILL when it does not exit in time. */
async function terminate(running: Running): Promise<void> {
  process.removeListener('exit', running.killOnExit);
  running.child.kill('SIGTERM');
  if (!(await waitForExit(running.child, STOP_GRACE_MS))) {
    running.child.kill('SIGKILL');
    await waitForExit(running.child, STOP_GRACE_MS);
  }
  if (running.watchdog?.exitCode === null) running.watchdog.kill('SIGKILL');
}

/** A picked port can be taken between the probe and the bind; then another is tried. */
const START_TRIES = 3;

/**
 * Starts Prometheus scraping `scrapeTargets` and resolves once `/-/ready` answers. Throws
 * when no binary is installed (see findPrometheusBinary) or it does not become ready.
 */
export async function startPrometheus(options: PrometheusOptions): Promise<LocalPrometheus> {
  const binary = options.binary ?? findPrometheusBinary();
  if (binary === undefined) throw new Error(`no prometheus binary (looked for ${DEBIAN_PROMETHEUS_BINARY} and on PATH); install it with \`${PROMETHEUS_INSTALL_HINT}\``);
  const interval = options.scrapeIntervalSeconds ?? DEFAULT_SCRAPE_INTERVAL_SECONDS;
  if (!Number.isInteger(interval) || interval < 1) throw new Error(`scrapeIntervalSeconds must be a whole number of at least 1 (got ${interval})`);
  const temporary = options.dataDir === undefined;
  const dataDir = temporary ? await mkdtemp(join(tmpdir(), 'ome-prometheus-')) : resolve(options.dataDir as string);
  await mkdir(join(dataDir, 'tsdb'), { recursive: true });
  const configFile = join(dataDir, 'prometheus.yml');
  await writeFile(configFile, renderPrometheusConfig(options.scrapeTargets, interval));
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const specFor = (port: number): Launch => ({
    binary,
    temporaryDir: temporary ? dataDir : undefined,
    address: `http://127.0.0.1:${port}`,
    startTimeoutMs,
    args: [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(dataDir, 'tsdb')}`,
      `--storage.tsdb.retention.time=${RETENTION}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
  });

  let spec: Launch | undefined;
  let running: Running | undefined;
  let failure: unknown;
  for (let i = 0; i < START_TRIES && running === undefined; i += 1) {
    spec = specFor(await findFreePort());
    try {
      running = await launch(spec);
    } catch (error) {
      failure = error;
      if (!/address already in use/i.test(error instanceof Error ? error.message : '')) break;
    }
  }
  if (running === undefined || spec === undefined) {
    if (temporary) await rm(dataDir, { recursive: true, force: true });
    throw failure instanceof Error ? failure : new Error(String(failure));
  }

  const launched = spec;
  let current: Running | undefined = running;
  let stopped = false;
  // One change at a time: a resume racing a stop must not leave a process behind.
  let queue: Promise<void> = Promise.resolve();
  const serially = (task: () => Promise<void>): Promise<void> => {
    const next = queue.then(task);
    queue = next.catch(() => undefined);
    return next;
  };
  const halt = async (): Promise<void> => {
    if (current === undefined) return;
    const was = current;
    current = undefined;
    await terminate(was);
  };
  return {
    address: launched.address,
    port: Number(new URL(launched.address).port),
    get pid() {
      return current?.child.pid;
    },
    pause: () => serially(halt),
    resume: () =>
      serially(async () => {
        if (stopped) throw new Error('Prometheus was stopped; it cannot resume');
        current ??= await launch(launched);
      }),
    stop: () =>
      serially(async () => {
        if (stopped) return;
        stopped = true;
        await halt();
        if (temporary) await rm(dataDir, { recursive: true, force: true });
      }),
  };
}
