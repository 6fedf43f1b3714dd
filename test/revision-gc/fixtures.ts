/**
 * Seeding helpers for GC tests against the embedded API server: revisions with chosen
 * creation times (the server stamps `Date.now()`, which the tests set), InferenceServices
 * that name revisions, and a pass-through client that lets a test act between two of the
 * sweep's requests.
 */
import { vi } from 'vitest';
import { Resources } from '../../shared/domain/model/resources';
import type { ClusterClient, KubeObject, ListOptions, ListPage, ResourceType } from '../../shared/ports/cluster';
import { Annotation, CREATED_BY_OME, Label, RuntimeKind, type RuntimeKindName } from '../../shared/domain/vocabulary';

export const T0 = Date.parse('2026-09-28T14:00:00Z');
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

export interface RevisionSeed {
  runtime: string;
  kind?: RuntimeKindName;
  /** The ServingRuntime's namespace; ignored for a ClusterServingRuntime. */
  runtimeNamespace?: string;
  /** 0, 1, 2…: the hash and the name end with it. */
  index: number;
  createdAt: number;
  mark?: string;
  createdBy?: string;
}

export function revisionName(seed: Pick<RevisionSeed, 'runtime' | 'kind' | 'runtimeNamespace' | 'index'>): string {
  const hash = seed.index.toString(16).padStart(8, '0');
  return seed.kind === RuntimeKind.namespaced ? `r-${seed.runtimeNamespace ?? 'default'}-${seed.runtime}-${hash}` : `cr-${seed.runtime}-${hash}`;
}

export function revisionObject(omeNamespace: string, seed: RevisionSeed): KubeObject {
  const kind = seed.kind ?? RuntimeKind.cluster;
  const annotations: Record<string, string> = { [Annotation.createdBy]: seed.createdBy ?? CREATED_BY_OME };
  if (seed.mark !== undefined) annotations[Annotation.gcEligibleSince] = seed.mark;
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(seed),
      namespace: omeNamespace,
      labels: {
        [Label.runtimeOf]: seed.runtime,
        [Label.runtimeOfKind]: kind,
        [Label.runtimeOfNamespace]: kind === RuntimeKind.namespaced ? (seed.runtimeNamespace ?? 'default') : '',
        [Label.revisionHash]: seed.index.toString(16).padStart(8, '0'),
      },
      annotations,
    },
    data: { containers: [{ name: 'ome-container', args: [`--mem-frac=0.${seed.index}`] }] },
    revision: 1,
  };
}

/**
 * Creates the revision with the server's clock at `createdAt`: the embedded server runs in
 * this process and stamps `creationTimestamp` from `Date`, which is mocked for the call.
 */
export async function createRevision(client: ClusterClient, omeNamespace: string, seed: RevisionSeed): Promise<KubeObject> {
  vi.setSystemTime(seed.createdAt);
  try {
    return await client.create(Resources.controllerRevisions, revisionObject(omeNamespace, seed));
  } finally {
    vi.useRealTimers();
  }
}

/** `count` revisions of one runtime, one minute apart from `T0`; index 0 is the oldest. */
export async function createRevisions(client: ClusterClient, omeNamespace: string, count: number, seed: Omit<RevisionSeed, 'index' | 'createdAt'>): Promise<string[]> {
  const names: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const created = await createRevision(client, omeNamespace, { ...seed, index, createdAt: T0 + index * 60_000 });
    names.push(created.metadata.name);
  }
  return names;
}

export async function createNamespace(client: ClusterClient, name: string): Promise<void> {
  await client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

/** An ISVC naming `revision` in spec and/or `pinned` in status. */
export async function createIsvc(
  client: ClusterClient,
  namespace: string,
  name: string,
  refs: { runtime: string; revision?: string; pinned?: string },
): Promise<KubeObject> {
  const runtime: Record<string, unknown> = { name: refs.runtime, autoSync: false };
  if (refs.revision) runtime.revision = refs.revision;
  const created = await client.create(Resources.inferenceServices, {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace },
    spec: { model: { name: 'llama-3-2-3b-instruct' }, runtime },
  });
  if (!refs.pinned) return created;
  return client.patch(Resources.inferenceServices, namespace, name, { status: { pinnedRevisionName: refs.pinned } }, { type: 'merge', subresource: 'status' });
}

export async function listRevisionNames(client: ClusterClient, omeNamespace: string): Promise<Map<string, KubeObject>> {
  const page = await client.list(Resources.controllerRevisions, { namespace: omeNamespace });
  return new Map(page.items.map((item) => [item.metadata.name, item]));
}

export interface Interceptors {
  /** After a list of `type` returned, before the sweep sees it. */
  afterList?: (type: ResourceType, options: ListOptions | undefined, page: ListPage) => Promise<void>;
  /** Before a delete reaches the server. */
  beforeDelete?: (name: string) => Promise<void>;
}

/** The real client with hooks between requests, to interleave another writer with a sweep. */
export function interleave(client: ClusterClient, hooks: Interceptors): ClusterClient {
  return {
    get: (type, namespace, name) => client.get(type, namespace, name),
    async list<T extends KubeObject>(type: ResourceType, options?: ListOptions): Promise<ListPage<T>> {
      const page = await client.list<T>(type, options);
      await hooks.afterList?.(type, options, page);
      return page;
    },
    create: (type, object, options) => client.create(type, object, options),
    replace: (type, object, options) => client.replace(type, object, options),
    replaceStatus: (type, object, options) => client.replaceStatus(type, object, options),
    patch: (type, namespace, name, patch, options) => client.patch(type, namespace, name, patch, options),
    async delete(type, namespace, name, options) {
      await hooks.beforeDelete?.(name);
      return client.delete(type, namespace, name, options);
    },
    watch: (type, options, onEvent) => client.watch(type, options, onEvent),
  };
}
