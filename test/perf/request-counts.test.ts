/**
 * What one event costs: the Kubernetes requests (the embedded API server's access log, over
 * HTTP as a deployed function reaches a cluster) and the DynamoDB operations (a middleware
 * on the document client, one count per operation sent to DynamoDB Local) of the real
 * handlers of pin, drift-check, repin-apply and rollout-run, each against the least its
 * decision needs. Counts are deterministic, so they are asserted exactly: a change that adds
 * a request fails here. The function's cluster client and the cluster record it was built
 * from are reused across invocations, as in a warm Lambda container.
 */
import type { Context } from 'aws-lambda';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toSqsEvent } from '../../local/bus/sqs';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { ensureTable, startDynamoDbLocal, type DynamoDbLocal } from '../../local/dynamodb-local';
import { createDynamoClient, createDynamoStores } from '../../shared/adapters/dynamodb';
import { createAppContext, setAppContext, type AppContext } from '../../shared/app/context';
import { loadConfig } from '../../shared/app/config';
import { Resources } from '../../shared/domain/model/resources';
import { createDirectWorkloadWriter } from '../../shared/use-cases/pinning';
import { createRolloutWorkloadWriter } from '../../shared/use-cases/rollout-runs';
import type { RolloutIsvc } from '../../shared/use-cases/rollout-runs/rollout-status';
import type { Deployment } from '../../shared/use-cases/rollout-runs/workloads';
import { renderEngineDeployment } from '../../shared/domain/runtime/workload';
import { annotateSync, applyRuntime, NS, RUNTIME, seedIsvc, seedRuntime } from '../pinning/support';

const CLUSTER_ID = 'counted';
const TABLE = 'request-counts';

type Handler = (event: unknown, context: Context) => Promise<unknown>;

/** What one invocation sent: Kubernetes requests as `verb target`, DynamoDB operations by name. */
interface Cost {
  kube: string[];
  dynamo: string[];
}

function lambdaContext(functionName: string): Context {
  return {
    awsRequestId: `${functionName}-request`,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'test',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => 60_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

let cluster: EmbeddedCluster;
let local: DynamoDbLocal | undefined;
let documents: DynamoDBDocumentClient | undefined;
const dynamoOps: string[] = [];
const apps = new Map<string, AppContext>();
const handlers = new Map<string, Handler>();
const uids = new Map<string, string>();

function hint(kind: string, name: string, changed: Record<string, boolean> = {}, resourceVersion = '1'): unknown {
  return toSqsEvent([{
    version: '0',
    id: `${kind}-${name}`,
    'detail-type': 'Kubernetes Object Changed',
    source: 'ome.pinning',
    account: '000000000000',
    time: new Date().toISOString(),
    region: 'us-east-1',
    resources: [],
    detail: {
      clusterId: CLUSTER_ID,
      apiVersion: 'ome.io/v1beta1',
      kind,
      namespace: NS,
      name,
      uid: uids.get(`${kind}/${name}`) ?? '',
      resourceVersion,
      change: 'modified',
      changed: { spec: true, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, ...changed },
      observedAt: new Date().toISOString(),
    },
  }], { region: 'us-east-1' });
}

/** Runs one handler with its own warm context; returns what it sent. */
async function invoke(functionName: string, event: unknown): Promise<Cost> {
  const app = apps.get(functionName);
  const handler = handlers.get(functionName);
  if (!app || !handler) throw new Error(`no ${functionName}`);
  setAppContext(app);
  const kubeFrom = cluster.accessLog().length;
  const dynamoFrom = dynamoOps.length;
  const answer = await handler(event, lambdaContext(functionName));
  expect(answer, `${functionName} failed a record`).toEqual({ batchItemFailures: [] });
  return {
    kube: cluster.accessLog().slice(kubeFrom).map((r) => `${r.verb} ${r.target}`),
    dynamo: dynamoOps.slice(dynamoFrom),
  };
}

/** Counts by entry, for readable failures. */
function tally(entries: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const entry of entries) out[entry] = (out[entry] ?? 0) + 1;
  return out;
}

async function recordUid(kind: string, name: string): Promise<void> {
  const type = kind === 'InferenceService' ? Resources.inferenceServices : Resources.servingRuntimes;
  uids.set(`${kind}/${name}`, (await cluster.client.get(type, NS, name)).metadata.uid ?? '');
}

beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  cluster = await startEmbeddedCluster({ workloadReadyDelayMs: 5 });
  local = await startDynamoDbLocal();
  documents = createDynamoClient({ endpoint: local.endpoint, region: 'us-east-1' });
  await ensureTable(documents, TABLE);
  // One count per operation the stores send (retries of it are not counted again).
  documents.middlewareStack.add(
    (next, context) => async (args) => {
      dynamoOps.push(String(context.commandName ?? 'unknown').replace(/Command$/, ''));
      return next(args);
    },
    { step: 'initialize', name: 'countOperations' },
  );
  const stores = createDynamoStores(documents, { tableName: TABLE });
  await stores.clusters.putCluster({ mode: 'standalone', id: CLUSTER_ID, server: cluster.url, omeNamespace: 'ome', credentials: { kind: 'kubeconfig', kubeconfig: cluster.kubeconfig } });
  await cluster.client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await applyRuntime(cluster.client, seedRuntime('0.9'));
  await recordUid('ServingRuntime', RUNTIME);
  for (const name of ['pin', 'drift-check', 'repin-apply', 'rollout-run']) {
    const config = loadConfig({ TABLE_NAME: TABLE, AWS_REGION: 'us-east-1', EVENT_BUS_NAME: 'bus', RENDER_WORKLOADS: 'false', FUNCTION_NAME: name });
    apps.set(name, createAppContext({ config, stores }));
    handlers.set(name, ((await import(`../../functions/${name}/handler.ts`)) as { handler: Handler }).handler);
  }
}, 120_000);

afterAll(async () => {
  setAppContext(undefined);
  delete process.env.POWERTOOLS_LOG_LEVEL;
  delete process.env.POWERTOOLS_METRICS_DISABLED;
  await cluster?.stop();
  documents?.destroy();
  await local?.stop();
});

/**
 * One event's expected cost and the least its decision needs. `kube` and `dynamo` are
 * exact tallies; `minimum` is counted from what the decision must know and must change,
 * and the ratio measured / minimum must stay within the goal.
 */
interface Expected {
  kube: Record<string, number>;
  dynamo: Record<string, number>;
  minimum: { kube: number; dynamo: number };
}

const GOAL = 1.2;

function sum(tallies: Record<string, number>): number {
  return Object.values(tallies).reduce((a, b) => a + b, 0);
}

/** Asserts the exact counts, then the ratio to the minimum (0 measured against 0 is 1). */
function expectCost(cost: Cost, expected: Expected): void {
  expect({ kube: tally(cost.kube), dynamo: tally(cost.dynamo) }).toEqual({ kube: expected.kube, dynamo: expected.dynamo });
  for (const side of ['kube', 'dynamo'] as const) {
    const measured = sum(expected[side]);
    const minimum = expected.minimum[side];
    expect(measured, `${side}: ${measured} against a minimum of ${minimum}`).toBeLessThanOrEqual(Math.max(minimum * GOAL, minimum));
  }
}

const GET_ISVC = 'get inferenceservices.ome.io';
const REPLICAS = 4;
const GET_RUNTIME = 'get servingruntimes.ome.io';
const GET_REVISION = 'get controllerrevisions.apps';
const CREATE_REVISION = 'create controllerrevisions.apps';
const WRITE_STATUS = 'update inferenceservices.ome.io/status';
// The object's lease: one conditional update to take it, one to give it back.
const LEASE = { UpdateItem: 2 };

/** Creates an InferenceService of its own for one test, on `runtime` (default the seed's). */
async function createIsvc(name: string, runtime = RUNTIME): Promise<void> {
  await cluster.client.create(Resources.inferenceServices, seedIsvc(name, { name: runtime }));
  await recordUid('InferenceService', name);
}

/** A runtime of its own for a test that changes it. */
async function createRuntime(name: string): Promise<void> {
  await applyRuntime(cluster.client, seedRuntime('0.9', { name }));
  await recordUid('ServingRuntime', name);
}

describe('Kubernetes requests and DynamoDB operations per event, warm', () => {
  beforeAll(async () => {
    // Each function's first invocation reads the cluster record and builds its client (one
    // GetItem); a warm container reuses both, and that is what is counted below. The
    // warm-up pin also creates the revision of the seed runtime's spec.
    await createIsvc('warm-up');
    for (const name of ['pin', 'repin-apply', 'rollout-run']) {
      const cold = await invoke(name, hint('InferenceService', 'warm-up'));
      expect(cold.dynamo, `${name} cold`).toContain('GetItem');
    }
  }, 60_000);

  it('pin, first pin of a spec already pinned elsewhere: the object, its runtime, the revision, one status write', async () => {
    await createIsvc('first-pin');
    expectCost(await invoke('pin', hint('InferenceService', 'first-pin')), {
      kube: { [GET_ISVC]: 1, [GET_RUNTIME]: 1, [GET_REVISION]: 1, [WRITE_STATUS]: 1 },
      dynamo: LEASE,
      // Read the object and its runtime, make sure the revision of that spec exists (the
      // warm-up object made it), write status; the object's lease: 2.
      minimum: { kube: 4, dynamo: 2 },
    });
  }, 60_000);

  it('pin of an unchanged object: three reads, no write', async () => {
    await createIsvc('unchanged');
    await invoke('pin', hint('InferenceService', 'unchanged'));
    expectCost(await invoke('pin', hint('InferenceService', 'unchanged')), {
      kube: { [GET_ISVC]: 1, [GET_RUNTIME]: 1, [GET_REVISION]: 1 },
      dynamo: LEASE,
      // The hint is thin: the object must be read; the live runtime, to hash its spec; the
      // pinned revision, since a deleted one is RevisionMissing. Decisions are made under
      // the object's lease, taken and released even when nothing is written.
      minimum: { kube: 3, dynamo: 2 },
    });
  }, 60_000);

  it('drift-check of a runtime used by two InferenceServices: four lists, one status write each, the runtime read back', async () => {
    await createRuntime('drift-rt');
    for (const name of ['drift-a', 'drift-b']) {
      await createIsvc(name, 'drift-rt');
      await invoke('pin', hint('InferenceService', name));
    }
    await applyRuntime(cluster.client, seedRuntime('0.85', { name: 'drift-rt' }));
    expectCost(await invoke('drift-check', hint('ServingRuntime', 'drift-rt')), {
      kube: {
        'list clusterservingruntimes.ome.io': 1,
        'list servingruntimes.ome.io': 1,
        'list controllerrevisions.apps': 1,
        'list inferenceservices.ome.io': 1,
        [WRITE_STATUS]: 2,
        'get servingruntimes.ome.io': 1,
      },
      // No lease: the conditions are fenced by the objects' resourceVersions and the read
      // back of the runtime. The cluster record, read by this function's first (cold)
      // invocation, which this is.
      dynamo: { GetItem: 1 },
      // The runtimes of both scopes (a namespaced runtime inherits from cluster ones and is
      // inherited by its namespace's), the affected runtimes' revisions, the
      // InferenceServices: one list each; one status write per changed condition; the
      // runtime the conditions were judged from, read once after the writes (the fence:
      // a change in between would have its own fan-out miss these writes). The cold
      // client's one record read.
      minimum: { kube: 4 + 2 + 1, dynamo: 1 },
    });
  }, 60_000);

  it('pin of a sync token (roll forward): claim, new revision, status write, completion', async () => {
    await createRuntime('sync-rt');
    await createIsvc('sync', 'sync-rt');
    await invoke('pin', hint('InferenceService', 'sync'));
    await applyRuntime(cluster.client, seedRuntime('0.85', { name: 'sync-rt' }));
    await annotateSync(cluster.client, 'sync', 'sync-1');
    expectCost(await invoke('pin', hint('InferenceService', 'sync', { runtimeSync: true })), {
      kube: { [GET_ISVC]: 1, [GET_RUNTIME]: 1, [GET_REVISION]: 2, [CREATE_REVISION]: 1, [WRITE_STATUS]: 1 },
      dynamo: { PutItem: 1, UpdateItem: 3 },
      // Read the object, the runtime and the pinned revision; create the new revision (tried
      // blind); write status: 5. The token's claim (a conditional put) and its completion,
      // plus the lease: 4.
      minimum: { kube: 5, dynamo: 4 },
    });
  }, 60_000);

  it('repin-apply for a change that carries no repin or promote request: nothing', async () => {
    await createIsvc('no-repin');
    // The hint says which annotations changed; without a request there is nothing to read.
    expectCost(await invoke('repin-apply', hint('InferenceService', 'no-repin')), { kube: {}, dynamo: {}, minimum: { kube: 0, dynamo: 0 } });
  }, 60_000);

  it('rollout-run for an InferenceService without a rollout: one read', async () => {
    await createIsvc('no-rollout');
    expectCost(await invoke('rollout-run', hint('InferenceService', 'no-rollout')), {
      kube: { [GET_ISVC]: 1 },
      dynamo: LEASE,
      // Whether it has a rollout is in the object: one read, under its lease.
      minimum: { kube: 1, dynamo: 2 },
    });
  }, 60_000);

  describe('rollouts', () => {
    const manual = (traffic: number) => ({ canary: { steps: [{ capacity: '25%', traffic, pause: {} }, { capacity: '100%', traffic: 100, pause: {} }] } });
    const writerClock = { now: () => Date.now() };

    /** Renders the engine at `image` through the rollout-aware writer, as a pin pass does. */
    async function render(name: string, image: string): Promise<string> {
      const current = await cluster.client.get<RolloutIsvc>(Resources.inferenceServices, NS, name);
      const desired = renderEngineDeployment({ isvc: { namespace: NS, name, uid: current.metadata.uid, engine: { minReplicas: REPLICAS } }, runtimeName: RUNTIME, spec: { containers: [{ name: 'ome-container', image }] } });
      const writer = createRolloutWorkloadWriter({ client: cluster.client, direct: createDirectWorkloadWriter(cluster.client), clock: writerClock });
      return writer.apply({ clusterId: CLUSTER_ID, isvc: current, desired, renderedFrom: 'live' });
    }

    /** Waits (bounded) until the Deployment reports `replicas` ready: the step machine reads readiness. */
    async function ready(name: string, replicas: number): Promise<void> {
      for (let i = 0; i < 500; i += 1) {
        const deployment = await cluster.client.get<Deployment>(Resources.deployments, NS, name).catch(() => undefined);
        if ((deployment?.status?.readyReplicas ?? 0) >= replicas) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`${name} never had ${replicas} ready replicas`);
    }

    /** An InferenceService on a canary policy of its own, v1 deployed, v2 rendered: its run is open and its canary ready. */
    async function openRun(name: string): Promise<void> {
      await cluster.client.create(Resources.rolloutPolicies, { apiVersion: 'ome.io/v1beta1', kind: 'RolloutPolicy', metadata: { name, namespace: NS }, spec: manual(10) });
      await cluster.client.create(Resources.inferenceServices, {
        apiVersion: 'ome.io/v1beta1',
        kind: 'InferenceService',
        metadata: { name, namespace: NS },
        spec: { engine: { minReplicas: REPLICAS }, model: { name: 'llama' }, runtime: { name: RUNTIME }, rollout: { groups: [{ components: ['engine'], policyRef: { name, progression: 'canary' } }] } },
      });
      await recordUid('InferenceService', name);
      expect(await render(name, 'srt:v1')).toBe('created');
      expect(await render(name, 'srt:v2')).toBe('run-opened');
      await ready(`${name}-engine-canary`, 1);
    }

    async function annotate(name: string, key: string, value: string): Promise<string> {
      const isvc = await cluster.client.patch(Resources.inferenceServices, NS, name, { metadata: { annotations: { [key]: value } } }, { type: 'merge' });
      return isvc.metadata.resourceVersion ?? '';
    }

    const GET_DEPLOYMENT = 'get deployments.apps';
    const LIST_POLICIES = 'list rolloutpolicies.ome.io';
    const PATCH_ISVC = 'patch inferenceservices.ome.io';
    const SCALE = 'patch deployments.apps';

    it('rollout-run, first pass of a run that opened: the run, its two Deployments and policy, one status write, one scale', async () => {
      await openRun('run-open');
      expectCost(await invoke('rollout-run', hint('InferenceService', 'run-open')), {
        // The fenced scale reads the stable Deployment again for the lease's stamp.
        kube: { [GET_ISVC]: 1, [GET_DEPLOYMENT]: 3, [LIST_POLICIES]: 1, [WRITE_STATUS]: 1, [SCALE]: 1 },
        dynamo: LEASE,
        // The object; the stable and canary Deployments, for readiness; the policies, to
        // restate the plan conditions; one status write (the step's phase, canary state and
        // conditions together); the stable Deployment scaled down by the ready canary pod.
        minimum: { kube: 6, dynamo: 2 },
      });
    }, 60_000);

    it('rollout-run, a hold at a manual pause: reads only', async () => {
      expectCost(await invoke('rollout-run', hint('InferenceService', 'run-open')), {
        kube: { [GET_ISVC]: 1, [GET_DEPLOYMENT]: 2, [LIST_POLICIES]: 1 },
        dynamo: LEASE,
        // Whether the step may move needs the object, both Deployments' readiness and the
        // live plan's policy (its drift is restated on every pass); nothing changes.
        minimum: { kube: 4, dynamo: 2 },
      });
    }, 60_000);

    it('rollout-run, a step that advances on a promote', async () => {
      const isvc = await cluster.client.get<RolloutIsvc>(Resources.inferenceServices, NS, 'run-open');
      const canaryRevision = isvc.status?.canary?.canaryRevisionHash ?? '';
      expect(canaryRevision).not.toBe('');
      const version = await annotate('run-open', 'ome.io/rollout-promote', canaryRevision);
      const cost = await invoke('rollout-run', hint('InferenceService', 'run-open', { rolloutPromote: true }, version));
      expect((await cluster.client.get<RolloutIsvc>(Resources.inferenceServices, NS, 'run-open')).status?.canary?.currentStep).toBe(1);
      expectCost(cost, {
        // The fenced scale reads the canary again for the lease's stamp; the promote's
        // record is cleared from the object the annotation's removal returned.
        kube: { [GET_ISVC]: 1, [GET_DEPLOYMENT]: 3, [LIST_POLICIES]: 1, [WRITE_STATUS]: 2, [SCALE]: 1, [PATCH_ISVC]: 1 },
        dynamo: LEASE,
        // Read the object, both Deployments and the policy; one status write (the step);
        // the canary scaled to the next step's capacity; the promote annotation removed
        // (tested against its value); the record of the applied promote cleared once the
        // annotation is gone (one status write): 8.
        minimum: { kube: 8, dynamo: 2 },
      });
    }, 60_000);

    it('repin-apply, a repin that applies and advances the run: one lease, one claim', async () => {
      await openRun('repin');
      await invoke('rollout-run', hint('InferenceService', 'repin'));
      await cluster.client.patch(Resources.rolloutPolicies, NS, 'repin', { spec: manual(5) }, { type: 'merge' });
      const version = await annotate('repin', 'ome.io/rollout-repin', 'now');
      const cost = await invoke('repin-apply', hint('InferenceService', 'repin', { rolloutRepin: true }, version));
      const isvc = await cluster.client.get<RolloutIsvc>(Resources.inferenceServices, NS, 'repin');
      expect(isvc.metadata.annotations?.['ome.io/rollout-repin']).toBeUndefined();
      expect(isvc.status?.rollout?.activeRun?.plan.groups?.[0]?.group.canary?.steps?.[0]?.traffic).toBe(5);
      expectCost(cost, {
        kube: { [GET_ISVC]: 1, [LIST_POLICIES]: 2, [WRITE_STATUS]: 2, 'create events': 1, [PATCH_ISVC]: 1, [GET_DEPLOYMENT]: 2 },
        dynamo: { UpdateItem: 3, PutItem: 1 },
        // The repin: read the object and its policy, one status write (new plan, canary
        // fitted, conditions), its Event, the annotation removed: 5. The run's pass at once,
        // from the object the removal returned: both Deployments, one status write (the
        // step's phase): 3. The object's lease (2), the request's claim and completion (2).
        minimum: { kube: 8, dynamo: 4 },
      });
    }, 60_000);

    it('repin-apply, the same hint redelivered after it applied: one read', async () => {
      const isvc = await cluster.client.get<RolloutIsvc>(Resources.inferenceServices, NS, 'repin');
      expectCost(await invoke('repin-apply', hint('InferenceService', 'repin', { rolloutRepin: true }, isvc.metadata.resourceVersion)), {
        kube: { [GET_ISVC]: 1 },
        dynamo: LEASE,
        // The annotation is gone: the object says so, under its lease.
        minimum: { kube: 1, dynamo: 2 },
      });
    }, 60_000);

    it('repin-apply, a repin with nothing to change: discarded, annotation consumed', async () => {
      const version = await annotate('repin', 'ome.io/rollout-repin', 'now');
      expectCost(await invoke('repin-apply', hint('InferenceService', 'repin', { rolloutRepin: true }, version)), {
        kube: { [GET_ISVC]: 1, [LIST_POLICIES]: 1, [PATCH_ISVC]: 1 },
        dynamo: { PutItem: 1, UpdateItem: 3 },
        // Read the object and its policy to find the live plan equal to the pinned one;
        // remove the annotation: 3. Lease (2), the request's claim and completion (2): a
        // redelivery of this request must not apply a later edit of the policy.
        minimum: { kube: 3, dynamo: 4 },
      });
    }, 60_000);
  });
});
