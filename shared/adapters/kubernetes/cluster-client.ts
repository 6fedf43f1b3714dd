import { StringDecoder } from 'node:string_decoder';
import type {
  ClusterClient,
  DeleteOptions,
  KubeObject,
  ListOptions,
  ListPage,
  PatchOptions,
  ResourceType,
  WatchEvent,
  WatchOptions,
  WriteOptions,
} from '../../ports/cluster';
import { InvalidInputError, UnavailableError } from '../../domain/errors';
import { FIELD_MANAGER } from '../../domain/vocabulary';
import { apiVersionOf } from '../../domain/model/resources';
import type { ClusterConnection } from './connection';
import { errorFromStatus, errorFromTransport, type ApiStatus } from './errors';
import { collectionPath, objectPath } from './paths';
import type { RequestPriority, TokenBucket } from './rate-limit';
import { KubeTransport, type Query, type ResponseRecord } from './transport';

export interface ClusterClientOptions {
  /** Default field manager of writes (a call's `fieldManager` wins). */
  fieldManager?: string;
  /** Time limit of each non-watch request; default 30 s. */
  requestTimeoutMs?: number;
  userAgent?: string;
  /** Called when the API server answers 401 (the app context then drops the credential). */
  onUnauthorized?: () => void;
  /** Called after each non-watch request with its outcome (the CLI's `-v` log). */
  onResponse?: (record: ResponseRecord) => void;
  /** The cluster's client-side rate limit (rate-limit.ts), shared by its clients; none when absent. */
  rateLimiter?: TokenBucket;
  /** Milliseconds the current invocation has left, when known: caps waits for the limit and for Retry-After. */
  remainingTimeMs?: () => number | undefined;
  /** 429s retried within one call after their Retry-After (default 3); 0 hands every 429 to the caller. */
  maxThrottledRetries?: number;
  /** The priority of the work a request serves (default user): sweeps yield to user work in the rate limit. */
  priority?: () => RequestPriority;
}

/** A ClusterClient that can also drop its idle connections (at shutdown, in tests). */
export interface ClosableClusterClient extends ClusterClient {
  close(): void;
}

const PATCH_CONTENT_TYPES = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
} as const;

const WATCH_EVENT_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK']);

interface RawList {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: KubeObject[];
}

/** Lists leave out each item's apiVersion and kind; put them back so items look like gets. */
function withTypeMeta<T extends KubeObject>(type: ResourceType, object: T): T {
  if (object.apiVersion && object.kind) return object;
  return { ...object, apiVersion: object.apiVersion || apiVersionOf(type), kind: object.kind || type.kind };
}

function requireMetadata(type: ResourceType, object: KubeObject): void {
  if (!object || typeof object !== 'object' || !object.metadata) {
    throw new InvalidInputError(`${type.kind}: the object has no metadata`);
  }
}

/**
 * The ClusterClient port over one API server, for real clusters and the embedded one.
 * Every failure is a typed error of shared/domain/errors.ts; see errors.ts for the mapping.
 */
export function createClusterClient(connection: ClusterConnection, options: ClusterClientOptions = {}): ClosableClusterClient {
  const fieldManager = options.fieldManager ?? FIELD_MANAGER;
  const transport = new KubeTransport(connection, {
    requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
    userAgent: options.userAgent ?? FIELD_MANAGER,
    ...(options.onUnauthorized === undefined ? {} : { onUnauthorized: options.onUnauthorized }),
    ...(options.onResponse === undefined ? {} : { onResponse: options.onResponse }),
    ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
    ...(options.remainingTimeMs === undefined ? {} : { remainingTimeMs: options.remainingTimeMs }),
    ...(options.maxThrottledRetries === undefined ? {} : { maxThrottledRetries: options.maxThrottledRetries }),
    ...(options.priority === undefined ? {} : { priority: options.priority }),
  });

  const writeQuery = (write: WriteOptions | undefined): Query => ({
    dryRun: write?.dryRun,
    fieldManager: write?.fieldManager ?? fieldManager,
  });

  async function put<T extends KubeObject>(type: ResourceType, object: T, write: WriteOptions | undefined, subresource?: string): Promise<T> {
    requireMetadata(type, object);
    const path = objectPath(type, object.metadata.namespace, object.metadata.name, subresource);
    const body = withTypeMeta(type, object);
    return transport.request<T>({ method: 'PUT', path, query: writeQuery(write), body });
  }

  return {
    async get<T extends KubeObject>(type: ResourceType, namespace: string | undefined, name: string): Promise<T> {
      return transport.request<T>({ method: 'GET', path: objectPath(type, namespace, name) });
    },

    async list<T extends KubeObject>(type: ResourceType, list: ListOptions = {}): Promise<ListPage<T>> {
      const raw = await transport.request<RawList>({
        method: 'GET',
        path: collectionPath(type, list.namespace),
        query: { labelSelector: list.labelSelector, fieldSelector: list.fieldSelector, limit: list.limit, continue: list.continue },
      });
      const page: ListPage<T> = {
        items: (raw.items ?? []).map((item) => withTypeMeta(type, item as T)),
        resourceVersion: raw.metadata?.resourceVersion ?? '',
      };
      if (raw.metadata?.continue) page.continue = raw.metadata.continue;
      return page;
    },

    async create<T extends KubeObject>(type: ResourceType, object: T, write?: WriteOptions): Promise<T> {
      requireMetadata(type, object);
      const namespace = object.metadata.namespace;
      if (type.namespaced && !namespace) throw new InvalidInputError(`${type.kind} ${object.metadata.name ?? ''}: a namespace is required`);
      return transport.request<T>({
        method: 'POST',
        path: collectionPath(type, namespace),
        query: writeQuery(write),
        body: withTypeMeta(type, object),
      });
    },

    replace: <T extends KubeObject>(type: ResourceType, object: T, write?: WriteOptions) => put(type, object, write),

    replaceStatus: <T extends KubeObject>(type: ResourceType, object: T, write?: WriteOptions) => put(type, object, write, 'status'),

    async patch<T extends KubeObject>(
      type: ResourceType,
      namespace: string | undefined,
      name: string,
      patch: unknown,
      patchOptions: PatchOptions,
    ): Promise<T> {
      const contentType = PATCH_CONTENT_TYPES[patchOptions.type];
      if (!contentType) throw new InvalidInputError(`unsupported patch type ${String(patchOptions.type)}`);
      return transport.request<T>({
        method: 'PATCH',
        path: objectPath(type, namespace, name, patchOptions.subresource),
        query: writeQuery(patchOptions),
        body: patch,
        contentType,
      });
    },

    async delete(type: ResourceType, namespace: string | undefined, name: string, del: DeleteOptions = {}): Promise<void> {
      const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' };
      if (del.preconditions) body.preconditions = del.preconditions;
      await transport.request<unknown>({ method: 'DELETE', path: objectPath(type, namespace, name), body });
    },

    async watch<T extends KubeObject>(
      type: ResourceType,
      watch: WatchOptions,
      onEvent: (event: WatchEvent<T>) => void | Promise<void>,
    ): Promise<void> {
      const request = {
        method: 'GET' as const,
        path: collectionPath(type, watch.namespace),
        query: {
          watch: 'true',
          resourceVersion: watch.resourceVersion,
          allowWatchBookmarks: watch.allowWatchBookmarks ? 'true' : undefined,
          labelSelector: watch.labelSelector,
        },
      };
      if (watch.signal?.aborted) return;
      let response;
      try {
        response = await transport.stream(request, watch.signal);
      } catch (error) {
        if (watch.signal?.aborted) return;
        throw error;
      }
      const lines = readLines(response);
      try {
        for (;;) {
          let next: IteratorResult<string>;
          try {
            next = await lines.next();
          } catch (error) {
            if (watch.signal?.aborted) return;
            throw errorFromTransport(error, request);
          }
          if (next.done) return;
          // The handler's own errors reach the caller unchanged.
          await dispatch(type, next.value, request, onEvent);
        }
      } finally {
        response.destroy();
      }
    },

    close: () => transport.close(),
  };
}

async function dispatch<T extends KubeObject>(
  type: ResourceType,
  line: string,
  request: { method: string; path: string },
  onEvent: (event: WatchEvent<T>) => void | Promise<void>,
): Promise<void> {
  let event: { type?: string; object?: unknown };
  try {
    event = JSON.parse(line) as { type?: string; object?: unknown };
  } catch (error) {
    throw new UnavailableError(`${request.method} ${request.path}: malformed watch event`, { cause: error });
  }
  if (event.type === 'ERROR') {
    // Mid-stream failures arrive as an event carrying a Status; 410 Expired means relist.
    const status = (event.object ?? {}) as ApiStatus;
    throw errorFromStatus(status.code ?? 500, status, '', request);
  }
  if (!event.type || !WATCH_EVENT_TYPES.has(event.type) || typeof event.object !== 'object' || event.object === null) {
    throw new UnavailableError(`${request.method} ${request.path}: unexpected watch event ${String(event.type)}`);
  }
  await onEvent({ type: event.type as WatchEvent['type'], object: withTypeMeta(type, event.object as T) });
}

/** Splits a byte stream into lines, pulling the next chunk only when the consumer is ready. */
async function* readLines(stream: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of stream) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (line) yield line;
      newline = pending.indexOf('\n');
    }
  }
  const rest = (pending + decoder.end()).trim();
  if (rest) yield rest;
}

