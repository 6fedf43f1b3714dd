/**
 * A pinning test world: the embedded cluster's in-process client (real API semantics),
 * memory stores, the direct workload writer, and helpers to apply the seed's objects and
 * read back what a user would see.
 */
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { createEventRecorder } from '../../shared/use-cases/record-event';
import { isRetryable, NotFoundError } from '../../shared/domain/errors';
import type { InferenceService } from '../../shared/domain/model/inference-service';
import { Resources } from '../../shared/domain/model/resources';
import { systemClock } from '../../shared/ports/clock';
import type { ClusterClient, KubeObject, ResourceType } from '../../shared/ports/cluster';
import type { IdempotencyStore, LeaseStore } from '../../shared/ports/store';
import { checkRuntimeDrift, createDirectWorkloadWriter, pinInferenceService, type DriftCheckDeps, type DriftTrigger, type PinResult } from '../../shared/use-cases/pinning';
import { createMemoryStores } from '../../shared/adapters/memory';
import { buildSeedRuntimeSpec } from '../runtime/fixtures/seed-runtime';

export const NS = 'llama-demo';
export const RUNTIME = 'sglang-llama-3-2-3b';
export const ISVC = 'llama-3-2-3b-instruct';
export const REV_090 = 'r-llama-demo-sglang-llama-3-2-3b-590753e8';
export const REV_085 = 'r-llama-demo-sglang-llama-3-2-3b-af9539ac';

/** Counts requests by `verb resource` (e.g. `replaceStatus inferenceservices`). */
export class CountingClient implements ClusterClient {
  readonly counts = new Map<string, number>();
  /** Called before each write, with its verb, type and object name. */
  onWrite: ((verb: string, type: ResourceType, name: string) => void) | undefined;
  /** Called before each request but a watch, reads included, likewise. */
  onRequest: ((verb: string, type: ResourceType, name: string) => void) | undefined;

  constructor(private readonly inner: ClusterClient) {}

  count(verb: string, plural: string): number {
    return this.counts.get(`${verb} ${plural}`) ?? 0;
  }

  writes(): number {
    let total = 0;
    for (const [key, n] of this.counts) if (!/^(get|list|watch) /.test(key)) total += n;
    return total;
  }

  reset(): void {
    this.counts.clear();
  }

  private note(verb: string, type: ResourceType, name = ''): void {
    const key = `${verb} ${type.plural}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    if (verb !== 'watch') this.onRequest?.(verb, type, name);
    if (!['get', 'list', 'watch'].includes(verb)) this.onWrite?.(verb, type, name);
  }

  get: ClusterClient['get'] = (type, namespace, name) => (this.note('get', type, name), this.inner.get(type, namespace, name));
  list: ClusterClient['list'] = (type, options) => (this.note('list', type), this.inner.list(type, options));
  create: ClusterClient['create'] = (type, object, options) => (this.note('create', type, object.metadata.name), this.inner.create(type, object, options));
  replace: ClusterClient['replace'] = (type, object, options) => (this.note('replace', type, object.metadata.name), this.inner.replace(type, object, options));
  replaceStatus: ClusterClient['replaceStatus'] = (type, object, options) => (this.note('replaceStatus', type, object.metadata.name), this.inner.replaceStatus(type, object, options));
  patch: ClusterClient['patch'] = (type, namespace, name, patch, options) => (this.note('patch', type, name), this.inner.patch(type, namespace, name, patch, options));
  delete: ClusterClient['delete'] = (type, namespace, name, options) => (this.note('delete', type, name), this.inner.delete(type, namespace, name, options));
  watch: ClusterClient['watch'] = (type, options, onEvent) => (this.note('watch', type), this.inner.watch(type, options, onEvent));
}

export interface PinningWorld {
  cluster: EmbeddedCluster;
  /** The counting client the use-cases use. */
  client: CountingClient;
  /** The cluster's own client, for arranging and reading without counting. */
  admin: ClusterClient;
  deps: DriftCheckDeps;
  pin(name: string, namespace?: string): Promise<PinResult>;
  driftCheck(trigger: DriftTrigger): Promise<Awaited<ReturnType<typeof checkRuntimeDrift>>>;
  stop(): Promise<void>;
}

export interface WorldOptions {
  renderWorkloads?: boolean;
  leases?: LeaseStore;
  idempotency?: IdempotencyStore;
}

export async function startPinningWorld(options: WorldOptions = {}): Promise<PinningWorld> {
  const cluster = await startEmbeddedCluster({ workloadReadyDelayMs: 5 });
  const admin = cluster.client;
  const client = new CountingClient(admin);
  const stores = createMemoryStores(systemClock);
  await admin.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  const deps: DriftCheckDeps = {
    clusterId: 'test',
    client,
    omeNamespace: 'ome',
    leases: options.leases ?? stores.leases,
    idempotency: options.idempotency ?? stores.idempotency,
    clock: systemClock,
    config: { renderWorkloads: options.renderWorkloads ?? true, leaseTtlMs: 30_000, maxConflictRetries: 5 },
    holder: 'test-worker',
    events: createEventRecorder(client),
    workloads: createDirectWorkloadWriter(client),
    leaseWaitMs: 20_000,
  };
  return {
    cluster,
    client,
    admin,
    deps,
    pin: (name, namespace = NS) => pinInferenceService(deps, { namespace, name }),
    driftCheck: (trigger) => checkRuntimeDrift(deps, trigger),
    stop: () => cluster.stop(),
  };
}

/** Delivers like the bus: a retryable failure is delivered again, up to `attempts` times. */
export async function deliver<T>(work: () => Promise<T>, attempts = 20): Promise<T> {
  for (let n = 1; ; n += 1) {
    try {
      return await work();
    } catch (error) {
      if (!isRetryable(error) || n >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
    }
  }
}

export function seedRuntime(memFrac: '0.9' | '0.85', options: { name?: string; annotations?: Record<string, string> } = {}): KubeObject {
  return {
    apiVersion: 'ome.io/v1beta1',
    kind: 'ServingRuntime',
    metadata: { name: options.name ?? RUNTIME, namespace: NS, ...(options.annotations ? { annotations: options.annotations } : {}) },
    spec: buildSeedRuntimeSpec(memFrac),
  };
}

/** Creates or updates the seed runtime (as `kubectl apply` would). */
export async function applyRuntime(admin: ClusterClient, runtime: KubeObject): Promise<KubeObject> {
  const type = runtime.kind === 'ClusterServingRuntime' ? Resources.clusterServingRuntimes : Resources.servingRuntimes;
  try {
    const current = await admin.get(type, runtime.metadata.namespace, runtime.metadata.name);
    return await admin.replace(type, { ...runtime, metadata: { ...runtime.metadata, resourceVersion: current.metadata.resourceVersion } });
  } catch {
    return admin.create(type, runtime);
  }
}

export function seedIsvc(name = ISVC, runtime: Record<string, unknown> = {}, annotations?: Record<string, string>): InferenceService {
  return {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace: NS, ...(annotations ? { annotations } : {}) },
    spec: {
      model: { name: 'llama-3-2-3b-instruct' },
      runtime: { name: RUNTIME, kind: 'ServingRuntime', autoSync: false, ...runtime },
      engine: { minReplicas: 1, maxReplicas: 1 },
    },
  };
}

export function getIsvc(admin: ClusterClient, name = ISVC): Promise<InferenceService> {
  return admin.get<InferenceService>(Resources.inferenceServices, NS, name);
}

/** Reads, edits a copy and writes the InferenceService back (a user's `kubectl edit`). */
export async function editIsvc(admin: ClusterClient, name: string, edit: (isvc: InferenceService) => void): Promise<InferenceService> {
  const isvc = structuredClone(await getIsvc(admin, name));
  edit(isvc);
  return admin.replace(Resources.inferenceServices, isvc);
}

export function annotateSync(admin: ClusterClient, name: string, token: string | undefined): Promise<InferenceService> {
  return editIsvc(admin, name, (isvc) => {
    const annotations = { ...(isvc.metadata.annotations ?? {}) };
    if (token === undefined) delete annotations['ome.io/runtime-sync'];
    else annotations['ome.io/runtime-sync'] = token;
    isvc.metadata.annotations = annotations;
  });
}

/** PINNED, DRIFTED, REASON, MESSAGE as the seed's custom columns show them. */
export async function pinColumns(admin: ClusterClient, name = ISVC): Promise<{ pinned: string; drifted: string; reason: string; message: string; token: string }> {
  const isvc = await getIsvc(admin, name);
  const condition = isvc.status?.conditions?.find((c) => c.type === 'RuntimeDrifted');
  return {
    pinned: isvc.status?.pinnedRevisionName ?? '<none>',
    drifted: condition?.status ?? '<none>',
    reason: condition?.reason ?? '<none>',
    message: condition?.message ?? '',
    token: isvc.status?.lastRuntimeSyncToken ?? '',
  };
}

export interface EngineView {
  args: string[];
  replicas: number;
  renderedFrom: string;
  resourceVersion: string;
}

/**
 * The engine Deployment as a user would inspect it, or undefined when there is none.
 * Only NotFound means "no workload rendered": any other failure (a broken read, a
 * Deployment of an unexpected shape) fails the test instead of reading as absence.
 */
export async function engineView(admin: ClusterClient, name = ISVC): Promise<EngineView | undefined> {
  let deployment: KubeObject;
  try {
    deployment = await admin.get(Resources.deployments, NS, `${name}-engine`);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
  const spec = deployment.spec as { replicas: number; template: { spec: { containers: Array<{ args?: string[] }> } } };
  return {
    args: spec.template.spec.containers[0]?.args ?? [],
    replicas: spec.replicas,
    renderedFrom: deployment.metadata.annotations?.['ome.io/rendered-from'] ?? '',
    resourceVersion: deployment.metadata.resourceVersion ?? '',
  };
}

export async function warningEvents(admin: ClusterClient, name: string): Promise<Array<{ reason: string; message: string; count: number }>> {
  const page = await admin.list<KubeObject & { reason?: string; message?: string; count?: number; involvedObject?: { name?: string } }>(Resources.events, { namespace: NS });
  return page.items
    .filter((e) => e.involvedObject?.name === name && (e as { type?: string }).type === 'Warning')
    .map((e) => ({ reason: e.reason ?? '', message: e.message ?? '', count: e.count ?? 1 }));
}

export async function revisionNames(admin: ClusterClient): Promise<string[]> {
  const page = await admin.list(Resources.controllerRevisions, { namespace: 'ome' });
  return page.items.map((r) => r.metadata.name).sort();
}
