import { previewAnnotationValue } from '../annotation-value';
import { InvalidInputError } from '../errors';
import { DriftReason, EventReason, Label, Message, RuntimeKind, SyncTokenMessage, type DriftReasonName } from '../vocabulary';
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
  /**
   * The advisory RuntimeReady condition: `unresolved` (False/RuntimeNotFound, with a
   * Warning event) while a runtime followed live is missing; `resolved` (True/
   * RuntimeResolved, only where the condition is already set) once the runtime is found.
   * Absent: leave it as it is (a pinned service whose runtime is gone says so in
   * RuntimeDrifted SourceRuntimeMissing instead).
   */
  runtimeReady?: { state: 'unresolved'; message: string } | { state: 'resolved' };
  /** RevisionMismatch, RevisionMissing and RuntimeMismatch pause updates to the workload. */
  pausesUpdates: boolean;
  /**
   * While updates pause on RevisionMismatch, the revision the workload must already serve:
   * the pinned one. A workload rendered from another revision (not from the live spec) is
   * brought to it, and only then: a roll whose status was written but whose workload write
   * died with its worker is finished, instead of leaving the pods on the revision before it.
   */
  holdAt?: Extract<ServingSource, { source: 'revision' }>;
  /** A Warning event to record; the caller retries later. */
  event?: { type: 'Warning'; reason: typeof EventReason.runtimePinError; message: string };
  /** True when this decision rolled forward because of a new `ome.io/runtime-sync` value. */
  tokenConsumed: boolean;
  /**
   * Set when `ome.io/runtime-sync` holds a value that cannot be used: the decision was
   * made as if the annotation were absent, and the caller records this message once as
   * a Warning event. Pinning, drift and workload updates go on regardless.
   */
  unusableToken?: string;
}

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why an `ome.io/runtime-sync` value cannot be used, or undefined when it can. Upstream
 * accepts any string, and so do we: dates with `:`, spaces, values of hundreds of
 * characters all roll forward once (idempotency keys hold a hash of the value, never the
 * value). Only a value that cannot be recorded as it is gets refused:
 * - a NUL character, which the terminal output of `kubectl` and any C-string tooling cut
 *   short, so the token `kubectl ome wait` matches would not be the one the user set;
 * - an unpaired UTF-16 surrogate, which is not Unicode: Go's JSON decoder turns it into
 *   U+FFFD, so `status.lastRuntimeSyncToken` could never equal the annotation.
 * Size is bounded by the API server itself (all annotations together at most 262,144 B).
 * @returns the message of the one Warning event the value gets, or undefined
 */
export function findUnusableSyncToken(token: string): string | undefined {
  let problem: string | undefined;
  if (token.includes('\u0000')) problem = 'it contains a NUL character';
  else if (LONE_SURROGATE.test(token)) problem = 'it is not valid Unicode (an unpaired UTF-16 surrogate)';
  if (problem === undefined) return undefined;
  return SyncTokenMessage.unusable(previewAnnotationValue(token), problem);
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

/** Pins to the live spec's revision (created when absent), recording `token` in status. */
function pinToLive(input: PinInput, spec: JsonValue, token: string, tokenConsumed: boolean): PinDecision {
  const { revisionName, createRevision } = pinLive(input, spec);
  return {
    outcome: 'pinned',
    serve: { source: 'revision', revisionName, spec },
    ...(createRevision ? { createRevision } : {}),
    status: { pinnedRevisionName: revisionName, lastRuntimeSyncToken: token },
    drift: { action: 'remove' },
    pausesUpdates: false,
    tokenConsumed,
  };
}

/**
 * Upstream compares only `ome.io/runtime-of`, so a same-named runtime of another kind or
 * namespace passes its check and gets rendered. Its revisions also carry
 * `ome.io/runtime-of-kind` and `ome.io/runtime-of-namespace` ("" for a
 * ClusterServingRuntime); where they are present they must name this InferenceService's
 * runtime, or the pin would serve another team's spec.
 */
function findScopeMismatch(input: PinInput, revisionName: string, runtimeName: string, stored: StoredRevision): string | undefined {
  const labels = stored.labels ?? {};
  const kind = normalizeRuntimeKind(input.isvc.runtime?.kind);
  const wanted = { kind, namespace: kind === RuntimeKind.namespaced ? input.isvc.namespace : '' };
  const ownerKind = labels[Label.runtimeOfKind];
  const ownerNamespace = labels[Label.runtimeOfNamespace];
  const kindDiffers = ownerKind !== undefined && ownerKind !== wanted.kind;
  const namespaceDiffers = ownerNamespace !== undefined && ownerNamespace !== wanted.namespace;
  if (!kindDiffers && !namespaceDiffers) return undefined;
  return Message.runtimeScopeMismatch(revisionName, runtimeName, { kind: ownerKind ?? wanted.kind, namespace: ownerNamespace ?? wanted.namespace }, wanted);
}

function decideExplicitPin(input: PinInput, revisionName: string, runtimeName: string): PinDecision {
  const stored = input.lookupRevision(revisionName);
  if (!stored) return drifted(DriftReason.revisionMissing, Message.explicitPinNotFound(revisionName, input.omeNamespace));
  const owner = stored.labels?.[Label.runtimeOf] ?? '';
  if (owner !== runtimeName) return drifted(DriftReason.runtimeMismatch, Message.runtimeMismatch(revisionName, owner, runtimeName));
  const scopeMismatch = findScopeMismatch(input, revisionName, runtimeName, stored);
  if (scopeMismatch) return drifted(DriftReason.runtimeMismatch, scopeMismatch);
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
  const servePinned = { source: 'revision', revisionName: pinnedName, spec: stored.data as JsonValue } as const;
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
  if (token !== '' && token !== (isvc.lastRuntimeSyncToken ?? '')) return pinToLive(input, live.spec, token, true);
  return { ...drifted(DriftReason.revisionMismatch, Message.revisionMismatch(pinnedName)), holdAt: servePinned };
}

/**
 * Decides how to pin one InferenceService. Follows the live runtime unless
 * `spec.runtime.autoSync` is false and the runtime is named; status then keeps its last
 * values, so pinning again resumes from the last pinned revision.
 */
export function decidePin(input: PinInput): PinDecision {
  const runtimeReady = runtimeReadinessOf(input);
  const decided = (decision: PinDecision): PinDecision => (runtimeReady ? { ...decision, runtimeReady } : decision);
  try {
    return decided(decideInOrder(input));
  } catch (error) {
    // A runtime whose revision name cannot exist, or a spec Go could not decode, fails the pin.
    if (error instanceof InvalidInputError) return decided(pinError(error.message));
    throw error;
  }
}

/**
 * RuntimeReady as upstream sets it: False when the runtime a service follows live (not
 * pinned, `autoSync` not false) cannot be found; True once any named runtime resolves. A
 * lookup that failed for another reason tells nothing.
 */
function runtimeReadinessOf(input: PinInput): PinDecision['runtimeReady'] {
  const { isvc, live } = input;
  const name = isvc.runtime?.name ?? '';
  if (name === '') return undefined;
  if (live.status === 'found') return { state: 'resolved' };
  if (live.status === 'not-found' && isvc.runtime?.autoSync !== false) return { state: 'unresolved', message: Message.runtimeNotFound(name, isvc.namespace) };
  return undefined;
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

  const given = isvc.syncToken ?? '';
  const unusableToken = given === '' ? undefined : findUnusableSyncToken(given);
  const token = unusableToken === undefined ? given : '';

  const decision = decideTokenSteps(input, runtimeName, token);
  return unusableToken === undefined ? decision : { ...decision, unusableToken };
}

/** Steps 3 to 8: first pin, then the managed pin with a usable (or no) token. */
function decideTokenSteps(input: PinInput, runtimeName: string, token: string): PinDecision {
  const { isvc, live } = input;
  const pinnedName = isvc.pinnedRevisionName ?? '';
  if (pinnedName === '') {
    if (live.status !== 'found') return pinError(`resolve live runtime ${runtimeName}: ${live.message}`);
    // A token present at the first pin is recorded, not acted on.
    return pinToLive(input, live.spec, token, false);
  }
  return decideManagedPin(input, runtimeName, pinnedName, token);
}
