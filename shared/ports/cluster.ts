/**
 * The narrow view of a Kubernetes API server that use-cases depend on. The adapter over
 * `@kubernetes/client-node` implements it for real clusters and the embedded one; unit
 * tests use the in-memory fake. Every failure is a typed error from `shared/domain/errors.ts`
 * (NotFoundError, ConflictError, AlreadyExistsError, ThrottledError, UnavailableError,
 * ExpiredError, InvalidInputError for 400/422).
 */

import type { KubeObject, ResourceType, WatchEventType } from '../domain/model/kube-object';

export type { KubeObject, ObjectMeta, ResourceType, WatchEventType } from '../domain/model/kube-object';

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
}

export interface ListPage<T extends KubeObject = KubeObject> {
  items: T[];
  resourceVersion: string;
  /** Present when more pages follow. */
  continue?: string;
}

export interface WriteOptions {
  /** `All` asks the server to validate without persisting (kubectl `--dry-run=server`). */
  dryRun?: 'All';
  /** Field manager recorded by the server; defaults to the adapter's own name. */
  fieldManager?: string;
}

export type PatchType = 'merge' | 'json';

export interface PatchOptions extends WriteOptions {
  type: PatchType;
  subresource?: 'status';
}

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
}


export interface WatchEvent<T extends KubeObject = KubeObject> {
  type: WatchEventType;
  object: T;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  signal?: AbortSignal;
}

export interface ClusterClient {
  get<T extends KubeObject>(type: ResourceType, namespace: string | undefined, name: string): Promise<T>;
  list<T extends KubeObject>(type: ResourceType, options?: ListOptions): Promise<ListPage<T>>;
  create<T extends KubeObject>(type: ResourceType, object: T, options?: WriteOptions): Promise<T>;
  /** Full update; the object's `metadata.resourceVersion` is the precondition (409 when stale). */
  replace<T extends KubeObject>(type: ResourceType, object: T, options?: WriteOptions): Promise<T>;
  /** Full update of the status subresource, with the same precondition. */
  replaceStatus<T extends KubeObject>(type: ResourceType, object: T, options?: WriteOptions): Promise<T>;
  patch<T extends KubeObject>(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    options: PatchOptions,
  ): Promise<T>;
  delete(type: ResourceType, namespace: string | undefined, name: string, options?: DeleteOptions): Promise<void>;
  /**
   * Streams events until the server closes the watch, `signal` aborts, or an error.
   * Resolves when the stream ends normally; rejects with ExpiredError on 410 Gone.
   */
  watch<T extends KubeObject>(
    type: ResourceType,
    options: WatchOptions,
    onEvent: (event: WatchEvent<T>) => void | Promise<void>,
  ): Promise<void>;
}
