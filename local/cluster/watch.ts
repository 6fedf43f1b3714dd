/**
 * Watches: a watch starts from a resourceVersion (replaying the retained history after
 * it), or from "now" with a synthetic ADDED per existing object when none is given or
 * `sendInitialEvents` asks for them (then a BOOKMARK annotated `k8s.io/initial-events-end`
 * marks their end). An object that starts or stops matching the selectors arrives as ADDED
 * or DELETED (the latter with the object as it last matched), as from the real watch
 * cache. A version older than the retained history, or than the resource's serving, gets
 * one ERROR event carrying a 410 Expired Status, then the stream ends.
 */
import { badRequest, expired, fieldError, invalid, type FieldError } from './api-errors';
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
  /** Send the current objects first (`sendInitialEvents=true`). */
  sendInitialEvents?: boolean;
  timeoutSeconds?: number;
}

/** The annotation of the BOOKMARK that ends a watch's initial events. */
export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/** The list options of a watch or a list request, as the server reads them from the query. */
export interface ListOptionsQuery {
  watch: boolean;
  resourceVersion?: string;
  resourceVersionMatch?: string;
  sendInitialEvents?: string;
  continue?: string;
}

/**
 * kube-apiserver's `ValidateListOptions` (WatchList enabled): 422 on ListOptions, e.g.
 * `resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`.
 */
export function validateListOptions(options: ListOptionsQuery): void {
  const errors: FieldError[] = [];
  const match = options.resourceVersionMatch ?? '';
  const forbidden = (field: string, why: string): void => void errors.push(fieldError('FieldValueForbidden', field, undefined, why));
  if (options.watch) {
    if (options.sendInitialEvents !== undefined && match !== 'NotOlderThan') forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
    if (match !== '') {
      if (options.sendInitialEvents === undefined) forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
      if (match !== 'NotOlderThan') errors.push(fieldError('FieldValueNotSupported', 'resourceVersionMatch', match, 'supported values: "NotOlderThan"'));
      if (options.continue) forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided');
    }
  } else {
    if (match !== '') {
      if (!options.resourceVersion) forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided');
      if (options.continue) forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided');
      if (match !== 'Exact' && match !== 'NotOlderThan') errors.push(fieldError('FieldValueNotSupported', 'resourceVersionMatch', match, 'supported values: "Exact", "NotOlderThan", ""'));
      if (match === 'Exact' && options.resourceVersion === '0') forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
    }
    if (options.sendInitialEvents !== undefined) forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list');
  }
  if (errors.length > 0) throw invalid('meta.k8s.io', 'ListOptions', '', errors);
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

    const initialEvents = request.sendInitialEvents === true;
    const since = initialEvents ? undefined : this.parseVersion(request.resourceVersion);
    let replay: StoredEvent[] = [];
    if (since !== undefined) {
      const events = this.store.eventsSince(resource, since);
      if (events === 'expired') {
        // The watch cache names the version it can start from; a watch from that one is served.
        sink.send('ERROR', expired(`too old resource version: ${since} (${this.store.oldestWatchableVersionOf(resource)})`).status);
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
        // The watch cache sends an object that stopped matching as it last matched, at the new version.
        else if (before && event.previous) sink.send('DELETED', asServed(def, { ...event.previous, metadata: { ...event.previous.metadata, resourceVersion: event.object.metadata.resourceVersion } }));
      }
    };

    if (since === undefined) {
      for (const [, object] of this.store.list(resource, request.namespace)) {
        if (matches(object)) sink.send('ADDED', asServed(def, object));
      }
      if (initialEvents && request.allowWatchBookmarks) {
        sink.send('BOOKMARK', { apiVersion: groupVersion(def), kind: def.kind, metadata: { resourceVersion: String(this.store.resourceVersion), annotations: { [INITIAL_EVENTS_END]: 'true' } } });
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
