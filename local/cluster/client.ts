/**
 * The ClusterClient port served straight from the embedded server's storage, without
 * HTTP: the in-memory fake for unit tests of other modules. It goes through the same
 * API machinery as HTTP requests (preconditions, status subresource, admission, dry
 * runs, faults) and returns JSON copies, so it behaves like client-node over the wire.
 */
import {
  AlreadyExistsError,
  ConflictError,
  ControlPlaneError,
  ExpiredError,
  InvalidInputError,
  NotFoundError,
  ThrottledError,
  UnavailableError,
} from '../../shared/domain/errors';
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
} from '../../shared/ports/cluster';
import { ApiError, type Status } from './api-errors';
import type { ClusterApi, WriteOptions as ApiWriteOptions } from './api';
import type { KubeObject as StoredObject, ResourceDef } from './registry';
import { asServed } from './watch';

/** Maps a Status to the typed error the port's HTTP adapter raises for it. */
export function toTypedError(status: Status, cause?: unknown): ControlPlaneError {
  const options = { cause: cause ?? status };
  switch (status.code) {
    case 404:
      return new NotFoundError(status.message, options);
    case 409:
      return status.reason === 'AlreadyExists' ? new AlreadyExistsError(status.message, options) : new ConflictError(status.message, options);
    case 410:
      return new ExpiredError(status.message, options);
    case 429:
      return new ThrottledError(status.message, options);
    case 400:
    case 422:
      return new InvalidInputError(status.message, options);
    case 401:
      return new ControlPlaneError(status.message, { retryable: true, ...options });
    default:
      break;
  }
  // A webhook's denial is a verdict on the input; any other 403 is a permission the caller lacks.
  if (status.code === 403 && status.message.startsWith('admission webhook')) return new InvalidInputError(status.message, options);
  if (status.code === 408 || status.code >= 500) return new UnavailableError(status.message, options);
  return new ControlPlaneError(status.message, { retryable: false, ...options });
}

function rethrow(error: unknown): never {
  if (error instanceof ApiError) throw toTypedError(error.status, error);
  throw error;
}

function copy<T>(value: unknown): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function writeOptions(options: WriteOptions | undefined): ApiWriteOptions {
  const result: ApiWriteOptions = { fieldValidation: 'Warn' };
  if (options?.dryRun === 'All') result.dryRun = true;
  if (options?.fieldManager) result.fieldManager = options.fieldManager;
  return result;
}

export class InProcessClusterClient implements ClusterClient {
  constructor(private readonly api: ClusterApi) {}

  private def(type: ResourceType): ResourceDef {
    try {
      return this.api.resolve(type.group, type.version, type.plural);
    } catch (error) {
      return rethrow(error);
    }
  }

  async get<T extends KubeObject>(type: ResourceType, namespace: string | undefined, name: string): Promise<T> {
    try {
      return copy<T>(await this.api.get(this.def(type), namespace, name));
    } catch (error) {
      return rethrow(error);
    }
  }

  async list<T extends KubeObject>(type: ResourceType, options: ListOptions = {}): Promise<ListPage<T>> {
    try {
      const def = this.def(type);
      const result = await this.api.list(def, options);
      // The wire leaves apiVersion/kind off built-in list items; the port's HTTP adapter
      // restores them, so items look like gets on both sides.
      const page: ListPage<T> = { items: copy<T[]>(result.items.map((o) => asServed(def, o))), resourceVersion: result.resourceVersion };
      if (result.continue) page.continue = result.continue;
      return page;
    } catch (error) {
      return rethrow(error);
    }
  }

  async create<T extends KubeObject>(type: ResourceType, object: T, options?: WriteOptions): Promise<T> {
    try {
      const def = this.def(type);
      const result = await this.api.create(def, def.namespaced ? object.metadata.namespace : undefined, copy(object), writeOptions(options));
      return copy<T>(result.object);
    } catch (error) {
      return rethrow(error);
    }
  }

  async replace<T extends KubeObject>(type: ResourceType, object: T, options?: WriteOptions): Promise<T> {
    return this.update(type, object, '', options);
  }

  async replaceStatus<T extends KubeObject>(type: ResourceType, object: T, options?: WriteOptions): Promise<T> {
    return this.update(type, object, 'status', options);
  }

  private async update<T extends KubeObject>(type: ResourceType, object: T, subresource: string, options?: WriteOptions): Promise<T> {
    try {
      const def = this.def(type);
      const namespace = def.namespaced ? object.metadata.namespace : undefined;
      const result = await this.api.update(def, namespace, object.metadata.name, copy(object), subresource, writeOptions(options));
      return copy<T>(result.object);
    } catch (error) {
      return rethrow(error);
    }
  }

  async patch<T extends KubeObject>(type: ResourceType, namespace: string | undefined, name: string, patch: unknown, options: PatchOptions): Promise<T> {
    try {
      const def = this.def(type);
      const result = await this.api.patch(def, namespace, name, options.type, copy(patch), options.subresource ?? '', writeOptions(options));
      return copy<T>(result.object);
    } catch (error) {
      return rethrow(error);
    }
  }

  async delete(type: ResourceType, namespace: string | undefined, name: string, options: DeleteOptions = {}): Promise<void> {
    try {
      const params = options.preconditions ? { preconditions: { ...options.preconditions } } : {};
      await this.api.delete(this.def(type), namespace, name, params);
    } catch (error) {
      rethrow(error);
    }
  }

  watch<T extends KubeObject>(type: ResourceType, options: WatchOptions, onEvent: (event: WatchEvent<T>) => void | Promise<void>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const queue: Array<WatchEvent<T>> = [];
      let ended = false;
      let failure: unknown;
      let pumping = false;
      let stop: () => void = () => undefined;
      const finish = (): void => {
        stop();
        if (failure !== undefined) reject(failure instanceof ApiError ? toTypedError(failure.status, failure) : failure);
        else resolve();
      };
      const pump = async (): Promise<void> => {
        if (pumping) return;
        pumping = true;
        while (queue.length > 0 && failure === undefined) {
          const event = queue.shift() as WatchEvent<T>;
          try {
            await onEvent(event);
          } catch (error) {
            failure = error;
            ended = true;
          }
        }
        pumping = false;
        if (ended) finish();
      };
      const sink = {
        send: (eventType: string, object: StoredObject | Status): void => {
          if (ended) return;
          if (eventType === 'ERROR') {
            failure = new ApiError(object as Status);
            ended = true;
          } else {
            queue.push({ type: eventType as WatchEvent['type'], object: copy<T>(object) });
          }
          setImmediate(() => void pump());
        },
        end: (): void => {
          ended = true;
          setImmediate(() => void pump());
        },
      };
      const params = {
        ...(options.namespace ? { namespace: options.namespace } : {}),
        ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
        ...(options.resourceVersion !== undefined ? { resourceVersion: options.resourceVersion } : {}),
        ...(options.allowWatchBookmarks ? { allowWatchBookmarks: true } : {}),
      };
      let def: ResourceDef;
      try {
        def = this.def(type);
      } catch (error) {
        reject(error);
        return;
      }
      this.api
        .watch(def, params, sink)
        .then((handle) => {
          stop = () => handle.stop();
          if (ended) stop();
          options.signal?.addEventListener('abort', () => {
            ended = true;
            setImmediate(() => void pump());
          });
          if (options.signal?.aborted) sink.end();
        })
        .catch((error: unknown) => {
          reject(error instanceof ApiError ? toTypedError(error.status, error) : error);
        });
    });
  }
}
