/**
 * Runtime evidence for one InferenceService: the live runtime as defined now, the spec it is
 * meant to run (its pinned revision, or the live one), and how the pin, sync token and
 * RuntimeDrifted condition stand. Hashes and names come from `shared/domain/runtime`.
 */
import { NotFoundError } from '../../shared/domain/errors';
import type { ClusterClient, KubeObject } from '../../shared/ports/cluster';
import { MAX_INHERITANCE_DEPTH, resolveLiveRuntime, type RuntimeKey, type RuntimeRecord } from '../../shared/domain/runtime/inheritance';
import {
  computeRevisionHash,
  computeRevisionName,
  normalizeRuntimeKind,
  type RevisionSource,
} from '../../shared/domain/runtime/revision';
import { Annotation, ConditionType, CREATED_BY_OME, DriftReason, Label, RuntimeKind } from '../../shared/domain/vocabulary';
import { annotationOf, findCondition, type InferenceServiceObject } from '../isvc';
import { ClusterServingRuntimes, ControllerRevisions, ServingRuntimes } from '../resources';

export type ViewState = 'Available' | 'Unavailable';
export type ViewReason = 'NotConfigured' | 'NotFound' | 'Disabled' | 'MalformedPayload' | 'Unreadable';

export interface RuntimeView {
  state: ViewState;
  reason?: ViewReason;
  /** `CSR/<name>` or `SR/<namespace>/<name>`. */
  runtime?: string;
  revision?: string;
  hash?: { full: string; short: string };
  /** The object read, for identities in previews. */
  source?: KubeObject;
  /** The inheritance chain did not resolve. */
  inheritanceFailed?: boolean;
}

export type PinMode = 'AutoSync' | 'ManagedPin' | 'ExplicitPin' | 'InvalidPin';
export type PinState =
  | 'NotApplicable'
  | 'AwaitingPin'
  | 'Resolved'
  | 'DesiredReportedMismatch'
  | 'RevisionMissing'
  | 'RevisionInvalid'
  | 'Unavailable'
  | 'InvalidIntent';
export type SyncState = 'Absent' | 'StatusOnly' | 'Acknowledged' | 'Pending';
export type StatusFreshness = 'Unobserved' | 'Current' | 'Stale' | 'Invalid';
export type LiveRelation = 'Equal' | 'Different' | 'Ambiguous' | 'Unknown';

export interface RuntimeEvidence {
  source?: RevisionSource;
  live: RuntimeView;
  active: RuntimeView;
  pinMode: PinMode;
  pinState: PinState;
  sync: SyncState;
  status: StatusFreshness;
  drift: string;
  liveRelation: LiveRelation;
  issues: string[];
}

/** Reads what `effective`, `history` and `sync` need from the cluster. */
export type RuntimeReader = Pick<ClusterClient, 'get'>;

export function runtimeLabel(source: RevisionSource): string {
  return source.kind === RuntimeKind.namespaced ? `SR/${source.namespace}/${source.runtimeName}` : `CSR/${source.runtimeName}`;
}

export function runtimeFullName(source: RevisionSource): string {
  return source.kind === RuntimeKind.namespaced
    ? `${RuntimeKind.namespaced}/${source.namespace}/${source.runtimeName}`
    : `${RuntimeKind.cluster}/${source.runtimeName}`;
}

export function sourceOf(isvc: InferenceServiceObject): RevisionSource | undefined {
  const ref = isvc.spec?.runtime;
  if (!ref?.name) return undefined;
  return { kind: normalizeRuntimeKind(ref.kind), namespace: isvc.metadata.namespace ?? '', runtimeName: ref.name };
}

export function pinModeOf(isvc: InferenceServiceObject): PinMode {
  const ref = isvc.spec?.runtime;
  if (!ref?.name || ref.autoSync !== false) return 'AutoSync';
  if (ref.kind !== undefined && ref.kind !== RuntimeKind.cluster && ref.kind !== RuntimeKind.namespaced) return 'InvalidPin';
  return ref.revision ? 'ExplicitPin' : 'ManagedPin';
}

export function syncStateOf(isvc: InferenceServiceObject): SyncState {
  const requested = annotationOf(isvc, Annotation.runtimeSync) ?? '';
  const recorded = isvc.status?.lastRuntimeSyncToken ?? '';
  if (requested === '') return recorded === '' ? 'Absent' : 'StatusOnly';
  return requested === recorded ? 'Acknowledged' : 'Pending';
}

function statusFreshnessOf(isvc: InferenceServiceObject): StatusFreshness {
  const observed = isvc.status?.observedGeneration;
  const generation = isvc.metadata.generation ?? 0;
  if (typeof observed !== 'number') return 'Unobserved';
  if (observed === generation) return 'Current';
  return observed < generation ? 'Stale' : 'Invalid';
}

/** DRIFT as `<state>/<cause>`: NotReported, ReportedTrue/RevisionMismatch, Malformed … */
function driftOf(isvc: InferenceServiceObject): string {
  const { condition, duplicate } = findCondition(isvc, ConditionType.runtimeDrifted);
  if (duplicate) return 'Malformed';
  if (!condition) return 'NotReported';
  const state = { True: 'ReportedTrue', False: 'ReportedFalse', Unknown: 'ReportedUnknown' }[condition.status];
  if (!state) return 'Malformed';
  const known = Object.values(DriftReason) as string[];
  return `${state}/${known.includes(condition.reason ?? '') ? condition.reason : 'Other'}`;
}

/** `CSR/<name>` or `SR/<namespace>/<name>` for a runtime record. */
function recordLabel(record: RuntimeRecord): string {
  return record.kind === RuntimeKind.namespaced ? `SR/${record.namespace ?? ''}/${record.name}` : `CSR/${record.name}`;
}

function keyOf(key: RuntimeKey): string {
  return `${key.kind}/${key.kind === RuntimeKind.namespaced ? (key.namespace ?? '') : ''}/${key.name}`;
}

/**
 * Reads every runtime the inheritance rules may look at, so the shared resolver can walk
 * the chain synchronously: the named runtime (cluster scope, then the namespace, for a
 * ClusterServingRuntime) and each parent in turn, at most the chain limit deep.
 */
interface PrefetchedChain {
  records: Map<string, RuntimeRecord | null>;
  objects: Map<string, KubeObject>;
}

async function prefetchChain(reader: RuntimeReader, source: RevisionSource): Promise<PrefetchedChain> {
  const cache = new Map<string, RuntimeRecord | null>();
  const objects = new Map<string, KubeObject>();
  const fetch = async (key: RuntimeKey): Promise<RuntimeRecord | null> => {
    const id = keyOf(key);
    if (cache.has(id)) return cache.get(id) ?? null;
    let record: RuntimeRecord | null = null;
    try {
      const object =
        key.kind === RuntimeKind.namespaced
          ? await reader.get<KubeObject & { spec?: unknown }>(ServingRuntimes, key.namespace, key.name)
          : await reader.get<KubeObject & { spec?: unknown }>(ClusterServingRuntimes, undefined, key.name);
      objects.set(id, object);
      record = { kind: key.kind, name: key.name, ...(key.namespace ? { namespace: key.namespace } : {}), annotations: object.metadata.annotations, spec: object.spec ?? {} };
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
    cache.set(id, record);
    return record;
  };
  const namespaced = { kind: RuntimeKind.namespaced, name: source.runtimeName, namespace: source.namespace } as const;
  let current =
    source.kind === RuntimeKind.namespaced
      ? await fetch(namespaced)
      : ((await fetch({ kind: RuntimeKind.cluster, name: source.runtimeName })) ?? (await fetch(namespaced)));
  for (let depth = 0; current && depth <= MAX_INHERITANCE_DEPTH; depth += 1) {
    const parent = current.annotations?.[Annotation.inheritFrom];
    if (!parent) break;
    let next: RuntimeRecord | null = null;
    if (current.kind === RuntimeKind.namespaced) next = await fetch({ kind: RuntimeKind.namespaced, name: parent, namespace: current.namespace ?? '' });
    next ??= await fetch({ kind: RuntimeKind.cluster, name: parent });
    current = next;
  }
  return { records: cache, objects };
}

/** The live runtime merged with the runtimes it inherits from, hashed as OME hashes it. */
async function readLiveView(reader: RuntimeReader, source: RevisionSource): Promise<RuntimeView> {
  let chain: PrefetchedChain;
  try {
    chain = await prefetchChain(reader, source);
  } catch {
    return { state: 'Unavailable', reason: 'Unreadable', runtime: runtimeLabel(source) };
  }
  const resolution = resolveLiveRuntime(
    { kind: source.kind, name: source.runtimeName, namespace: source.namespace },
    (key) => chain.records.get(keyOf(key)) ?? undefined,
  );
  if (resolution.status === 'not-found') return { state: 'Unavailable', reason: 'NotFound', runtime: runtimeLabel(source) };
  if (resolution.status === 'error') return { state: 'Unavailable', reason: 'Unreadable', runtime: runtimeLabel(source), inheritanceFailed: true };
  const runtime = recordLabel(resolution.runtime);
  const object = chain.objects.get(keyOf(resolution.runtime));
  const base = { runtime, ...(object ? { source: object } : {}) };
  if ((resolution.spec as { disabled?: unknown }).disabled === true) return { state: 'Unavailable', reason: 'Disabled', ...base };
  try {
    return { state: 'Available', hash: computeRevisionHash(resolution.spec), ...base };
  } catch {
    return { state: 'Unavailable', reason: 'MalformedPayload', ...base };
  }
}

export interface RevisionCheck {
  hash?: { full: string; short: string };
  issues: string[];
}

/** Checks a revision against what OME writes: created-by, hash label, name, ordinal, source. */
export function checkRevision(revision: KubeObject & { data?: unknown; revision?: unknown }, source: RevisionSource | undefined): RevisionCheck {
  const name = revision.metadata.name;
  const issues: string[] = [];
  if (annotationOf(revision, Annotation.createdBy) !== CREATED_BY_OME) issues.push(`RevisionNotOMEManaged(${name})`);
  let hash: RevisionCheck['hash'];
  try {
    hash = computeRevisionHash(revision.data);
  } catch {
    issues.push(`RevisionPayloadMalformed(${name})`);
  }
  const labels = revision.metadata.labels ?? {};
  if (hash && labels[Label.revisionHash] !== hash.short) issues.push(`RevisionHashMismatch(${name})`);
  if (revision.revision !== 1) issues.push(`RevisionOrdinalUnexpected(${name})`);
  if (source) {
    const sameSource =
      labels[Label.runtimeOf] === source.runtimeName &&
      (labels[Label.runtimeOfKind] ?? RuntimeKind.cluster) === source.kind &&
      (source.kind === RuntimeKind.cluster || labels[Label.runtimeOfNamespace] === source.namespace);
    if (!sameSource) issues.push(`RevisionSourceMismatch(${name})`);
    else if (hash && safeRevisionName(source, hash.short) !== name) issues.push(`RevisionNameMismatch(${name})`);
  }
  return { ...(hash ? { hash } : {}), issues };
}

function safeRevisionName(source: RevisionSource, short: string): string | undefined {
  try {
    return computeRevisionName({ ...source, hash: short });
  } catch {
    return undefined;
  }
}

async function readRevisionView(
  reader: RuntimeReader,
  omeNamespace: string,
  name: string,
  source: RevisionSource,
): Promise<{ view: RuntimeView; issues: string[] }> {
  const runtime = runtimeLabel(source);
  let revision: KubeObject & { data?: unknown; revision?: unknown };
  try {
    revision = await reader.get(ControllerRevisions, omeNamespace, name);
  } catch (error) {
    const missing = error instanceof NotFoundError;
    return {
      view: { state: 'Unavailable', reason: missing ? 'NotFound' : 'Unreadable', runtime, revision: name },
      issues: [missing ? `RevisionNotFound(${name})` : `RevisionUnavailable(${name})`],
    };
  }
  const check = checkRevision(revision, source);
  if (!check.hash) return { view: { state: 'Unavailable', reason: 'MalformedPayload', runtime, revision: name }, issues: check.issues };
  const disabled = (revision.data as { disabled?: unknown } | undefined)?.disabled === true;
  if (disabled) check.issues.push(`RevisionDisabled(${name})`);
  return {
    view: disabled
      ? { state: 'Unavailable', reason: 'Disabled', runtime, revision: name, hash: check.hash, source: revision }
      : { state: 'Available', runtime, revision: name, hash: check.hash, source: revision },
    issues: check.issues,
  };
}

function relationOf(live: RuntimeView, active: RuntimeView): LiveRelation {
  if (!live.hash || !active.hash) return 'Unknown';
  if (live.hash.full === active.hash.full) return 'Equal';
  return live.hash.short === active.hash.short ? 'Ambiguous' : 'Different';
}

/** Collects the runtime evidence of one InferenceService. */
export async function collectRuntimeEvidence(
  reader: RuntimeReader,
  isvc: InferenceServiceObject,
  omeNamespace: string,
): Promise<RuntimeEvidence> {
  const source = sourceOf(isvc);
  const pinMode = pinModeOf(isvc);
  const issues: string[] = [];
  const live: RuntimeView = source ? await readLiveView(reader, source) : { state: 'Unavailable', reason: 'NotConfigured' };
  if (live.state === 'Unavailable' && live.reason !== 'NotConfigured') issues.push('LiveRuntimeUnavailable');
  if (live.inheritanceFailed) issues.push('InheritanceUnavailable');

  let active: RuntimeView = live;
  let pinState: PinState = 'NotApplicable';
  const reported = isvc.status?.pinnedRevisionName ?? '';
  const desired = isvc.spec?.runtime?.revision ?? '';
  if (pinMode === 'InvalidPin') {
    pinState = 'InvalidIntent';
    active = { state: 'Unavailable', reason: 'MalformedPayload' };
  } else if (pinMode !== 'AutoSync' && source) {
    const name = pinMode === 'ExplicitPin' ? desired : reported;
    if (name === '') {
      pinState = live.state === 'Available' ? 'AwaitingPin' : 'Unavailable';
      issues.push('ActiveRevisionUnreported');
    } else {
      const read = await readRevisionView(reader, omeNamespace, name, source);
      active = read.view;
      issues.push(...read.issues);
      pinState = pinStateOf(read.view, pinMode === 'ExplicitPin' && reported !== desired);
      if (active.state === 'Unavailable') issues.push('ActiveRevisionUnavailable');
    }
  }
  const status = statusFreshnessOf(isvc);
  if (status !== 'Current') issues.push(`Status${status}`);
  const drift = driftOf(isvc);
  if (drift === 'Malformed') issues.push('ReportedDriftConflict');
  return { ...(source ? { source } : {}), live, active, pinMode, pinState, sync: syncStateOf(isvc), status, drift, liveRelation: relationOf(live, active), issues };
}

function pinStateOf(view: RuntimeView, mismatch: boolean): PinState {
  if (view.state === 'Available') return mismatch ? 'DesiredReportedMismatch' : 'Resolved';
  if (view.reason === 'NotFound') return 'RevisionMissing';
  if (view.reason === 'MalformedPayload') return 'RevisionInvalid';
  return 'Unavailable';
}
