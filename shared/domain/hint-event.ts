/**
 * The event contract between the watch forwarder and the functions.
 *
 * A hint event says "this object changed; look again". It carries the object's identity
 * and the few facts that EventBridge rules route on, never the object itself: whole
 * objects would push entries towards the 256 KB limit, be stale by the time a function
 * runs, and could leak secrets (env vars, model credentials) into the bus, its archives
 * and dead-letter queues. Every handler re-reads the object before it acts.
 *
 * Pure module: no I/O, no clock unless the caller leaves `observedAt` out.
 */
import { InvalidInputError } from './errors.js';
import type { KubeObject, WatchEventType } from './model/kube-object.js';
import { Annotation, ConditionType, ROLLOUT_PAUSED_ANNOTATION } from './vocabulary.js';

/** `source` of every hint event. Rules filter on it first. */
export const HINT_EVENT_SOURCE = 'ome.pinning';

export const HintDetailType = {
  objectChanged: 'Kubernetes Object Changed',
} as const;
export type HintDetailTypeName = (typeof HintDetailType)[keyof typeof HintDetailType];

/** `relisted`: seen in a full list after a restart or a `410 Gone`, not in a watch stream. */
export type ChangeType = 'added' | 'modified' | 'deleted' | 'relisted';

/** What the forwarder saw: a watch event type, or `RELISTED` for an item of a relist. */
export type ObservedChange = Exclude<WatchEventType, 'BOOKMARK'> | 'RELISTED';

/**
 * What moved since the previous sight of the object; rules route on these flags, so that
 * a hint reaches only the functions that act on what moved (docs/events.md, "Routing").
 */
export interface ChangedFields {
  /** Anything outside `metadata` and `status` (for ControllerRevisions: `data`, `revision`). */
  spec: boolean;
  /** `ome.io/runtime-sync` holds a value it did not hold before. */
  runtimeSync: boolean;
  /** `ome.io/rollout-repin` holds a value it did not hold before (a new repin request). */
  rolloutRepin: boolean;
  /** `ome.io/rollout-promote` holds a value it did not hold before (a new promote request). */
  rolloutPromote: boolean;
  labels?: boolean;
  /**
   * Metadata the pin function reads moved: labels, annotations other than the requests
   * above and the plane's own marks, owners, the start of a deletion. Absent on hints of
   * older forwarders.
   */
  metadata?: boolean;
  /**
   * An InferenceService's rollout inputs moved: `ome.io/rollout-rollback` holds a new value,
   * `ome.io/rollout-paused` changed, or, on one that has a rollout (`spec.rollout`, a run or
   * a plan condition), its spec moved outside `spec.runtime` (the plan and the component
   * shapes it runs on), or it was seen for the first time.
   */
  rollout?: boolean;
  /** A rendered Deployment's readiness moved, or it was seen for the first time. */
  ready?: boolean;
}

export interface HintDetail {
  clusterId: string;
  apiVersion: string;
  kind: string;
  /** Absent for cluster-scoped kinds (ClusterServingRuntime). */
  namespace?: string;
  name: string;
  /** Tells a recreated object from the old one of the same name: handlers drop hints whose uid is gone. */
  uid: string;
  resourceVersion: string;
  generation?: number;
  change: ChangeType;
  changed: ChangedFields;
  /** ISO-8601 time the forwarder saw the change. */
  observedAt: string;
  /**
   * Set only on a hint a long piece of work published for itself (a drift fan-out that ran
   * out of time): the version of the continuation it resumes (docs/events.md).
   */
  continuation?: number;
}

/** One event as the publisher sends it (PutEvents entry before serialisation). */
export interface HintEvent {
  source: typeof HINT_EVENT_SOURCE;
  detailType: HintDetailTypeName;
  detail: HintDetail;
}

/** The envelope EventBridge delivers to a target (and the local bus imitates). */
export interface EventBridgeEnvelope<TDetail = unknown> {
  version: string;
  id: string;
  'detail-type': string;
  source: string;
  account: string;
  time: string;
  region: string;
  resources: string[];
  detail: TDetail;
}

const CHANGE_OF: Record<ObservedChange, ChangeType> = {
  ADDED: 'added',
  MODIFIED: 'modified',
  DELETED: 'deleted',
  RELISTED: 'relisted',
};

/** Top-level fields that are not "the spec": bookkeeping and what controllers write back. */
const NON_SPEC_FIELDS = new Set(['apiVersion', 'kind', 'metadata', 'status']);

/** Request annotations: a hint is worth sending when one appears or takes a new value. */
const REQUEST_ANNOTATIONS = {
  runtimeSync: Annotation.runtimeSync,
  rolloutRepin: Annotation.rolloutRepin,
  rolloutPromote: Annotation.rolloutPromote,
} as const;

/**
 * Annotations our own functions write or remove as a side effect of doing the work.
 * A change that touches only these (plus status and bookkeeping) is our echo, not new work:
 * forwarding it would feed each write back as another invocation.
 */
const ECHO_ANNOTATIONS: ReadonlySet<string> = new Set([
  Annotation.gcEligibleSince,
  Annotation.rolloutRepin,
  Annotation.rolloutPromote,
]);

/**
 * Requests the rollout functions act on, routed by their own flags (`rolloutRepin`,
 * `rolloutPromote`, `rollout`) rather than by `metadata`.
 */
const ROLLOUT_REQUEST_ANNOTATIONS: ReadonlySet<string> = new Set([
  Annotation.rolloutRepin,
  Annotation.rolloutPromote,
  Annotation.rolloutRollback,
  ROLLOUT_PAUSED_ANNOTATION,
]);

/** Metadata fields the API server or our writes change without the object meaning anything new. */
const BOOKKEEPING_METADATA = new Set(['resourceVersion', 'managedFields', 'generation']);

/**
 * Builds the hint for one observed change.
 *
 * Without `previous` (first sight, relist after a restart, or a modification the
 * forwarder had no earlier copy of) the spec and labels count as changed and each
 * request annotation counts as changed when it is present, so nothing a handler might
 * have to act on is lost; with `previous` each flag says what actually moved.
 * A delete reports no changed field: the route is by `change`.
 */
export function toHintEvent(
  clusterId: string,
  watchType: ObservedChange,
  object: KubeObject,
  previous?: KubeObject,
  options: { observedAt?: string; readinessMoved?: boolean } = {},
): HintEvent {
  const { metadata } = object;
  if (!metadata?.name || !metadata.uid || !metadata.resourceVersion) {
    throw new InvalidInputError(
      `cannot build a hint for ${object.kind ?? 'object'} without metadata.name, uid and resourceVersion`,
    );
  }
  const detail: HintDetail = {
    clusterId,
    apiVersion: object.apiVersion,
    kind: object.kind,
    ...(metadata.namespace ? { namespace: metadata.namespace } : {}),
    name: metadata.name,
    uid: metadata.uid,
    resourceVersion: metadata.resourceVersion,
    ...(metadata.generation === undefined ? {} : { generation: metadata.generation }),
    change: CHANGE_OF[watchType],
    changed: computeChangedFields(watchType, object, previous, options.readinessMoved),
    observedAt: options.observedAt ?? new Date().toISOString(),
  };
  return { source: HINT_EVENT_SOURCE, detailType: HintDetailType.objectChanged, detail };
}

/**
 * The flags of `changed` for one observation; see `toHintEvent`. `readinessMoved` is the
 * forwarder's own knowledge (it remembers a Deployment's readiness, which a reconstructed
 * `previous` lacks); without it a Deployment is `ready` only when seen for the first time.
 */
export function computeChangedFields(
  watchType: ObservedChange,
  object: KubeObject,
  previous?: KubeObject,
  readinessMoved = false,
): ChangedFields {
  if (watchType === 'DELETED') {
    return { spec: false, runtimeSync: false, rolloutRepin: false, rolloutPromote: false, labels: false, metadata: false, rollout: false, ready: false };
  }
  const known = previous !== undefined && previous.metadata.uid === object.metadata.uid ? previous : undefined;
  const annotations = object.metadata.annotations ?? {};
  const before = known?.metadata.annotations ?? {};
  const requestChanged = (key: string): boolean => annotations[key] !== undefined && annotations[key] !== before[key];
  const isvc = object.kind === 'InferenceService';
  const pausedMoved = known === undefined ? annotations[ROLLOUT_PAUSED_ANNOTATION] !== undefined : annotations[ROLLOUT_PAUSED_ANNOTATION] !== before[ROLLOUT_PAUSED_ANNOTATION];
  const rolloutSpecMoved = hasRollout(object) && (known === undefined || !deepEqual(specBesideRuntime(object), specBesideRuntime(known)));
  return {
    spec: known === undefined || !deepEqual(specOf(object), specOf(known)),
    runtimeSync: requestChanged(REQUEST_ANNOTATIONS.runtimeSync),
    rolloutRepin: requestChanged(REQUEST_ANNOTATIONS.rolloutRepin),
    rolloutPromote: requestChanged(REQUEST_ANNOTATIONS.rolloutPromote),
    labels: known === undefined || !deepEqual(object.metadata.labels ?? {}, known.metadata.labels ?? {}),
    metadata: known === undefined || !deepEqual(metadataView(object), metadataView(known)),
    rollout: isvc && (requestChanged(Annotation.rolloutRollback) || pausedMoved || rolloutSpecMoved),
    ready: object.kind === 'Deployment' && (known === undefined || readinessMoved),
  };
}

/** Whether an InferenceService has a rollout to keep: a `spec.rollout`, a run, or a plan condition. */
function hasRollout(object: KubeObject): boolean {
  const spec = (object as { spec?: { rollout?: unknown } }).spec;
  const status = (object as { status?: { rollout?: unknown; conditions?: unknown } }).status;
  const conditions = Array.isArray(status?.conditions) ? (status.conditions as Array<{ type?: unknown }>) : [];
  return spec?.rollout !== undefined || status?.rollout !== undefined || conditions.some((condition) => condition.type === ConditionType.rolloutPlanReady);
}

/** An InferenceService's spec without `spec.runtime`: what its rollout plan and component shapes come from. */
export function specBesideRuntime(object: KubeObject): unknown {
  const spec = (object as { spec?: unknown }).spec;
  if (!isRecord(spec)) return spec;
  return Object.fromEntries(Object.entries(spec).filter(([key]) => key !== 'runtime'));
}

/** Why a change is forwarded or dropped; `undefined` from a check means "no opinion, ask the next". */
export type ForwardingDecision = { forward: true; reason: string } | { forward: false; reason: string };

type ForwardingCheck = (
  watchType: ObservedChange | 'BOOKMARK',
  object: KubeObject,
  previous: KubeObject | undefined,
) => ForwardingDecision | undefined;

/** Ordered checks; the first with an opinion decides. */
const FORWARDING_CHECKS: ReadonlyArray<{ name: string; check: ForwardingCheck }> = [
  {
    name: 'bookmark',
    check: (type) => (type === 'BOOKMARK' ? { forward: false, reason: 'bookmarks only move the checkpoint' } : undefined),
  },
  {
    name: 'deleted',
    check: (type) => (type === 'DELETED' ? { forward: true, reason: 'deletes always matter (GC, drift)' } : undefined),
  },
  {
    name: 'first-sight',
    check: (_type, _object, previous) =>
      previous === undefined ? { forward: true, reason: 'no earlier copy to compare with' } : undefined,
  },
  {
    name: 'recreated',
    check: (_type, object, previous) =>
      previous !== undefined && previous.metadata.uid !== object.metadata.uid
        ? { forward: true, reason: 'a new object under the same name' }
        : undefined,
  },
  {
    name: 'same-version',
    check: (_type, object, previous) =>
      previous?.metadata.resourceVersion === object.metadata.resourceVersion
        ? { forward: false, reason: 'resourceVersion unchanged since last forwarded' }
        : undefined,
  },
  {
    name: 'request-annotation',
    check: (type, object, previous) => {
      const changed = computeChangedFields(type as ObservedChange, object, previous);
      return changed.runtimeSync || changed.rolloutRepin || changed.rolloutPromote
        ? { forward: true, reason: 'a request annotation has a new value' }
        : undefined;
    },
  },
  {
    name: 'echo',
    check: (_type, object, previous) =>
      previous !== undefined && deepEqual(meaningfulView(object), meaningfulView(previous))
        ? { forward: false, reason: 'only status, bookkeeping or our own annotations changed' }
        : undefined,
  },
];

/**
 * Decides whether an observed change is worth a hint, with the reason (for debug logs).
 *
 * Dropped: bookmarks, a relist item whose resourceVersion equals the last one forwarded,
 * and modifications that touch only `status`, `managedFields`, `resourceVersion`,
 * `generation`, or annotations our functions write as a side effect (the GC mark, the
 * removal of consumed repin/promote requests). Those are our own writes coming back;
 * forwarding them would be a feedback loop. Forwarded: deletes, first sights, recreated
 * objects, new request annotation values, and any other change (spec, labels, other
 * metadata) — ControllerRevisions included, whose content lives outside `spec`.
 */
export function decideForwarding(
  watchType: ObservedChange | 'BOOKMARK',
  object: KubeObject,
  previous?: KubeObject,
): ForwardingDecision {
  for (const { check } of FORWARDING_CHECKS) {
    const decision = check(watchType, object, previous);
    if (decision) return decision;
  }
  return { forward: true, reason: 'the object changed' };
}

/** `decideForwarding(...).forward`. */
export function isWorthForwarding(
  watchType: ObservedChange | 'BOOKMARK',
  object: KubeObject,
  previous?: KubeObject,
): boolean {
  return decideForwarding(watchType, object, previous).forward;
}

/**
 * A stable key for one hint, for idempotency and duplicate suppression:
 * the same change of the same object always yields the same key.
 */
export function hintEventKey(detail: HintDetail): string {
  return [detail.clusterId, detail.uid, detail.resourceVersion, detail.change].join('/');
}

const CHANGE_TYPES: ReadonlySet<string> = new Set(['added', 'modified', 'deleted', 'relisted']);

/**
 * Reads the hint from a delivered event (EventBridge envelope or bare detail), checking
 * the fields handlers rely on. Throws InvalidInputError: a malformed hint will never
 * become valid, so a handler acknowledges it instead of retrying.
 */
export function readHintDetail(event: unknown): HintDetail {
  const candidate = isRecord(event) && isRecord(event.detail) ? event.detail : event;
  if (!isRecord(candidate)) throw new InvalidInputError('hint event has no detail object');
  const missing = ['clusterId', 'apiVersion', 'kind', 'name', 'uid', 'resourceVersion', 'observedAt'].filter(
    (field) => typeof candidate[field] !== 'string' || candidate[field] === '',
  );
  if (missing.length > 0) throw new InvalidInputError(`hint event detail lacks ${missing.join(', ')}`);
  if (typeof candidate.change !== 'string' || !CHANGE_TYPES.has(candidate.change)) {
    throw new InvalidInputError(`hint event detail has an unknown change type ${JSON.stringify(candidate.change)}`);
  }
  if (!isRecord(candidate.changed)) throw new InvalidInputError('hint event detail lacks changed flags');
  return candidate as unknown as HintDetail;
}

function specOf(object: KubeObject): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).filter(([key]) => !NON_SPEC_FIELDS.has(key)));
}

/** The object minus everything whose change alone is not work (see `decideForwarding`). */
function meaningfulView(object: KubeObject): unknown {
  const metadata = Object.fromEntries(
    Object.entries(object.metadata).filter(([key]) => !BOOKKEEPING_METADATA.has(key)),
  );
  const annotations = Object.fromEntries(
    Object.entries(object.metadata.annotations ?? {}).filter(([key]) => !ECHO_ANNOTATIONS.has(key)),
  );
  return { ...specOf(object), metadata: { ...metadata, annotations } };
}

/** Metadata as `changed.metadata` compares it: no bookkeeping, no runtime-sync or rollout request, no mark of ours. */
function metadataView(object: KubeObject): unknown {
  const metadata = Object.fromEntries(Object.entries(object.metadata).filter(([key]) => !BOOKKEEPING_METADATA.has(key)));
  const annotations = Object.fromEntries(
    Object.entries(object.metadata.annotations ?? {}).filter(
      ([key]) => !ECHO_ANNOTATIONS.has(key) && !ROLLOUT_REQUEST_ANNOTATIONS.has(key) && key !== REQUEST_ANNOTATIONS.runtimeSync,
    ),
  );
  return { ...metadata, annotations };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Structural equality of JSON values; key order does not matter. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (!isRecord(a) || !isRecord(b)) return false;
  const keysA = Object.keys(a).filter((key) => a[key] !== undefined);
  const keysB = Object.keys(b).filter((key) => b[key] !== undefined);
  return keysA.length === keysB.length && keysA.every((key) => deepEqual(a[key], b[key]));
}
