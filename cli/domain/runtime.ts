/**
 * Runtime evidence for one InferenceService: the live runtime as defined now, the spec it is
 * meant to run (its pinned revision, or the live one), and how the pin, sync token and
 * RuntimeDrifted condition stand. Hashes and names come from `shared/runtime`.
 */
import { NotFoundError } from '../../shared/errors';
import type { ClusterClient, KubeObject } from '../../shared/ports/cluster';
import {
  computeRevisionHash,
  computeRevisionName,
  normalizeRuntimeKind,
  type RevisionSource,
} from '../../shared/runtime/revision';
import { Annotation, ConditionType, CREATED_BY_OME, DriftReason, Label, RuntimeKind } from '../../shared/vocabulary';
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

/**
 * The live runtime merged with the runtimes it inherits from. A runtime that inherits
 * shows Unavailable until the inheritance resolver is wired in here; a hash of the child
 * alone would claim a spec OME does not run.
 */
async function readLiveView(reader: RuntimeReader, source: RevisionSource): Promise<RuntimeView> {
  const runtime = runtimeLabel(source);
  let object: KubeObject & { spec?: Record<string, unknown> };
  try {
    object =
      source.kind === RuntimeKind.namespaced
        ? await reader.get(ServingRuntimes, source.namespace, source.runtimeName)
        : await reader.get(ClusterServingRuntimes, undefined, source.runtimeName);
  } catch (error) {
    return { state: 'Unavailable', reason: error instanceof NotFoundError ? 'NotFound' : 'Unreadable', runtime };
  }
  if (annotationOf(object, Annotation.inheritFrom)) return { state: 'Unavailable', reason: 'Unreadable', runtime, source: object };
  const spec = object.spec ?? {};
  if (spec.disabled === true) return { state: 'Unavailable', reason: 'Disabled', runtime, source: object };
  try {
    return { state: 'Available', runtime, hash: computeRevisionHash(spec), source: object };
  } catch {
    return { state: 'Unavailable', reason: 'MalformedPayload', runtime, source: object };
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
  if (source && live.source && annotationOf(live.source, Annotation.inheritFrom)) issues.push('InheritanceUnavailable');

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
