/**
 * A real Kubernetes control plane on loopback, for tests and for trying the plane by hand:
 * etcd, kube-apiserver, kube-controller-manager and kube-scheduler built from Go modules
 * (scripts/build-real-cluster.sh), and kwok with a few fake nodes, so Deployments become
 * ReplicaSets and Pods that are scheduled and turn Ready as on a cluster with kubelets.
 *
 * At start the project's CRDs (infra/crds) and access manifests (infra/k8s) are applied with
 * the real kubectl, and each function's ServiceAccount gets a token from the TokenRequest
 * API, written as one kubeconfig context per function, as the embedded cluster does.
 * Everything lives in one temporary directory, removed at stop.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { FUNCTION_SERVICE_ACCOUNTS, SERVICE_ACCOUNT_NAMESPACE } from '../../infra/identities';
import { CLUSTER_MANIFEST_DIRECTORY } from '../../infra/paths';
import { connectionFromKubeconfigText, createClusterClient, type ClosableClusterClient } from '../../shared/adapters/kubernetes';
import { findFreePort, startWatchdog, waitForExit } from '../child-process';
import type { AccessRecord } from '../cluster/access';
import { CONTEXT_NAME, renderIdentityKubeconfig, renderKubeconfig, writeSecretFile, type ClusterKubeconfigs } from '../cluster/kubeconfig';
import { base64Of, makeControlPlanePki, type ControlPlanePki } from './pki';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const repositoryRoot = join(here, '..', '..');
const BUILD_SCRIPT = join(repositoryRoot, 'scripts', 'build-real-cluster.sh');
const CRD_DIR = join(repositoryRoot, 'infra', 'crds');
const KWOK_STAGES = join(here, 'manifests', 'kwok-stages.yaml');
const AUDIT_POLICY = join(here, 'manifests', 'audit-policy.yaml');

/** The namespaces the embedded cluster starts with; the real one makes the same. */
const NAMESPACES = ['ome'];
/** How long a function's ServiceAccount token is valid: longer than any test or local session. */
const TOKEN_SECONDS = 48 * 3600;

export interface RealClusterOptions {
  /** Fake nodes kwok keeps Ready (default 3), each with 8 GPUs. */
  nodes?: number;
  /** Where a line per component goes as it starts. */
  log?: (line: string) => void;
  /** Overrides the binaries' directory (default: the build script's cache, built when asked). */
  binDir?: string;
}

/** The CA (`caData`) signed the API server's certificate and the webhook's; the operator's token is in `system:masters`. */
export interface RealCluster extends ClusterKubeconfigs {
  /** A token for a ServiceAccount, from the TokenRequest API. */
  serviceAccountToken(namespace: string, name: string): Promise<string>;
  adminToken: string;
  /** A certificate and key signed by the cluster's CA for 127.0.0.1, for the plane's local webhook. */
  webhookTls: { cert: Buffer; key: Buffer };
  /** The ClusterClient port over HTTPS, as the operator. */
  client: ClosableClusterClient;
  /** Who was allowed or denied what, from the API server's audit log (read at each call). */
  accessLog(): AccessRecord[];
  /** The directory of the binaries it runs. */
  binDir: string;
  stop(): Promise<void>;
}

/** Thrown when the binaries are not built; the message says how to build them. */
export class RealClusterUnavailableError extends Error {}

/** The binaries' directory when they are built, else undefined (never builds). */
export async function builtBinDir(): Promise<string | undefined> {
  if (process.env.OME_REAL_CLUSTER_BIN) return process.env.OME_REAL_CLUSTER_BIN;
  try {
    const { stdout } = await run('bash', [BUILD_SCRIPT, '--no-build'], { cwd: repositoryRoot });
    return stdout.trim().split('\n').pop();
  } catch {
    return undefined;
  }
}

interface Component {
  name: string;
  child: ChildProcess;
  output: string[];
}

export async function startRealCluster(options: RealClusterOptions = {}): Promise<RealCluster> {
  const log = options.log ?? (() => undefined);
  const binDir = options.binDir ?? (await builtBinDir());
  if (!binDir) throw new RealClusterUnavailableError('the real control plane is not built: run scripts/build-real-cluster.sh (a cold build takes about 20 minutes)');
  const dir = await mkdtemp(join(tmpdir(), 'ome-real-cluster-'));
  const components: Component[] = [];
  const stop = async (): Promise<void> => {
    for (const component of [...components].reverse()) {
      component.child.kill('SIGTERM');
      if (!(await waitForExit(component.child, 10_000))) component.child.kill('SIGKILL');
    }
    components.length = 0;
    await rm(dir, { recursive: true, force: true });
  };
  try {
    return await startIn(dir, binDir, options, log, components, stop);
  } catch (error) {
    const output = components.map((component) => `--- ${component.name}\n${component.output.slice(-20).join('')}`).join('\n');
    await stop();
    throw new Error(`the real control plane did not start: ${error instanceof Error ? error.message : String(error)}\n${output}`, { cause: error });
  }
}

async function startIn(dir: string, binDir: string, options: RealClusterOptions, log: (line: string) => void, components: Component[], stop: () => Promise<void>): Promise<RealCluster> {
  const pki = await makeControlPlanePki(dir);
  const caData = await base64Of(pki.caCert);
  const [etcdPort, etcdPeerPort, apiPort] = await Promise.all([findFreePort(), findFreePort(), findFreePort()]);
  const httpsUrl = `https://127.0.0.1:${apiPort}`;
  const endpoint = { server: httpsUrl, caData };

  // Tokens for the operator and the components; the controller-manager's and scheduler's
  // users are the ones Kubernetes' bootstrap RBAC binds to their roles.
  const adminToken = randomBytes(24).toString('hex');
  const controllerManagerToken = randomBytes(24).toString('hex');
  const schedulerToken = randomBytes(24).toString('hex');
  const kwokToken = randomBytes(24).toString('hex');
  const tokenFile = join(dir, 'tokens.csv');
  await writeSecretFile(tokenFile, [
    `${adminToken},ome-test-admin,ome-test-admin,"system:masters"`,
    `${controllerManagerToken},system:kube-controller-manager,system:kube-controller-manager`,
    `${schedulerToken},system:kube-scheduler,system:kube-scheduler`,
    // kwok stands in for every kubelet; a user of its own keeps it apart from the operator.
    `${kwokToken},kwok,kwok,"system:masters"`,
    '',
  ].join('\n'));
  const kubeconfig = renderKubeconfig(endpoint, 'default', adminToken);
  const adminKubeconfig = join(dir, 'admin.kubeconfig');
  await writeSecretFile(adminKubeconfig, kubeconfig);
  const componentKubeconfig = async (name: string, token: string): Promise<string> => {
    const path = join(dir, `${name}.kubeconfig`);
    await writeSecretFile(path, renderKubeconfig(endpoint, 'default', token));
    return path;
  };

  const started = Date.now();
  const etcd = launch(components, 'etcd', join(binDir, 'etcd'), ['--data-dir', join(dir, 'etcd'), '--client-port', String(etcdPort), '--peer-port', String(etcdPeerPort)], dir);
  await waitForOutput(etcd, 'etcd ready', 60_000);

  const auditLog = join(dir, 'audit.log');
  launch(components, 'kube-apiserver', join(binDir, 'kube-apiserver'), apiServerArgs(pki, { etcdPort, apiPort, tokenFile, auditLog }), dir);
  await waitForReady(httpsUrl, adminToken, caData, 120_000);
  log(`real cluster kube-apiserver ${httpsUrl} ready (${seconds(started)})`);

  launch(components, 'kube-controller-manager', join(binDir, 'kube-controller-manager'), [
    '--kubeconfig', await componentKubeconfig('controller-manager', controllerManagerToken),
    '--bind-address', '127.0.0.1', '--secure-port', '0',
    '--leader-elect=false',
    '--root-ca-file', pki.caCert,
    '--service-account-private-key-file', pki.serviceAccountKey,
    '--use-service-account-credentials=true',
    // No node IPAM, cloud or volume work here; the rest (deployments, replicasets, GC,
    // namespaces, service accounts, node lifecycle) runs as in any cluster.
    '--controllers=*,-node-ipam-controller,-cloud-node-lifecycle-controller,-service-lb-controller,-node-route-controller,-persistentvolume-binder-controller,-persistentvolume-attach-detach-controller,-persistentvolume-expander-controller',
    '-v=1',
  ], dir);
  launch(components, 'kube-scheduler', join(binDir, 'kube-scheduler'), [
    '--kubeconfig', await componentKubeconfig('scheduler', schedulerToken),
    '--bind-address', '127.0.0.1', '--secure-port', '0',
    '--leader-elect=false',
    '-v=1',
  ], dir);
  launch(components, 'kwok', join(binDir, 'kwok'), [
    '--config', KWOK_STAGES,
    '--kubeconfig', await componentKubeconfig('kwok', kwokToken),
    '--manage-all-nodes=false',
    '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
    '--cidr=10.244.0.0/16',
    '--node-ip=10.0.1.1',
    '--server-address=127.0.0.1:0',
  ], dir);

  const kubectl = (args: string[], input?: string): Promise<string> => runKubectl(adminKubeconfig, args, input);
  await kubectl(['apply', '--server-side', '--force-conflicts', '-f', CRD_DIR]);
  await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  for (const namespace of NAMESPACES) await kubectl(['create', 'namespace', namespace]);
  await kubectl(['apply', '--server-side', '-f', CLUSTER_MANIFEST_DIRECTORY]);
  await kubectl(['apply', '-f', '-'], fakeNodes(options.nodes ?? 3));
  await waitForAdmissionPolicies(kubectl);
  const exited = components.filter((component) => component.child.exitCode !== null || component.child.signalCode !== null);
  if (exited.length > 0) throw new Error(`${exited.map((component) => component.name).join(', ')} exited during start`);
  log(`real cluster CRDs, infra/k8s and ${options.nodes ?? 3} kwok nodes applied (${seconds(started)})`);

  const serviceAccountToken = async (namespace: string, name: string): Promise<string> =>
    (await kubectl(['create', 'token', name, '-n', namespace, `--duration=${TOKEN_SECONDS}s`])).trim();
  const identities = await Promise.all(
    Object.entries(FUNCTION_SERVICE_ACCOUNTS).map(async ([fn, account]) => ({ context: fn, token: await serviceAccountToken(SERVICE_ACCOUNT_NAMESPACE, account) })),
  );
  const identityKubeconfig = renderIdentityKubeconfig(endpoint, { context: CONTEXT_NAME, token: adminToken }, identities);
  const client = createClusterClient(connectionFromKubeconfigText('real', kubeconfig));
  const webhookTls = { cert: await readFile(pki.webhookCert), key: await readFile(pki.webhookKey) };

  let stopped = false;
  return {
    httpsUrl,
    caData,
    kubeconfig,
    writeKubeconfig: (path) => writeSecretFile(path, kubeconfig),
    identityKubeconfig,
    writeIdentityKubeconfig: (path) => writeSecretFile(path, identityKubeconfig),
    serviceAccountToken,
    adminToken,
    webhookTls,
    client,
    accessLog: () => parseAuditLog(existsSync(auditLog) ? readFileSync(auditLog, 'utf8') : ''),
    binDir,
    async stop() {
      if (stopped) return;
      stopped = true;
      client.close();
      await stop();
    },
  };
}

function apiServerArgs(pki: ControlPlanePki, at: { etcdPort: number; apiPort: number; tokenFile: string; auditLog: string }): string[] {
  return [
    `--etcd-servers=http://127.0.0.1:${at.etcdPort}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${at.apiPort}`,
    `--tls-cert-file=${pki.apiServerCert}`,
    `--tls-private-key-file=${pki.apiServerKey}`,
    `--client-ca-file=${pki.caCert}`,
    `--token-auth-file=${at.tokenFile}`,
    '--service-account-issuer=https://kubernetes.default.svc',
    `--service-account-key-file=${pki.serviceAccountPub}`,
    `--service-account-signing-key-file=${pki.serviceAccountKey}`,
    '--service-cluster-ip-range=10.0.0.0/24',
    '--authorization-mode=Node,RBAC',
    // Privileged pods are allowed by the server, as on most clusters: what refuses the plane's
    // identities a privileged Deployment must be the plane's own admission policy.
    '--allow-privileged=true',
    // The loopback address cannot be the `kubernetes` Service's endpoint.
    '--endpoint-reconciler-type=none',
    `--audit-policy-file=${AUDIT_POLICY}`,
    `--audit-log-path=${at.auditLog}`,
    '--audit-log-format=json',
    '-v=1',
  ];
}

function launch(components: Component[], name: string, binary: string, args: string[], dir: string): Component {
  const child = spawn(binary, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const component: Component = { name, child, output: [] };
  const keep = (chunk: Buffer): void => {
    component.output.push(chunk.toString('utf8'));
    if (component.output.length > 200) component.output.splice(0, component.output.length - 200);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.on('error', (error) => keep(Buffer.from(`spawn failed: ${error.message}\n`)));
  if (child.pid) startWatchdog(`ome-${name}-watchdog`, process.pid, child.pid);
  components.push(component);
  return component;
}

function waitForOutput(component: Component, text: string, timeoutMs: number): Promise<void> {
  return new Promise((resolveWait, reject) => {
    const timer = setTimeout(() => reject(new Error(`${component.name} did not print "${text}" within ${timeoutMs / 1000} s`)), timeoutMs);
    const check = (): void => {
      if (component.output.join('').includes(text)) {
        clearTimeout(timer);
        resolveWait();
      }
    };
    component.child.stdout?.on('data', check);
    component.child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${component.name} exited (${code}) before it was ready`));
    });
    check();
  });
}

async function waitForReady(server: string, token: string, caData: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const ca = Buffer.from(caData, 'base64');
  for (;;) {
    const status = await new Promise<number>((resolveStatus) => {
      const request = httpsRequest(`${server}/readyz`, { ca, headers: { authorization: `Bearer ${token}` }, timeout: 2000 }, (response) => {
        response.resume();
        resolveStatus(response.statusCode ?? 0);
      });
      request.on('error', () => resolveStatus(0));
      request.on('timeout', () => request.destroy());
      request.end();
    });
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`kube-apiserver not ready within ${timeoutMs / 1000} s (last /readyz ${status})`);
    await new Promise((resolveDelay) => setTimeout(resolveDelay, 250));
  }
}

async function runKubectl(kubeconfig: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolveRun, reject) => {
    const child = execFile('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`kubectl ${args.join(' ')}: ${stderr || error.message}`));
      else resolveRun(stdout);
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

/**
 * kube-apiserver starts enforcing a ValidatingAdmissionPolicy a moment after it is written
 * (its policy source refreshes asynchronously): until then a plane identity's write that the
 * policy refuses would go through. Waits until a server-side dry run, as pin, of a write each
 * policy refuses is denied: a Deployment and an Event in kube-system.
 */
async function waitForAdmissionPolicies(kubectl: (args: string[], input?: string) => Promise<string>): Promise<void> {
  const asPin = `--as=system:serviceaccount:${SERVICE_ACCOUNT_NAMESPACE}:${FUNCTION_SERVICE_ACCOUNTS.pin}`;
  const event = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'policy-probe', namespace: 'kube-system' },
    involvedObject: { apiVersion: 'v1', kind: 'Pod', name: 'policy-probe', namespace: 'kube-system' },
    reason: 'PolicyProbe',
    message: 'policy probe',
  });
  const probes: Array<{ policy: string; args: string[]; input?: string }> = [
    { policy: 'owned-Deployments', args: ['create', 'deployment', 'policy-probe', '--image=busybox', '-n', 'kube-system', '--dry-run=server', asPin] },
    { policy: 'plane-Events', args: ['create', '-f', '-', '--dry-run=server', asPin], input: event },
  ];
  const deadline = Date.now() + 60_000;
  for (const probe of probes) {
    for (;;) {
      const denied = await kubectl(probe.args, probe.input).then(
        () => false,
        (error: unknown) => /ValidatingAdmissionPolicy .* denied request/.test(error instanceof Error ? error.message : String(error)),
      );
      if (denied) break;
      if (Date.now() > deadline) throw new Error(`the ${probe.policy} admission policy was not enforced within 60 s`);
      await new Promise((resolveDelay) => setTimeout(resolveDelay, 250));
    }
  }
}

/** Nodes kwok manages: schedulable, Ready once kwok sees them, with GPUs for engine pods. */
function fakeNodes(count: number): string {
  const capacity = { cpu: '64', memory: '512Gi', pods: '110', 'nvidia.com/gpu': '8' };
  return Array.from({ length: count }, (_, index) =>
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: `kwok-node-${index}`,
        annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
        labels: { 'kubernetes.io/hostname': `kwok-node-${index}`, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'kwok' },
      },
      status: { allocatable: capacity, capacity },
    }),
  ).join('\n');
}

interface AuditEvent {
  stage?: string;
  verb?: string;
  requestURI?: string;
  userAgent?: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string; apiGroup?: string; namespace?: string; name?: string };
  annotations?: Record<string, string>;
}

/** The audit log's completed requests as access records, in the embedded cluster's shape. */
export function parseAuditLog(text: string): AccessRecord[] {
  const records: AccessRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    let event: AuditEvent;
    try {
      event = JSON.parse(line) as AuditEvent;
    } catch {
      continue;
    }
    // A watch once, when its response starts; anything else when it completes.
    if (event.stage !== (event.verb === 'watch' ? 'ResponseStarted' : 'ResponseComplete')) continue;
    const ref = event.objectRef;
    const resource = ref?.resource ? `${ref.resource}${ref.apiGroup ? `.${ref.apiGroup}` : ''}${ref.subresource ? `/${ref.subresource}` : ''}` : (event.requestURI ?? '').split('?')[0] ?? '';
    records.push({
      username: event.user?.username ?? '',
      verb: event.verb ?? '',
      target: resource,
      namespace: ref?.namespace ?? '',
      name: ref?.name ?? '',
      allowed: event.annotations?.['authorization.k8s.io/decision'] !== 'forbid',
      userAgent: event.userAgent ?? '',
    });
  }
  return records;
}

function seconds(since: number): string {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}
