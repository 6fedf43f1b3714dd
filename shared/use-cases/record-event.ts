import { hostname } from 'node:os';
import { NotFoundError } from '../domain/errors';
import type { ClusterClient, KubeObject } from '../ports/cluster';
import type { Event, EventType } from '../domain/model/core';
import { Resources } from '../domain/model/resources';

export interface EventSpec {
  type: EventType;
  reason: string;
  message: string;
  /** The component that reports, e.g. `ome-pinning-pin`; shown as the Event's source. */
  reportingController: string;
  /** Which instance of it; defaults to the host name. */
  reportingInstance?: string;
  action?: string;
}

export interface EventRecorder {
  /** Records an Event on the object: a repeat of one recorded before bumps its count. */
  record(involvedObject: KubeObject, event: EventSpec): Promise<Event>;
}

export interface EventRecorderOptions {
  /** How many distinct events to remember for aggregation; default 4096, as client-go. */
  cacheSize?: number;
  now?: () => Date;
}

interface Seen {
  namespace: string;
  name: string;
  count: number;
}

/** Kubernetes writes Event timestamps with second precision. */
function timestamp(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * An Event recorder over the ClusterClient port. Like client-go's recorder it remembers the
 * events it wrote (in this process) and turns a repeat, the same object, type, reason,
 * message and source, into a patch of `count` and `lastTimestamp` instead of a new Event.
 * A remembered Event that has since expired from the server is created afresh.
 */
export function createEventRecorder(client: ClusterClient, options: EventRecorderOptions = {}): EventRecorder {
  const cacheSize = options.cacheSize ?? 4096;
  const now = options.now ?? (() => new Date());
  const seen = new Map<string, Seen>();

  const remember = (key: string, value: Seen): void => {
    seen.delete(key);
    seen.set(key, value);
    if (seen.size > cacheSize) seen.delete(seen.keys().next().value as string);
  };

  return {
    async record(involvedObject: KubeObject, spec: EventSpec): Promise<Event> {
      const meta = involvedObject.metadata;
      // Events about cluster-scoped objects live in `default`, as client-go puts them.
      const namespace = meta.namespace || 'default';
      const key = [namespace, involvedObject.kind, meta.name, meta.uid ?? '', spec.type, spec.reason, spec.message, spec.reportingController].join('\u0000');
      const at = timestamp(now());
      const previous = seen.get(key);
      if (previous) {
        try {
          const patched = await client.patch<Event>(
            Resources.events,
            previous.namespace,
            previous.name,
            { count: previous.count + 1, lastTimestamp: at },
            { type: 'merge' },
          );
          remember(key, { ...previous, count: patched.count ?? previous.count + 1 });
          return patched;
        } catch (error) {
          if (!(error instanceof NotFoundError)) throw error;
          seen.delete(key);
        }
      }
      const event: Event = {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { generateName: `${meta.name}.`, name: '', namespace },
        involvedObject: {
          apiVersion: involvedObject.apiVersion,
          kind: involvedObject.kind,
          name: meta.name,
          namespace: meta.namespace,
          uid: meta.uid,
          resourceVersion: meta.resourceVersion,
        },
        type: spec.type,
        reason: spec.reason,
        message: spec.message,
        source: { component: spec.reportingController },
        reportingComponent: spec.reportingController,
        reportingInstance: spec.reportingInstance ?? hostname(),
        firstTimestamp: at,
        lastTimestamp: at,
        count: 1,
        ...(spec.action ? { action: spec.action } : {}),
      };
      const created = await client.create<Event>(Resources.events, event);
      remember(key, { namespace, name: created.metadata.name, count: created.count ?? 1 });
      return created;
    },
  };
}

const recorders = new WeakMap<ClusterClient, EventRecorder>();

/**
 * Records a core/v1 Event on an object with the client's shared recorder, so repeats from
 * the same process aggregate. Use createEventRecorder for a recorder of one's own.
 */
export function recordEvent(client: ClusterClient, involvedObject: KubeObject, event: EventSpec): Promise<Event> {
  let recorder = recorders.get(client);
  if (!recorder) {
    recorder = createEventRecorder(client);
    recorders.set(client, recorder);
  }
  return recorder.record(involvedObject, event);
}
