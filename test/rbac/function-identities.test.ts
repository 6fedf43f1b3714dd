/**
 * The local control plane with RBAC on: every function reaches the cluster (the embedded
 * server, or in the real project a real kube-apiserver) under its own ServiceAccount, does its work within its role (no request denied), and the
 * cluster record in the table carries no credential.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_SERVICE_ACCOUNTS, SERVICE_ACCOUNT_NAMESPACE, type FunctionName } from '../../infra/identities';
import type { AccessRecord } from '../../local/cluster';
import { ON_SERVER, TEST_CLUSTER } from '../support/test-cluster';
import { ISVC, NS, START_TIMEOUT_MS, kubectl, kubectlApply, pinnedRevision, seedManifests, settle, startObservedControlPlane, waitFor } from '../control-plane/support';
import type { ObservedControlPlane } from '../control-plane/support';

const userOf = (fn: FunctionName): string => `system:serviceaccount:${SERVICE_ACCOUNT_NAMESPACE}:${FUNCTION_SERVICE_ACCOUNTS[fn]}`;

describe(`Control plane: each function under its own identity${ON_SERVER}`, () => {
  let observed: ObservedControlPlane;
  let kubeconfig: string;
  let log: () => readonly AccessRecord[];

  beforeAll(async () => {
    observed = await startObservedControlPlane();
    const cluster = observed.plane.clusters[0];
    kubeconfig = cluster?.kubeconfigPath ?? '';
    log = cluster?.accessLog ?? (() => []);
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    await observed?.stop();
  });

  const requestsOf = (fn: FunctionName): AccessRecord[] => log().filter((r) => r.username === userOf(fn));
  const did = (fn: FunctionName, verb: string, target: string, namespace?: string): boolean =>
    requestsOf(fn).some((r) => r.allowed && r.verb === verb && r.target === target && (namespace === undefined || r.namespace === namespace));

  it('pins, drifts, repins, sweeps and rolls out, each function within its role', async () => {
    // Act: pin (through the forwarder and the webhook), then a runtime change for
    // drift-check, a repin request for repin-apply, and the schedules of revision-gc and rollout-run.
    await kubectlApply(kubeconfig, seedManifests('0.9'));
    expect(await waitFor(() => pinnedRevision(kubeconfig), (value) => value !== '')).not.toBe('');
    await kubectlApply(kubeconfig, seedManifests('0.85'));
    const drifted = () => kubectl(kubeconfig, ['get', 'inferenceservice', ISVC, '-n', NS, '-o', 'jsonpath={.status.conditions[?(@.type=="RuntimeDrifted")].status}']);
    expect(await waitFor(drifted, (value) => value === 'True')).toBe('True');
    await kubectl(kubeconfig, ['annotate', 'inferenceservice', ISVC, '-n', NS, 'ome.io/rollout-repin=now']);
    const repinConsumed = () => kubectl(kubeconfig, ['get', 'inferenceservice', ISVC, '-n', NS, '-o', 'jsonpath={.metadata.annotations.ome\\.io/rollout-repin}']);
    expect(await waitFor(repinConsumed, (value) => value === '')).toBe('');
    for (const fn of ['revision-gc', 'rollout-run', 'resync']) {
      const rule = observed.plane.bus.rules.find((candidate) => candidate.functionName === fn && candidate.schedule);
      if (rule) observed.plane.bus.triggerSchedule(rule.name);
    }
    await settle(observed.plane);
    await waitFor(async () => requestsOf('revision-gc').length, (n) => n > 0, 15_000);
    await waitFor(async () => requestsOf('resync').length, (n) => n > 0, 15_000);

    // Assess: nothing any function asked for was refused, and no delivery failed on access.
    const planeRequests = log().filter((r) => r.username.startsWith(`system:serviceaccount:${SERVICE_ACCOUNT_NAMESPACE}:ome-pinning-`));
    expect(planeRequests.filter((r) => !r.allowed)).toEqual([]);
    expect(observed.deliveries.filter((d) => /forbidden|unauthorized/i.test(d.outcome))).toEqual([]);
    expect(observed.plane.bus.deadLetters).toEqual([]);

    // Each function acted under its own ServiceAccount.
    expect(did('forward-watch-events', 'watch', 'inferenceservices.ome.io')).toBe(true);
    expect(did('admission-webhook', 'get', 'servingruntimes.ome.io', NS)).toBe(true);
    // The first pin runs in pin or, when the runtime's hint wins the race, in drift-check
    // (which hands the InferenceService to the same use-case): either stores the revision.
    expect(did('pin', 'create', 'controllerrevisions.apps', 'ome') || did('drift-check', 'create', 'controllerrevisions.apps', 'ome')).toBe(true);
    expect(did('pin', 'create', 'deployments.apps', NS) || did('drift-check', 'create', 'deployments.apps', NS)).toBe(true);
    expect(did('drift-check', 'patch', 'inferenceservices.ome.io/status', NS) || did('drift-check', 'update', 'inferenceservices.ome.io/status', NS)).toBe(true);
    expect(did('repin-apply', 'patch', 'inferenceservices.ome.io', NS)).toBe(true);
    expect(did('revision-gc', 'list', 'controllerrevisions.apps', 'ome')).toBe(true);
    expect(requestsOf('rollout-run').some((r) => r.allowed)).toBe(true);
    expect(did('resync', 'list', 'inferenceservices.ome.io')).toBe(true);

    // Writes to Deployments came only from the roles that render them; the webhook and
    // forwarder never wrote anything.
    const writes = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
    const deploymentWriters = new Set(planeRequests.filter((r) => r.target.startsWith('deployments.apps') && writes.has(r.verb)).map((r) => r.username));
    expect([...deploymentWriters].every((user) => [userOf('pin'), userOf('drift-check'), userOf('rollout-run'), userOf('repin-apply')].includes(user))).toBe(true);
    for (const readOnly of ['admission-webhook', 'forward-watch-events', 'resync'] as const) {
      expect(requestsOf(readOnly).filter((r) => writes.has(r.verb))).toEqual([]);
    }

    // The Events the functions recorded (through the plane-Events policy) are about InferenceServices, in their namespaces.
    const events = JSON.parse(await kubectl(kubeconfig, ['get', 'events', '-A', '-o', 'json'])) as {
      items: Array<{ metadata: { namespace: string }; involvedObject: { kind: string; namespace?: string }; reportingComponent?: string; source?: { component?: string } }>;
    };
    const recorded = events.items.filter((item) => (item.reportingComponent ?? item.source?.component ?? '').startsWith('ome-pinning'));
    expect(recorded.length).toBeGreaterThan(0);
    expect(recorded.map((item) => [item.involvedObject.kind, item.involvedObject.namespace])).toEqual(recorded.map((item) => ['InferenceService', item.metadata.namespace]));
    expect(planeRequests.some((r) => r.target === 'events' && r.verb === 'create')).toBe(true);

    // Only the test's kubectl used the operator's credentials (on a real cluster the harness's
    // own kubectl and the webhook registration also act as the operator, before the test).
    const operator = log().filter((r) => r.username === (TEST_CLUSTER === 'real' ? 'ome-test-admin' : 'embedded-admin'));
    if (TEST_CLUSTER === 'real') operator.splice(0, operator.findIndex((r) => r.userAgent.startsWith('kubectl') && r.namespace === NS));
    expect(operator.filter((r) => !r.userAgent.startsWith('kubectl'))).toEqual([]);
  });

  it('keeps tokens out of the table: the cluster record names the identity kubeconfig only', async () => {
    const record = await observed.plane.app.stores.clusters.getCluster('local');
    expect(record?.credentials).toEqual({ kind: 'kubeconfig-file', path: `${observed.dataDir}/clusters/local.kubeconfig` });
    const text = JSON.stringify(record);
    expect(text).not.toMatch(/token/i);
    expect(observed.plane.clusters[0]?.identityKubeconfigPath).toBe(`${observed.dataDir}/clusters/local.kubeconfig`);
  });
});
