/**
 * A world for the fault cases: the embedded API server, the real pin use-case, stores over
 * DynamoDB Local or memory, a clock tests can move, workers that can be killed at a chosen
 * point, and an independent log of effects read from the API server's own watch stream
 * (never from the code's counters).
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { ensureTable, type DynamoDbLocal } from '../../local/dynamodb-local';
import { dynamoDbLocalForTests } from '../support/dynamodb-for-tests';
import { createDynamoClient, createDynamoStores } from '../../shared/adapters/dynamodb';
import { createEventRecorder } from '../../shared/use-cases/record-event';
import { isRetryable, NotFoundError } from '../../shared/domain/errors';
import type { InferenceService } from '../../shared/domain/model/inference-service';
import { Resources } from '../../shared/domain/model/resources';
import type { Clock } from '../../shared/ports/clock';
import type { ClusterClient, KubeObject, ResourceType } from '../../shared/ports/cluster';
import type { IdempotencyStore, LeaseStore } from '../../shared/ports/store';
import { createDirectWorkloadWriter, pinInferenceService, type PinResult, type PinningDeps } from '../../shared/use-cases/pinning';
import { createMemoryStores, MemoryIdempotencyStore, MemoryLeaseStore } from '../../shared/adapters/memory';
import { buildSeedRuntimeSpec } from '../runtime/fixtures/seed-runtime';

export const NS = 'llama-demo';
export const RUNTIME = 'sglang-llama-3-2-3b';
export const REV_090 = 'r-llama-demo-sglang-llama-3-2-3b-590753e8';
export const REV_085 = 'r-llama-demo-sglang-llama-3-2-3b-af9539ac';
export const LEASE_TTL_MS = 30_000;

/** Real time plus an offset the test moves: "three days later" without waiting. */
export class ShiftedClock implements Clock {
  offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
  advance(ms: number): void {
    this.offset += ms;
  }
}

/** A clock `skewMs` off another one: a worker whose wall clock is wrong. */
export function skewedClock(base: Clock, skewMs: number): Clock {
  return { now: () => base.now() + skewMs };
}

export interface Stores {
  leases: LeaseStore;
  idempotency: IdempotencyStore;
}

/** DynamoDB Local with a fresh table; `stores(clock)` gives each worker its own view (its own clock) of the same table. */
export interface DynamoTable {
  local: DynamoDbLocal;
  client: DynamoDBDocumentClient;
  tableName: string;
  stores(clock: Clock, client?: DynamoDBDocumentClient): Stores;
  stop(): Promise<void>;
}

export async function startDynamoTable(): Promise<DynamoTable> {
  const local = await dynamoDbLocalForTests();
  const client = createDynamoClient({ endpoint: local.endpoint, region: 'us-east-1' });
  const tableName = `faults-${randomUUID()}`;
  await ensureTable(client, tableName);
  return {
    local,
    client,
    tableName,
    stores: (clock, via = client) => createDynamoStores(via, { tableName, clock }),
    async stop() {
      client.destroy();
      await local.stop();
    },
  };
}

/** A worker stopped dead: no further call of it reaches anything. */
export class KilledError extends Error {
  constructor(where: string) {
    super(`worker killed ${where}`);
    this.name = 'KilledError';
  }
}

/**
 * One worker's view of the world that can be killed: once `kill()` ran (or the trigger
 * fired), every later call to the cluster or the stores fails without reaching them, as if
 * the process were gone — so neither `complete`, `abandon` nor the lease release happens.
 */
export class Killable {
  dead = false;
  /** Kills the worker when a write matches, before it is sent. */
  killOnWrite: ((verb: string, type: ResourceType, object: string) => boolean) | undefined;
  /** Kills the worker when a store method is called, before it runs. */
  killOnStore: ((method: string) => boolean) | undefined;

  kill(): void {
    this.dead = true;
  }

  private check(where: string): void {
    if (this.dead) throw new KilledError(where);
  }

  client(inner: ClusterClient): ClusterClient {
    const guard = async <T>(verb: string, type: ResourceType, name: string, run: () => Promise<T>): Promise<T> => {
      this.check(`before ${verb} ${type.plural}`);
      if (!['get', 'list', 'watch'].includes(verb) && this.killOnWrite?.(verb, type, name)) {
        this.kill();
        this.check(`before ${verb} ${type.plural}/${name}`);
      }
      return run();
    };
    return {
      get: (type, namespace, name) => guard('get', type, name, () => inner.get(type, namespace, name)),
      list: (type, options) => guard('list', type, '', () => inner.list(type, options)),
      create: (type, object, options) => guard('create', type, object.metadata.name, () => inner.create(type, object, options)),
      replace: (type, object, options) => guard('replace', type, object.metadata.name, () => inner.replace(type, object, options)),
      replaceStatus: (type, object, options) => guard('replaceStatus', type, object.metadata.name, () => inner.replaceStatus(type, object, options)),
      patch: (type, namespace, name, patch, options) => guard('patch', type, name, () => inner.patch(type, namespace, name, patch, options)),
      delete: (type, namespace, name, options) => guard('delete', type, name, () => inner.delete(type, namespace, name, options)),
      watch: (type, options, onEvent) => guard('watch', type, '', () => inner.watch(type, options, onEvent)),
    } as ClusterClient;
  }

  stores(inner: Stores): Stores {
    const gate = async <T>(method: string, run: () => Promise<T>): Promise<T> => {
      this.check(`before ${method}`);
      if (this.killOnStore?.(method)) {
        this.kill();
        this.check(`before ${method}`);
      }
      return run();
    };
    return {
      leases: {
        acquire: (key, holder, ttl) => gate('acquire', () => inner.leases.acquire(key, holder, ttl)),
        renew: (lease, ttl) => gate('renew', () => inner.leases.renew(lease, ttl)),
        release: (lease) => gate('release', () => inner.leases.release(lease)),
      },
      idempotency: {
        claim: (key, options) => gate('claim', () => inner.idempotency.claim(key, options)),
        complete: (key, result) => gate('complete', () => inner.idempotency.complete(key, result)),
        abandon: (key, owner) => gate('abandon', () => inner.idempotency.abandon(key, owner)),
      },
    };
  }
}

// --- the independent log of effects --------------------------------------------------

export interface Effect {
  /** The API server's resourceVersion of the write (one global counter, so effects order). */
  rv: number;
  kind: 'token-applied' | 'template-changed';
  /** InferenceService name (for a Deployment, the InferenceService it belongs to). */
  object: string;
  uid: string;
  /** The token recorded, or the revision the new pod template renders. */
  value: string;
  /** For a template change: the revision the InferenceService was pinned to at that moment. */
  pinnedThen?: string;
}

interface IsvcState {
  token: string;
  pinned: string;
}

function templateOf(deployment: KubeObject): { hash: string; renderedFrom: string } {
  const template = (deployment.spec as { template?: { metadata?: { annotations?: Record<string, string> } } } | undefined)?.template;
  return { hash: JSON.stringify(template ?? null), renderedFrom: template?.metadata?.annotations?.['ome.io/rendered-from'] ?? '' };
}

/**
 * Effects as the API server saw them, from its watch streams of InferenceServices and
 * Deployments: a sync token newly recorded in status (`token-applied`), and a Deployment's
 * pod template changing (`template-changed`).
 */
export class EffectLog {
  readonly effects: Effect[] = [];
  private readonly isvcs = new Map<string, IsvcState>();
  /** Every InferenceService write seen: its uid, resourceVersion and pinned revision. */
  private readonly pins: Array<{ uid: string; rv: number; pinned: string }> = [];
  private readonly templates = new Map<string, string>();
  private readonly seen = new Map<string, number>();
  private readonly abort = new AbortController();
  private readonly done: Promise<void>[] = [];

  private constructor(private readonly admin: ClusterClient, private readonly namespace: string) {}

  static async start(admin: ClusterClient, namespace: string): Promise<EffectLog> {
    const log = new EffectLog(admin, namespace);
    for (const type of [Resources.inferenceServices, Resources.deployments]) {
      const page = await admin.list(type, { namespace });
      for (const item of page.items) log.observe(type, item, false);
      log.seen.set(type.plural, Number(page.resourceVersion));
      log.done.push(
        admin
          .watch(type, { namespace, resourceVersion: page.resourceVersion, signal: log.abort.signal }, (event) => {
            if (event.type === 'ADDED' || event.type === 'MODIFIED') log.observe(type, event.object, true);
            if (event.type === 'DELETED' && type === Resources.inferenceServices) log.isvcs.delete(event.object.metadata.uid ?? '');
            log.seen.set(type.plural, Math.max(log.seen.get(type.plural) ?? 0, Number(event.object.metadata.resourceVersion)));
          })
          .catch(() => undefined),
      );
    }
    return log;
  }

  private observe(type: ResourceType, object: KubeObject, record: boolean): void {
    const rv = Number(object.metadata.resourceVersion);
    if (type === Resources.inferenceServices) {
      const uid = object.metadata.uid ?? '';
      const status = (object as InferenceService).status;
      const next = { token: status?.lastRuntimeSyncToken ?? '', pinned: status?.pinnedRevisionName ?? '' };
      const before = this.isvcs.get(uid);
      if (record && next.token !== '' && next.token !== (before?.token ?? '')) {
        this.effects.push({ rv, kind: 'token-applied', object: object.metadata.name, uid, value: next.token });
      }
      this.isvcs.set(uid, next);
      this.pins.push({ uid, rv, pinned: next.pinned });
      return;
    }
    const owner = object.metadata.ownerReferences?.[0];
    const key = object.metadata.uid ?? object.metadata.name;
    const template = templateOf(object);
    if (record && this.templates.get(key) !== template.hash) {
      this.effects.push({ rv, kind: 'template-changed', object: owner?.name ?? object.metadata.name, uid: owner?.uid ?? '', value: template.renderedFrom });
    }
    this.templates.set(key, template.hash);
  }

  /** Resolves once the watches have seen every write made so far to the objects they watch. */
  async settle(): Promise<void> {
    const targets = await Promise.all(
      [Resources.inferenceServices, Resources.deployments].map(async (type) => {
        const page = await this.admin.list(type, { namespace: this.namespace });
        return [type.plural, Math.max(0, ...page.items.map((item) => Number(item.metadata.resourceVersion)))] as const;
      }),
    );
    for (let i = 0; i < 2_000; i += 1) {
      if (targets.every(([plural, rv]) => (this.seen.get(plural) ?? 0) >= rv)) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`the watches did not catch up with ${JSON.stringify(targets)}`);
  }

  of(kind: Effect['kind'], object?: string): Effect[] {
    return this.effects.filter((e) => e.kind === kind && (object === undefined || e.object === object));
  }

  /** Token values applied (recorded) more than once to the same object, counted beyond the first. */
  doubleApplications(): number {
    const counts = new Map<string, number>();
    for (const e of this.of('token-applied')) counts.set(`${e.uid}#${e.value}`, (counts.get(`${e.uid}#${e.value}`) ?? 0) + 1);
    return [...counts.values()].reduce((sum, n) => sum + n - 1, 0);
  }

  /** The revision an InferenceService was pinned to just before resourceVersion `rv` (the two watches arrive apart; versions order them). */
  private pinnedBefore(uid: string, rv: number): string | undefined {
    let best: { rv: number; pinned: string } | undefined;
    for (const pin of this.pins) if (pin.uid === uid && pin.rv < rv && (best === undefined || pin.rv > best.rv)) best = pin;
    return best?.pinned;
  }

  /** Template changes to a revision other than the one the InferenceService was pinned to then: a stale writer's overwrite. */
  staleTemplateWrites(): Effect[] {
    return this.of('template-changed')
      .map((e) => {
        const pinnedThen = this.pinnedBefore(e.uid, e.rv);
        return pinnedThen === undefined ? e : { ...e, pinnedThen };
      })
      .filter((e) => e.pinnedThen !== undefined && e.pinnedThen !== '' && e.value !== e.pinnedThen);
  }

  stop(): void {
    this.abort.abort();
  }
}

// --- the pinning world ---------------------------------------------------------------

export function seedRuntime(memFrac: '0.9' | '0.85', name = RUNTIME): KubeObject {
  return { apiVersion: 'ome.io/v1beta1', kind: 'ServingRuntime', metadata: { name, namespace: NS }, spec: buildSeedRuntimeSpec(memFrac) };
}

export function seedIsvc(name: string, runtime = RUNTIME, annotations?: Record<string, string>): InferenceService {
  return {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace: NS, ...(annotations ? { annotations } : {}) },
    spec: {
      model: { name: 'llama-3-2-3b-instruct' },
      runtime: { name: runtime, kind: 'ServingRuntime', autoSync: false },
      engine: { minReplicas: 1, maxReplicas: 1 },
    },
  };
}

/** Creates or replaces a runtime (as `kubectl apply`), retrying what a user's kubectl would. */
export async function applyRuntime(admin: ClusterClient, runtime: KubeObject): Promise<void> {
  await deliver(async () => {
    let current: KubeObject;
    try {
      current = await admin.get(Resources.servingRuntimes, NS, runtime.metadata.name);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      await admin.create(Resources.servingRuntimes, runtime);
      return;
    }
    await admin.replace(Resources.servingRuntimes, { ...runtime, metadata: { ...runtime.metadata, resourceVersion: current.metadata.resourceVersion } });
  });
}

export function getIsvc(admin: ClusterClient, name: string): Promise<InferenceService> {
  return admin.get<InferenceService>(Resources.inferenceServices, NS, name);
}

/** Sets `ome.io/runtime-sync` (a user's `kubectl annotate --overwrite`), retrying the user's own conflicts. */
export async function annotateSync(admin: ClusterClient, name: string, token: string): Promise<InferenceService> {
  return deliver(async () => {
    const isvc = structuredClone(await getIsvc(admin, name));
    isvc.metadata.annotations = { ...(isvc.metadata.annotations ?? {}), 'ome.io/runtime-sync': token };
    return admin.replace(Resources.inferenceServices, isvc);
  }, 100);
}

export async function engineRenderedFrom(admin: ClusterClient, name: string): Promise<string | undefined> {
  try {
    return templateOf(await admin.get(Resources.deployments, NS, `${name}-engine`)).renderedFrom;
  } catch {
    return undefined;
  }
}

export interface WorkerOptions {
  holder?: string;
  client?: ClusterClient;
  stores?: Stores;
  clock?: Clock;
  leaseWaitMs?: number;
  remainingTimeMs?: () => number;
  leaseTtlMs?: number;
  renewEveryMs?: number;
}

/** The world's memory stores as a worker with another clock sees them (same state). */
export function storesWithClock(stores: Stores, clock: Clock): Stores {
  const { leases, idempotency } = stores;
  if (!(leases instanceof MemoryLeaseStore) || !(idempotency instanceof MemoryIdempotencyStore)) {
    throw new Error('storesWithClock needs the memory stores');
  }
  return { leases: leases.withClock(clock), idempotency: idempotency.withClock(clock) };
}

export interface FaultWorld {
  clusterId: string;
  cluster: EmbeddedCluster;
  admin: ClusterClient;
  clock: ShiftedClock;
  stores: Stores;
  effects: EffectLog;
  /** The dependencies of one worker (a fresh holder, as each Lambda invocation has). */
  worker(options?: WorkerOptions): PinningDeps;
  /** One delivery of a pin hint to a fresh worker. */
  pin(name: string, options?: WorkerOptions & { uid?: string }): Promise<PinResult>;
  stop(): Promise<void>;
}

let workers = 0;

export async function startFaultWorld(
  options: { clusterId?: string; stores?: (clock: Clock) => Stores; workloadReadyDelayMs?: number } = {},
): Promise<FaultWorld> {
  const cluster = await startEmbeddedCluster({ workloadReadyDelayMs: options.workloadReadyDelayMs ?? 5 });
  const admin = cluster.client;
  const clock = new ShiftedClock();
  const stores = options.stores?.(clock) ?? createMemoryStores(clock);
  await admin.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await applyRuntime(admin, seedRuntime('0.9'));
  const effects = await EffectLog.start(admin, NS);
  const clusterId = options.clusterId ?? 'test';
  const worker = (o: WorkerOptions = {}): PinningDeps => {
    const client = o.client ?? admin;
    workers += 1;
    return {
      clusterId,
      client,
      omeNamespace: 'ome',
      leases: (o.stores ?? stores).leases,
      idempotency: (o.stores ?? stores).idempotency,
      clock: o.clock ?? clock,
      config: { renderWorkloads: true, leaseTtlMs: o.leaseTtlMs ?? LEASE_TTL_MS, maxConflictRetries: 5 },
      holder: o.holder ?? `worker-${workers}`,
      events: createEventRecorder(client),
      workloads: createDirectWorkloadWriter(client),
      leaseWaitMs: o.leaseWaitMs ?? 50,
      ...(o.remainingTimeMs === undefined ? {} : { remainingTimeMs: o.remainingTimeMs }),
    };
  };
  return {
    clusterId,
    cluster,
    admin,
    clock,
    stores,
    effects,
    worker,
    pin: (name, o = {}) => pinInferenceService(worker(o), { namespace: NS, name, ...(o.uid === undefined ? {} : { uid: o.uid }) }),
    async stop() {
      effects.stop();
      await cluster.stop();
    },
  };
}

/** Delivers like the bus: a retryable failure is delivered again, up to `attempts` times. */
export async function deliver<T>(work: () => Promise<T>, attempts = 30): Promise<T> {
  for (let n = 1; ; n += 1) {
    try {
      return await work();
    } catch (error) {
      if (!isRetryable(error) || n >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
    }
  }
}

/** A new InferenceService pinned to the runtime's current spec (token-free). */
export async function pinnedIsvc(world: FaultWorld, name: string, annotations?: Record<string, string>): Promise<InferenceService> {
  await world.admin.create(Resources.inferenceServices, seedIsvc(name, RUNTIME, annotations));
  await deliver(() => world.pin(name));
  return getIsvc(world.admin, name);
}
