import { InvalidInputError } from '../errors';
import { Annotation, DriftReason, EventReason, Label, Message, type DriftReasonName } from '../vocabulary';
import type { JsonValue } from './go-json';
import { buildControllerRevision, computeRevisionHash, normalizeRuntimeKind, type ControllerRevisionObject } from './revision';

/**
 * The pinning decision for one InferenceService, in upstream's order (pinning.go):
 * resolve live → explicit `spec.runtime.revision` → first pin → pinned revision gone →
 * source gone → hashes equal → roll forward on a new `ome.io/runtime-sync` → drift.
 * Pure: the caller fetched the ISVC, resolved the live runtime and looks revisions up.
 */

/** The ISVC fields the decision reads. */
export interface PinningSubject {
  namespace: string;
  name: string;
  runtime?: { name?: string; kind?: string; autoSync?: boolean; revision?: string } | undefined;
  /** The value of `ome.io/runtime-sync`, if set. */
  syncToken?: string | undefined;
  pinnedRevisionName?: string | undefined;
  lastRuntimeSyncToken?: string | undefined;
}

export type LiveRuntime =
  | { status: 'found'; spec: JsonValue }
  | { status: 'not-found'; message: string }
  | { status: 'error'; message: string };

export interface StoredRevision {
  labels?: Record<string, string> | undefined;
  data: unknown;
}

export interface PinInput {
  isvc: PinningSubject;
  live: LiveRuntime;
  /** Looks a revision up by name in OME's namespace; undefined when it does not exist. */
  lookupRevision: (name: string) => StoredRevision | undefined;
  omeNamespace: string;
}

/** Where the serving workload comes from after this decision. */
export type ServingSource =
  | { source: 'live' }
  | { source: 'revision'; revisionName: string; spec: JsonValue }
  /** Leave the workload exactly as it is. */
  | { source: 'unchanged' };

export type DriftChange = { action: 'set'; reason: DriftReasonName; message: string } | { action: 'remove' } | { action: 'keep' };

export interface PinDecision {
  outcome: 'follow-live' | 'pinned' | 'drifted' | 'error';
  serve: ServingSource;
  /** A revision to create (create, and treat AlreadyExists as success); absent when it exists. */
  createRevision?: ControllerRevisionObject;
  /** New status fields; absent means leave them as they are. */
  status?: { pinnedRevisionName: string; lastRuntimeSyncToken: string };
  drift: DriftChange;
  /** RevisionMismatch, RevisionMissing and RuntimeMismatch pause updates to the workload. */
  pausesUpdates: boolean;
  /** A Warning event to record; the caller retries later. */
  event?: { type: 'Warning'; reason: typeof EventReason.runtimePinError; message: string };
  /** True when this decision rolled forward because of a new `ome.io/runtime-sync` value. */
  tokenConsumed: boolean;
}

/** The longest `ome.io/runtime-sync` value we act on; see {@link validateSyncToken}. */
export const MAX_SYNC_TOKEN_LENGTH = 63;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/**
 * Checks an `ome.io/runtime-sync` value. We accept Kubernetes label-value syntax (at most
 * 63 characters of letters, digits, `-`, `_` and `.`, starting and ending alphanumeric):
 * the token is copied into status and into idempotency keys, printed in tables and
 * matched by `kubectl ome wait`, so it must be short and free of whitespace and
 * separators. The CLI's `cli-runtime-sync-<uuid>` (53 characters), dates and ticket
 * numbers fit. Upstream accepts any string.
 * @returns the reason the value is rejected, or undefined when it is acceptable
 */
export function validateSyncToken(token: string): string | undefined {
  if (token.length > MAX_SYNC_TOKEN_LENGTH) {
    return `invalid ${Annotation.runtimeSync} annotation: ${token.length} characters, at most ${MAX_SYNC_TOKEN_LENGTH} allowed; use a short value such as a date or a ticket number`;
  }
  if (!LABEL_VALUE.test(token)) {
    return `invalid ${Annotation.runtimeSync} annotation ${JSON.stringify(token)}: use letters, digits, '-', '_' or '.', starting and ending with a letter or digit`;
  }
  return undefined;
}

const PAUSING: ReadonlySet<DriftReasonName> = new Set([DriftReason.revisionMismatch, DriftReason.revisionMissing, DriftReason.runtimeMismatch]);

function drifted(reason: DriftReasonName, message: string): PinDecision {
  return { outcome: 'drifted', serve: { source: 'unchanged' }, drift: { action: 'set', reason, message }, pausesUpdates: PAUSING.has(reason), tokenConsumed: false };
}

function pinError(message: string): PinDecision {
  return {
    outcome: 'error',
    serve: { source: 'unchanged' },
    drift: { action: 'keep' },
    pausesUpdates: false,
    event: { type: 'Warning', reason: EventReason.runtimePinError, message },
    tokenConsumed: false,
  };
}

/** Creates (if missing) and serves a revision of the live spec. */
function pinLive(input: PinInput, spec: JsonValue): { revisionName: string; createRevision?: ControllerRevisionObject } {
  const { isvc, omeNamespace } = input;
  const revision = buildControllerRevision({
    kind: normalizeRuntimeKind(isvc.runtime?.kind),
    namespace: isvc.namespace,
    runtimeName: isvc.runtime?.name ?? '',
    mergedSpec: spec,
    omeNamespace,
  });
  const revisionName = revision.metadata.name;
  return input.lookupRevision(revisionName) ? { revisionName } : { revisionName, createRevision: revision };
}

function decideExplicitPin(input: PinInput, revisionName: string, runtimeName: string): PinDecision {
  const stored = input.lookupRevision(revisionName);
  if (!stored) return drifted(DriftReason.revisionMissing, Message.explicitPinNotFound(revisionName, input.omeNamespace));
  const owner = stored.labels?.[Label.runtimeOf] ?? '';
  if (owner !== runtimeName) return drifted(DriftReason.runtimeMismatch, Message.runtimeMismatch(revisionName, owner, runtimeName));
  // The token is ignored while a revision is named: it neither advances nor is recorded.
  return {
    outcome: 'pinned',
    serve: { source: 'revision', revisionName, spec: stored.data as JsonValue },
    status: { pinnedRevisionName: revisionName, lastRuntimeSyncToken: input.isvc.lastRuntimeSyncToken ?? '' },
    drift:
      input.live.status === 'not-found'
        ? { action: 'set', reason: DriftReason.sourceRuntimeMissing, message: Message.sourceRuntimeMissing(runtimeName, revisionName) }
        : { action: 'remove' },
    pausesUpdates: false,
    tokenConsumed: false,
  };
}

function decideManagedPin(input: PinInput, runtimeName: string, pinnedName: string, token: string): PinDecision {
  const { isvc, live } = input;
  const stored = input.lookupRevision(pinnedName);
  if (!stored) return drifted(DriftReason.revisionMissing, Message.pinnedRevisionMissing(pinnedName, input.omeNamespace));
  const servePinned: ServingSource = { source: 'revision', revisionName: pinnedName, spec: stored.data as JsonValue };
  if (live.status !== 'found') {
    return {
      outcome: 'pinned',
      serve: servePinned,
      drift: { action: 'set', reason: DriftReason.sourceRuntimeMissing, message: Message.sourceRuntimeMissing(runtimeName, pinnedName) },
      pausesUpdates: false,
      tokenConsumed: false,
    };
  }
  if (computeRevisionHash(stored.data).full === computeRevisionHash(live.spec).full) {
    // A token seen now is deliberately not recorded, so it rolls forward at the next change.
    return { outcome: 'pinned', serve: servePinned, drift: { action: 'remove' }, pausesUpdates: false, tokenConsumed: false };
  }
  if (token !== '' && token !== (isvc.lastRuntimeSyncToken ?? '')) {
    const { revisionName, createRevision } = pinLive(input, live.spec);
    return {
      outcome: 'pinned',
      serve: { source: 'revision', revisionName, spec: live.spec },
      ...(createRevision ? { createRevision } : {}),
      status: { pinnedRevisionName: revisionName, lastRuntimeSyncToken: token },
      drift: { action: 'remove' },
      pausesUpdates: false,
      tokenConsumed: true,
    };
  }
  return drifted(DriftReason.revisionMismatch, Message.revisionMismatch(pinnedName));
}

/**
 * Decides how to pin one InferenceService. Follows the live runtime unless
 * `spec.runtime.autoSync` is false and the runtime is named; status then keeps its last
 * values, so pinning again resumes from the last pinned revision.
 */
export function decidePin(input: PinInput): PinDecision {
  try {
    return decideInOrder(input);
  } catch (error) {
    // A runtime whose revision name cannot exist, or a spec Go could not decode, fails the pin.
    if (error instanceof InvalidInputError) return pinError(error.message);
    throw error;
  }
}

function decideInOrder(input: PinInput): PinDecision {
  const { isvc, live } = input;
  const runtimeName = isvc.runtime?.name ?? '';
  if (runtimeName === '' || isvc.runtime?.autoSync !== false) {
    return { outcome: 'follow-live', serve: { source: 'live' }, drift: { action: 'keep' }, pausesUpdates: false, tokenConsumed: false };
  }
  if (live.status === 'error') return pinError(`resolve live runtime ${runtimeName}: ${live.message}`);

  const explicit = isvc.runtime.revision ?? '';
  if (explicit !== '') return decideExplicitPin(input, explicit, runtimeName);

  const token = isvc.syncToken ?? '';
  const invalidToken = token === '' ? undefined : validateSyncToken(token);
  if (invalidToken) return pinError(invalidToken);

  const pinnedName = isvc.pinnedRevisionName ?? '';
  if (pinnedName === '') {
    if (live.status !== 'found') return pinError(`resolve live runtime ${runtimeName}: ${live.message}`);
    const { revisionName, createRevision } = pinLive(input, live.spec);
    // A token present at the first pin is recorded, not acted on.
    return {
      outcome: 'pinned',
      serve: { source: 'revision', revisionName, spec: live.spec },
      ...(createRevision ? { createRevision } : {}),
      status: { pinnedRevisionName: revisionName, lastRuntimeSyncToken: token },
      drift: { action: 'remove' },
      pausesUpdates: false,
      tokenConsumed: false,
    };
  }
  return decideManagedPin(input, runtimeName, pinnedName, token);
}
