import { Annotation, CREATED_BY_OME, REVISION_REQUIRES_PINNING_MESSAGE, RuntimeKind, type RuntimeKindName } from '../vocabulary';
import { normalizeRuntimeKind, validateRevisionName } from './revision';

/**
 * The pure checks behind the admission webhooks, with upstream's messages word for word.
 * Each check returns the denial reason, or undefined to admit.
 */

/** The ISVC fields the pinning checks read. */
export interface AdmissionSubject {
  namespace: string;
  runtime?: { name?: string; kind?: string; autoSync?: boolean; revision?: string } | undefined;
  modelName?: string | undefined;
  hasEngine: boolean;
}

/**
 * Checks a set `spec.runtime.revision`: it needs `autoSync: false` (the default is true)
 * and a name of the form for this runtime. It never checks that the revision exists.
 */
export function checkRuntimeRevisionPin(isvc: AdmissionSubject): string | undefined {
  const revision = isvc.runtime?.revision ?? '';
  if (revision === '') return undefined;
  if (isvc.runtime?.autoSync !== false) return REVISION_REQUIRES_PINNING_MESSAGE;
  return validateRevisionName(revision, {
    kind: normalizeRuntimeKind(isvc.runtime?.kind),
    namespace: isvc.namespace,
    runtimeName: isvc.runtime?.name ?? '',
  });
}

/** What the webhook found when it looked the live runtime up. */
export type LiveRuntimeLookup = { found: false } | { found: true; kind: RuntimeKindName; disabled: boolean };

/** The runtime selector's error for a runtime that cannot serve, or undefined when it can. */
export function describeRuntimeUnavailable(runtimeName: string, requestedKind: RuntimeKindName, namespace: string, live: LiveRuntimeLookup): string | undefined {
  if (!live.found) {
    return requestedKind === RuntimeKind.namespaced
      ? `ServingRuntime ${runtimeName} not found in namespace ${namespace}`
      : `runtime ${runtimeName} not found in namespace ${namespace} or at cluster scope`;
  }
  if (live.disabled) return `${live.kind === RuntimeKind.cluster ? 'cluster-scoped' : 'namespace-scoped'} runtime ${runtimeName} is disabled`;
  return undefined;
}

/**
 * For an ISVC with `spec.model`, an `engine` section and a named runtime, denies the
 * request while that runtime is missing or disabled:
 * `runtime <n> does not support model <m>: <err>`.
 */
export function checkNamedRuntimeAvailable(isvc: AdmissionSubject, live: LiveRuntimeLookup): string | undefined {
  const runtimeName = isvc.runtime?.name ?? '';
  const modelName = isvc.modelName ?? '';
  if (runtimeName === '' || modelName === '' || !isvc.hasEngine) return undefined;
  const reason = describeRuntimeUnavailable(runtimeName, normalizeRuntimeKind(isvc.runtime?.kind), isvc.namespace, live);
  return reason && `runtime ${runtimeName} does not support model ${modelName}: ${reason}`;
}

/** The ControllerRevision fields the immutability check compares. */
export interface RevisionSnapshot {
  metadata: { namespace?: string; name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  data?: unknown;
  revision?: number;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * Denies an UPDATE of an OME-owned ControllerRevision (created-by `ome-controller`) that
 * changes its data, labels or revision number, in that order. Annotation changes pass, so
 * GC can mark and unmark; revisions OME did not create are not checked.
 */
export function checkControllerRevisionUpdate(oldRevision: RevisionSnapshot, newRevision: RevisionSnapshot): string | undefined {
  if (oldRevision.metadata.annotations?.[Annotation.createdBy] !== CREATED_BY_OME) return undefined;
  const id = `ControllerRevision ${oldRevision.metadata.namespace ?? ''}/${oldRevision.metadata.name}`;
  if (canonical(oldRevision.data) !== canonical(newRevision.data)) return `${id} is owned by OME; .data is immutable`;
  if (canonical(oldRevision.metadata.labels ?? {}) !== canonical(newRevision.metadata.labels ?? {})) return `${id} is owned by OME; .labels are immutable`;
  if ((oldRevision.revision ?? 0) !== (newRevision.revision ?? 0)) return `${id} is owned by OME; .revision is immutable`;
  return undefined;
}
