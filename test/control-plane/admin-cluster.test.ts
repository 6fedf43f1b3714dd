/**
 * Onboarding in one command: `kubectl ome admin cluster register` against an embedded
 * cluster started by `npm run cluster`, with the control plane of `npm start` running; the
 * plane then serves it (the pin function pins an InferenceService there). Then list,
 * describe and deregister, and a bulk `kubectl apply -f infra/k8s/` that installs no webhook.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { LOCAL_WEBHOOK_KEY_FILE } from '../../local/webhook-key';
import { LOCAL_FRONT_DOOR_FILE } from '../../local/front-door';
import { kubectl as kubectlAt, kubectlApply, pinnedRevision, REV_090, seedManifests, START_TIMEOUT_MS, startObservedControlPlane, waitFor } from './support';
import type { ObservedControlPlane } from './support';

const ROOT = resolve(__dirname, '../..');
const BIN = join(ROOT, 'bin');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let observed: ObservedControlPlane;
let clusterDir: string;
let clusterProcess: ChildProcess | undefined;
let kubeconfig: string;

function kubectl(args: string[]): Promise<Run> {
  return new Promise((done) => {
    const child = execFile(
      'kubectl',
      args,
      { env: { ...process.env, PATH: `${BIN}:${process.env.PATH ?? ''}`, KUBECONFIG: kubeconfig }, timeout: 60_000 },
      (error, stdout, stderr) => done({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

/** `npm run cluster -- --data-dir DIR`, resolved once it prints `ready`. */
async function startNpmCluster(dataDir: string): Promise<ChildProcess> {
  const child = spawn('npm', ['run', '-s', 'cluster', '--', '--data-dir', dataDir], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  await new Promise<void>((ready, fail) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      if (line === 'ready') ready();
    });
    child.once('exit', (code) => fail(new Error(`npm run cluster exited ${code}: ${errors}`)));
  });
  return child;
}

const registry = () => ['--table', observed.plane.tableName, '--dynamodb-endpoint', observed.plane.dynamoDbEndpoint];

beforeAll(async () => {
  clusterDir = await mkdtemp(join(tmpdir(), 'ome-npm-cluster-'));
  const [plane, child] = await Promise.all([startObservedControlPlane(), startNpmCluster(clusterDir)]);
  observed = plane;
  clusterProcess = child;
  kubeconfig = join(clusterDir, 'kubeconfig');
}, START_TIMEOUT_MS);

afterAll(async () => {
  if (clusterProcess?.pid) {
    const exited = new Promise((done) => clusterProcess?.once('exit', done));
    process.kill(-clusterProcess.pid, 'SIGTERM');
    await exited;
  }
  await observed?.stop();
  if (clusterDir) await rm(clusterDir, { recursive: true, force: true });
}, 60_000);

describe('kubectl ome admin cluster', () => {
  it('refuses to register without --mode', async () => {
    const result = await kubectl(['ome', 'admin', 'cluster', 'register', 'edge-1', '--credentials', 'secret', '--skip-webhook', ...registry()]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('error: --mode is required: standalone or delegate\n');
  });

  it('onboards the cluster in one command, and the plane serves it', async () => {
    const result = await kubectl([
      'ome', 'admin', 'cluster', 'register', 'edge-1', '--mode', 'standalone',
      '--credentials', 'kubeconfig-file', '--credentials-file', join(clusterDir, 'clusters', 'local.kubeconfig'),
      '--webhook-url', observed.plane.webhookUrl ?? '', '--webhook-key-file', join(observed.dataDir, LOCAL_WEBHOOK_KEY_FILE),
      '--front-door-file', join(observed.dataDir, LOCAL_FRONT_DOOR_FILE),
      '--labels', 'env=lab,region=eu',
      ...registry(),
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^KIND +NAME +ACTION +NOTE\n/);
    expect(result.stdout).toMatch(/CustomResourceDefinition +inferenceservices\.ome\.io +present/);
    expect(result.stdout).toMatch(/Namespace +ome-pinning-system +(created|updated)/);
    expect(result.stdout).toMatch(/ClusterRole +ome-pinning-pin +(created|updated)/);
    expect(result.stdout).toMatch(/ValidatingAdmissionPolicy +\S+ +(created|updated)/);
    expect(result.stdout).toMatch(/FrontDoorEntry +cluster\/edge-1 +written +\S+front-door\.json/);
    expect(result.stdout).toMatch(/ValidatingWebhookConfiguration +ome-pinning-webhook +created/);
    expect(result.stdout).toMatch(/ClusterRecord +edge-1 +written +mode standalone\n$/);

    const urls = await kubectl(['get', 'validatingwebhookconfiguration', 'ome-pinning-webhook', '-o', 'jsonpath={.webhooks[*].clientConfig.url}']);
    expect(urls.stdout.split(' ').every((url) => url.startsWith(`${observed.plane.webhookUrl}/clusters/edge-1/`))).toBe(true);

    await kubectlApply(kubeconfig, seedManifests('0.9'));
    expect(await waitFor(() => pinnedRevision(kubeconfig), (value) => value !== '')).toBe(REV_090);
  });

  it('lists and describes the cluster with its forwarder checkpoints', async () => {
    const list = await kubectl(['ome', 'admin', 'cluster', 'list', ...registry()]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^ID +MODE +SERVER +CREDENTIALS +OME-NAMESPACE\n/);
    expect(list.stdout).toMatch(/\nedge-1 +standalone +https:\/\/127\.0\.0\.1:\d+ +kubeconfig-file \S+local\.kubeconfig +ome\n/);
    expect(list.stdout).toMatch(/\nlocal +/);

    type Report = {
      record: { id: string; mode: string };
      forwarder: { lease: { key: string; holder?: string } | null; lagMilliseconds: number | null; checkpoints: Array<{ resource: string }> };
    };
    // The forwarder saves a checkpoint after the events it forwards, not at once: describe
    // until the InferenceServices' one is there.
    const describeJson = async (): Promise<Report> => {
      const describeOut = await kubectl(['ome', 'admin', 'cluster', 'describe', 'edge-1', '-o', 'json', ...registry()]);
      expect(describeOut.code).toBe(0);
      return JSON.parse(describeOut.stdout) as Report;
    };
    const report = await waitFor(describeJson, (found) => found.forwarder.checkpoints.some((checkpoint) => checkpoint.resource === 'inferenceservices'));
    expect(report.record).toMatchObject({ id: 'edge-1', mode: 'standalone' });
    // The lease of the shard that forwards the cluster, held by the npm start process.
    expect(report.forwarder.lease).toMatchObject({ key: expect.stringMatching(/^forwarder-shard#\d+\/\d+$/), holder: expect.stringMatching(/^npm-start-\d+-/) });
    expect(report.forwarder.checkpoints.map((checkpoint) => checkpoint.resource)).toContain('inferenceservices');
    expect(report.forwarder.lagMilliseconds).toBeGreaterThanOrEqual(0);

    const table = await kubectl(['ome', 'admin', 'cluster', 'describe', 'edge-1', ...registry()]);
    expect(table.stdout).toMatch(/\nForwarder lag +\S+\n/);
    expect(table.stdout).toMatch(/\nCheckpoint inferenceservices +resourceVersion \d+, /);
    expect(table.stdout).toMatch(/\nLabels +env=lab,region=eu\n/);
  });

  it('labels the record as kubectl label does, and lists by selector', async () => {
    const added = await kubectl(['ome', 'admin', 'cluster', 'label', 'edge-1', 'tier=gpu', ...registry()]);
    expect([added.code, added.stdout, added.stderr]).toEqual([0, 'cluster/edge-1 labeled\n', '']);
    const refused = await kubectl(['ome', 'admin', 'cluster', 'label', 'edge-1', 'env=prod', ...registry()]);
    expect([refused.code, refused.stderr]).toEqual([1, "error: 'env' already has a value (lab), and --overwrite is false\n"]);
    const same = await kubectl(['ome', 'admin', 'cluster', 'label', 'edge-1', 'env=lab', ...registry()]);
    expect(same.stdout).toBe('cluster/edge-1 not labeled\n');
    const changed = await kubectl(['ome', 'admin', 'cluster', 'label', 'edge-1', 'env=prod', 'tier-', '--overwrite', ...registry()]);
    expect(changed.stdout).toBe('cluster/edge-1 labeled\n');

    const selected = await kubectl(['ome', 'admin', 'cluster', 'list', '-l', 'env in (prod,staging),region=eu', '--show-labels', ...registry()]);
    expect(selected.code).toBe(0);
    expect(selected.stdout).toMatch(/^ID +MODE +SERVER +CREDENTIALS +OME-NAMESPACE +LABELS\nedge-1 +standalone +\S+ +kubeconfig-file \S+ +ome +env=prod,region=eu\n$/);
    const none = await kubectl(['ome', 'admin', 'cluster', 'list', '-l', '!env', ...registry()]);
    expect(none.stdout).not.toContain('edge-1');
    const empty = await kubectl(['ome', 'admin', 'cluster', 'list', '-l', 'env=qa', ...registry()]);
    expect([empty.code, empty.stdout, empty.stderr]).toEqual([0, '', 'No clusters match the selector "env=qa".\n']);
    const malformed = await kubectl(['ome', 'admin', 'cluster', 'list', '-l', 'env in (prod', ...registry()]);
    expect([malformed.code, malformed.stderr]).toEqual([1, 'error: selector "env in (prod": unbalanced parentheses\n']);
  });

  it('deregisters: the record, the webhook and the RBAC go, the CRDs stay', async () => {
    const refused = await kubectl(['ome', 'admin', 'cluster', 'deregister', 'edge-1', ...registry()]);
    expect(refused.code).toBe(1);
    const result = await kubectl(['ome', 'admin', 'cluster', 'deregister', 'edge-1', '--yes', ...registry()]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/ClusterRecord +edge-1 +deleted/);
    expect(result.stdout).toMatch(/ValidatingWebhookConfiguration +ome-pinning-webhook +deleted/);
    expect(result.stdout).toMatch(/Namespace +ome-pinning-system +deleted/);
    expect(result.stdout).toMatch(/CustomResourceDefinition +inferenceservices\.ome\.io +kept/);
    const list = await kubectl(['ome', 'admin', 'cluster', 'list', ...registry()]);
    expect(list.stdout).not.toContain('edge-1');
    const left = await kubectl(['get', 'validatingwebhookconfigurations,clusterroles', '-o', 'name']);
    expect(left.stdout).not.toContain('ome-pinning');
    const crds = await kubectl(['get', 'crd', 'inferenceservices.ome.io', '-o', 'name']);
    expect(crds.stdout.trim()).toBe('customresourcedefinition.apiextensions.k8s.io/inferenceservices.ome.io');
  });

  it('describe shows the forwarder\'s last error for a cluster it cannot reach', async () => {
    const register = await kubectl([
      'ome', 'admin', 'cluster', 'register', 'broken-1', '--mode', 'standalone',
      '--credentials', 'kubeconfig-file', '--credentials-file', join(clusterDir, 'absent.kubeconfig'), '--skip-webhook', ...registry(),
    ]);
    expect(register.code).toBe(0);
    expect(register.stdout).toMatch(/ValidatingWebhookConfiguration +ome-pinning-webhook +skipped +no --webhook-url given/);
    const lastError = await waitFor(
      async () => {
        const out = await kubectl(['ome', 'admin', 'cluster', 'describe', 'broken-1', '-o', 'json', ...registry()]);
        return (JSON.parse(out.stdout) as { forwarder: { lastError: { message: string } | null } }).forwarder.lastError;
      },
      (value) => value !== null,
    );
    expect(lastError?.message).toContain('absent.kubeconfig does not exist');
    const table = await kubectl(['ome', 'admin', 'cluster', 'describe', 'broken-1', ...registry()]);
    expect(table.stdout).toMatch(/\nLast error +\S+Z forwarder stopped: .*absent\.kubeconfig does not exist\n/);
    expect(table.stdout).toMatch(/\nForwarder lag +no checkpoint yet \(never listed\)\n/);
    const removed = await kubectl(['ome', 'admin', 'cluster', 'deregister', 'broken-1', '--yes', ...registry()]);
    expect(removed.code).toBe(0);
  });

  it('a bulk kubectl apply -f infra/k8s/ installs the RBAC and no webhook', async () => {
    await kubectlAt(kubeconfig, ['apply', '-f', join(ROOT, 'infra', 'k8s')]);
    const roles = await kubectl(['get', 'clusterroles', '-o', 'name']);
    expect(roles.stdout).toContain('clusterrole.rbac.authorization.k8s.io/ome-pinning-pin');
    const webhooks = await kubectl(['get', 'validatingwebhookconfigurations', '-o', 'name']);
    expect(webhooks.stdout).toBe('');
  });
});
