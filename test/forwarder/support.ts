/**
 * What the forwarder's integration tests share: the embedded API server reached over HTTP
 * (the production adapter), DynamoDB Local stores, recording publishers, a freezer that
 * makes a forwarder stop dead the way a killed process does, and the two checks every
 * fault test makes: nothing lost, nothing forwarded twice.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { expect } from 'vitest';
import { createDynamoClient, createDynamoStores } from '../../shared/adapters/dynamodb';
import { connectionFromRecord, createClusterClient } from '../../shared/adapters/kubernetes';
import type { ClosableClusterClient } from '../../shared/adapters/kubernetes';
import type { HintDetail, HintEvent } from '../../shared/domain/hint-event';
import { Resources } from '../../shared/domain/model/resources';
import type { ClusterClient, KubeObject, WatchEvent, WatchOptions } from '../../shared/ports/cluster';
import type { EventPublisher, PublishResult } from '../../shared/ports/event-publisher';
import type { CheckpointStore, LeaseStore, Stores } from '../../shared/ports/store';
import type { ForwarderLogger } from '../../shared/use-cases/forwarder';
import { startEmbeddedCluster } from '../../local/cluster';
import type { EmbeddedCluster } from '../../local/cluster';
import { ensureTable, startDynamoDbLocal } from '../../local/dynamodb-local';
import type { DynamoDbLocal } from '../../local/dynamodb-local';

export interface ForwarderWorld {
  cluster: EmbeddedCluster;
  /** Over HTTP, as the forwarder runs against real clusters. */
  client: ClosableClusterClient;
  dynamo: DynamoDbLocal;
  documentClient: DynamoDBDocumentClient;
  /** Fresh stores on a table of their own. */
  newStores(): Promise<Stores>;
  stop(): Promise<void>;
}

export async function startForwarderWorld(options: { watchWindow?: number; bookmarkIntervalMs?: number } = {}): Promise<ForwarderWorld> {
  const [cluster, dynamo] = await Promise.all([
    startEmbeddedCluster({ watchWindow: options.watchWindow ?? 1000, bookmarkIntervalMs: options.bookmarkIntervalMs ?? 200, workloadReadyDelayMs: 50 }),
    startDynamoDbLocal(),
  ]);
  const connection = connectionFromRecord({ mode: 'standalone', id: 'local', server: cluster.url, omeNamespace: 'ome', credentials: { kind: 'kubeconfig', kubeconfig: cluster.kubeconfig } });
  const client = createClusterClient(connection, { requestTimeoutMs: 10_000 });
  const documentClient = createDynamoClient({ endpoint: dynamo.endpoint, region: 'us-east-1', requestTimeoutMs: 10_000 });
  return {
    cluster,
    client,
    dynamo,
    documentClient,
    async newStores() {
      const tableName = `forwarder-${randomUUID()}`;
      await ensureTable(documentClient, tableName);
      return createDynamoStores(documentClient, { tableName });
    },
    async stop() {
      client.close();
      documentClient.destroy();
      await Promise.all([cluster.stop(), dynamo.stop()]);
    },
  };
}

/** Collects what reached the bus (or the fake): every accepted hint, in order. */
export class RecordingPublisher implements EventPublisher {
  readonly accepted: HintDetail[] = [];
  readonly calls: number[] = [];
  /** Return a failure code to fail the event in this call; undefined accepts it. */
  failWhen: ((event: HintEvent, call: number) => string | undefined) | undefined;

  constructor(private readonly inner?: EventPublisher) {}

  async publish(events: readonly HintEvent[]): Promise<PublishResult> {
    const call = this.calls.length;
    this.calls.push(events.length);
    const failing = events.filter((event) => this.failWhen?.(event, call) !== undefined);
    const passing = events.filter((event) => !failing.includes(event));
    const result: PublishResult = this.inner ? await this.inner.publish(passing) : { published: passing.length, skipped: [], failed: [] };
    const notAccepted = new Set([...result.failed.map((f) => f.event), ...result.skipped.map((s) => s.event)]);
    for (const event of passing) if (!notAccepted.has(event)) this.accepted.push(event.detail);
    return {
      published: result.published,
      skipped: result.skipped,
      failed: [...result.failed, ...failing.map((event) => ({ event, errorCode: this.failWhen?.(event, call) ?? 'InternalFailure' }))],
    };
  }

  /** Accepted hints about objects in one namespace. */
  inNamespace(namespace: string): HintDetail[] {
    return this.accepted.filter((detail) => detail.namespace === namespace);
  }
}

/** The key "done twice" is judged by: the same object at the same version. */
export function versionKey(detail: Pick<HintDetail, 'uid' | 'resourceVersion'>): string {
  return `${detail.uid}@${detail.resourceVersion}`;
}

/** No object version was forwarded twice. */
export function expectNoDuplicates(details: readonly HintDetail[]): void {
  const counts = new Map<string, number>();
  for (const detail of details) counts.set(versionKey(detail), (counts.get(versionKey(detail)) ?? 0) + 1);
  expect([...counts].filter(([, count]) => count > 1)).toEqual([]);
}

/** Every expected object version was forwarded. */
export function expectAllForwarded(details: readonly HintDetail[], expected: ReadonlyArray<Pick<HintDetail, 'uid' | 'resourceVersion'>>): void {
  const seen = new Set(details.map(versionKey));
  expect(expected.map(versionKey).filter((key) => !seen.has(key))).toEqual([]);
}

/** Polls until `check` stops throwing (vitest's expect.poll needs a value; this takes assertions). */
export async function eventually(check: () => void | Promise<void>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

export async function createNamespace(client: ClusterClient, name: string): Promise<void> {
  await client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

export function servingRuntime(namespace: string, name: string, image = 'lmsysorg/sglang:v0.4'): KubeObject {
  return {
    apiVersion: 'ome.io/v1beta1',
    kind: 'ServingRuntime',
    metadata: { name, namespace },
    spec: { containers: [{ name: 'ome-container', image }] },
  };
}

export function inferenceService(namespace: string, name: string): KubeObject {
  return {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace },
    spec: { model: { name }, runtime: { name: 'sglang', kind: 'ServingRuntime', autoSync: false }, engine: { minReplicas: 1, maxReplicas: 1 } },
  };
}

/** Quiet unless DEBUG_FORWARDER is set. */
export const testLogger: ForwarderLogger = process.env.DEBUG_FORWARDER
  ? { debug: console.debug, info: console.info, warn: console.warn, error: console.error }
  : { info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * Stands between a forwarder and its ports. `freeze()` stops it dead, as a killed process
 * stops: open watches are cut, and every later call never returns, so it neither
 * publishes, checkpoints, renews nor releases anything again.
 */
export class Freezer {
  private frozen = false;
  private readonly cut = new AbortController();

  freeze(): void {
    this.frozen = true;
    this.cut.abort();
  }

  private gate<T>(call: () => Promise<T>): Promise<T> {
    return this.frozen ? new Promise<T>(() => undefined) : call();
  }

  cluster(inner: ClusterClient): ClusterClient {
    const gate = <T>(call: () => Promise<T>) => this.gate(call);
    const cut = this.cut.signal;
    const isFrozen = (): boolean => this.frozen;
    return {
      get: (...args) => gate(() => inner.get(...args)),
      list: (...args) => gate(() => inner.list(...args)),
      create: (...args) => gate(() => inner.create(...args)),
      replace: (...args) => gate(() => inner.replace(...args)),
      replaceStatus: (...args) => gate(() => inner.replaceStatus(...args)),
      patch: (...args) => gate(() => inner.patch(...args)),
      delete: (...args) => gate(() => inner.delete(...args)),
      async watch<T extends KubeObject>(type: typeof Resources.inferenceServices, options: WatchOptions, onEvent: (event: WatchEvent<T>) => void | Promise<void>) {
        const { signal, dispose } = anyOf(cut, options.signal);
        try {
          await gate(() => inner.watch<T>(type, { ...options, signal }, (event) => (isFrozen() ? new Promise<void>(() => undefined) : onEvent(event))));
        } finally {
          dispose();
        }
        if (isFrozen()) await new Promise<void>(() => undefined);
      },
    } as ClusterClient;
  }

  publisher(inner: EventPublisher): EventPublisher {
    return { publish: (events) => this.gate(() => inner.publish(events)) };
  }

  leases(inner: LeaseStore): LeaseStore {
    return {
      acquire: (...args) => this.gate(() => inner.acquire(...args)),
      renew: (...args) => this.gate(() => inner.renew(...args)),
      release: (...args) => this.gate(() => inner.release(...args)),
    };
  }

  checkpoints(inner: CheckpointStore): CheckpointStore {
    return {
      loadCheckpoints: (...args) => this.gate(() => inner.loadCheckpoints(...args)),
      saveCheckpoints: (...args) => this.gate(() => inner.saveCheckpoints(...args)),
      recordForwarderError: (...args) => this.gate(() => inner.recordForwarderError(...args)),
      loadForwarderError: (...args) => this.gate(() => inner.loadForwarderError(...args)),
    };
  }
}

function anyOf(a: AbortSignal, b: AbortSignal | undefined): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  if (a.aborted || b?.aborted) abort();
  a.addEventListener('abort', abort, { once: true });
  b?.addEventListener('abort', abort, { once: true });
  return {
    signal: controller.signal,
    dispose: () => {
      a.removeEventListener('abort', abort);
      b?.removeEventListener('abort', abort);
    },
  };
}
