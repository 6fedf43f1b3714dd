/**
 * Watches: a watch starts from a resourceVersion (replaying the retained history after
 * it), or from "now" with a synthetic ADDED per existing object when none is given. An
 * object that starts or stops matching the selectors arrives as ADDED or DELETED, as
 * from the real watch cache. A version older than the retained history gets one ERROR
 * event carrying a 410 Expired Status, then the stream ends.
 */
import { badRequest, expired } from './api-errors';
import type { Status } from './api-errors';
import { groupVersion, storageKey, type KubeObject, type ResourceDef } from './registry';
import { matchesFields, matchesLabels, type FieldSelector, type LabelSelector } from './selectors';
import type { ObjectStore, StoredEvent } from './store';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchSink {
  send(type: WatchEventType, object: KubeObject | Status): void;
  /** The stream ends: a closed watch, a 410, or the server stopping. */
  end(): void;
}

export interface WatchRequest {
  def: ResourceDef;
  namespace?: string;
  labelSelector: LabelSelector;
  fieldSelector: FieldSelector;
  fieldValue: (object: KubeObject, field: string) => string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  timeoutSeconds?: number;
}

export interface WatchHandle {
  stop(): void;
}

/** Gives an object the apiVersion and kind of the version it is served in. */
export function asServed(def: ResourceDef, object: KubeObject): KubeObject {
  const apiVersion = groupVersion(def);
  if (object.apiVersion === apiVersion && object.kind === def.kind) return object;
  return { ...object, apiVersion, kind: def.kind };
}

export class WatchHub {
  private readonly open = new Set<() => void>();

  constructor(
    private readonly store: ObjectStore,
    private readonly bookmarkIntervalMs: number,
  ) {}

  get openCount(): number {
    return this.open.size;
  }

  /** Ends every open watch cleanly, as when an API server restarts or a load balancer drops streams. */
  closeAll(): void {
    for (const close of [...this.open]) close();
  }

  start(request: WatchRequest, sink: WatchSink): WatchHandle {
    const { def } = request;
    const resource = storageKey(def);
    const matches = (object: KubeObject | undefined): boolean =>
      object !== undefined &&
      (request.namespace === undefined || object.metadata.namespace === request.namespace) &&
      matchesLabels(request.labelSelector, object.metadata.labels) &&
      matchesFields(request.fieldSelector, (field) => request.fieldValue(object, field));

    const since = this.parseVersion(request.resourceVersion);
    let replay: StoredEvent[] = [];
    if (since !== undefined) {
      const events = this.store.eventsSince(resource, since);
      if (events === 'expired') {
        sink.send('ERROR', expired(`too old resource version: ${since} (${this.store.oldestWatchableVersion + 1})`).status);
        sink.end();
        return { stop: () => undefined };
      }
      replay = events;
    }

    const deliver = (event: StoredEvent): void => {
      const now = matches(event.object);
      const before = matches(event.previous);
      if (event.type === 'ADDED' && now) sink.send('ADDED', asServed(def, event.object));
      else if (event.type === 'DELETED' && before) sink.send('DELETED', asServed(def, event.object));
      else if (event.type === 'MODIFIED') {
        if (now && before) sink.send('MODIFIED', asServed(def, event.object));
        else if (now) sink.send('ADDED', asServed(def, event.object));
        else if (before) sink.send('DELETED', asServed(def, event.object));
      }
    };

    if (since === undefined) {
      for (const [, object] of this.store.list(resource, request.namespace)) {
        if (matches(object)) sink.send('ADDED', asServed(def, object));
      }
    } else {
      for (const event of replay) deliver(event);
    }

    const unsubscribe = this.store.subscribe((event) => {
      if (event.resource === resource) deliver(event);
    });
    const timers: NodeJS.Timeout[] = [];
    if (request.allowWatchBookmarks && this.bookmarkIntervalMs > 0) {
      timers.push(
        setInterval(() => {
          sink.send('BOOKMARK', {
            apiVersion: groupVersion(def),
            kind: def.kind,
            metadata: { resourceVersion: String(this.store.resourceVersion) },
          });
        }, this.bookmarkIntervalMs),
      );
    }
    let stopped = false;
    const stop = (): void => {
      if (stopped) return;
      stopped = true;
      unsubscribe();
      for (const timer of timers) clearTimeout(timer);
      this.open.delete(close);
    };
    const close = (): void => {
      stop();
      sink.end();
    };
    if (request.timeoutSeconds !== undefined && request.timeoutSeconds > 0) {
      timers.push(setTimeout(close, request.timeoutSeconds * 1000));
    }
    this.open.add(close);
    return { stop };
  }

  private parseVersion(text: string | undefined): number | undefined {
    if (text === undefined || text === '' || text === '0') return undefined;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 0) {
      throw badRequest(`resourceVersion: Invalid value: "${text}": strconv.ParseUint: parsing "${text}": invalid syntax`);
    }
    return value;
  }
}
