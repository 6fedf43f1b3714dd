/**
 * The validating admission webhook: an AdmissionReview v1 request in, its response out.
 *
 * - InferenceService CREATE and UPDATE (`inferenceservice.ome-webhook-server.validator`):
 *   a set `spec.runtime.revision` needs `autoSync: false` and the runtime's naming form;
 *   with `spec.model`, an `engine` section and a named runtime, the live runtime must
 *   exist and not be disabled (read through the cluster client). Before those, the
 *   `spec.rollout` shapes upstream's webhook refuses (shared/domain/rollout/admission.ts).
 * - ControllerRevision UPDATE
 *   (`controllerrevision-immutability.ome-webhook-server.validator`): an OME-created
 *   revision's data, labels and revision number never change.
 * Everything else is admitted. A denial carries the reason in `status.message`, so the API
 * server prints `admission webhook "<name>" denied the request: <reason>`; code 403 and
 * reason Forbidden, as controller-runtime's validators answer.
 *
 * A review whose object cannot be read is answered `allowed: false` with code 400 (as
 * controller-runtime answers), so the API server shows our message rather than a bare
 * status code. Authentication, limits and the time budget are webhook-request.ts's.
 */
import { NotFoundError } from '../../domain/errors';
import type { ClusterClient, KubeObject } from '../../ports/cluster';
import { Resources } from '../../domain/model/resources';
import { checkRolloutShape } from '../../domain/rollout/admission';
import {
  checkControllerRevisionUpdate,
  checkNamedRuntimeAvailable,
  checkRuntimeRevisionPin,
  type AdmissionSubject,
  type LiveRuntimeLookup,
  type RevisionSnapshot,
} from '../../domain/runtime/admission';
import { normalizeRuntimeKind } from '../../domain/runtime/revision';
import { OME_GROUP, RuntimeKind, type RuntimeKindName } from '../../domain/vocabulary';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

export interface AdmissionStatus {
  code: number;
  reason?: string;
  message: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  /** Shown by kubectl as `Warning: <text>` on an admitted request. */
  warnings?: string[];
}

export interface AdmissionReviewResponse {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: 'AdmissionReview';
  response: AdmissionResponse;
}

/** Finds the runtime an InferenceService names, as upstream's runtime selector looks it up. */
export type RuntimeLookup = (runtimeName: string, kind: RuntimeKindName, namespace: string) => Promise<LiveRuntimeLookup>;

export interface AdmissionDeps {
  /** Reads live runtimes; only called for an ISVC with model, engine and a named runtime. */
  lookupRuntime: RuntimeLookup;
}

/** A review the webhook cannot read: answered with code 400 and this message. */
export class MalformedReviewError extends Error {
  constructor(
    message: string,
    readonly uid?: string,
  ) {
    super(message);
    this.name = 'MalformedReviewError';
  }
}

/** The parts of `AdmissionReview.request` the checks read. */
export interface ReviewRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  operation: string;
  namespace?: string;
  object?: unknown;
  oldObject?: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks the envelope; throws MalformedReviewError naming what is wrong. */
export function parseAdmissionReview(review: unknown): ReviewRequest {
  if (!isRecord(review)) throw new MalformedReviewError('the request body is not a JSON object; expected an AdmissionReview');
  if (review.kind !== 'AdmissionReview' || review.apiVersion !== ADMISSION_API_VERSION) {
    throw new MalformedReviewError(
      `expected an AdmissionReview of apiVersion ${ADMISSION_API_VERSION}, got kind ${JSON.stringify(review.kind)} of apiVersion ${JSON.stringify(review.apiVersion)}`,
    );
  }
  const request = review.request;
  if (!isRecord(request)) throw new MalformedReviewError('the AdmissionReview has no request');
  if (typeof request.uid !== 'string' || request.uid === '') throw new MalformedReviewError('the AdmissionReview request has no uid');
  const uid = request.uid;
  const kind = request.kind;
  if (!isRecord(kind) || typeof kind.kind !== 'string' || typeof kind.group !== 'string') {
    throw new MalformedReviewError('request.kind must name the group, version and kind of the object', uid);
  }
  if (typeof request.operation !== 'string') throw new MalformedReviewError('request.operation is missing', uid);
  return {
    uid,
    kind: { group: kind.group, version: typeof kind.version === 'string' ? kind.version : '', kind: kind.kind },
    operation: request.operation,
    ...(typeof request.namespace === 'string' ? { namespace: request.namespace } : {}),
    object: request.object,
    oldObject: request.oldObject,
  };
}

function requireObject(value: unknown, field: string, uid: string): KubeObject {
  if (!isRecord(value) || !isRecord(value.metadata) || typeof value.metadata.name !== 'string') {
    throw new MalformedReviewError(`request.${field} must be an object with metadata.name`, uid);
  }
  return value as unknown as KubeObject;
}

/** Reads the fields of an InferenceService that the pinning checks look at. */
function toAdmissionSubject(isvc: KubeObject, namespace: string | undefined, uid: string): AdmissionSubject {
  const spec = isRecord(isvc.spec) ? isvc.spec : {};
  const runtime = spec.runtime;
  if (runtime !== undefined && runtime !== null && !isRecord(runtime)) throw new MalformedReviewError('spec.runtime must be an object', uid);
  const model = isRecord(spec.model) ? spec.model : undefined;
  const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
  return {
    namespace: isvc.metadata.namespace ?? namespace ?? '',
    runtime: isRecord(runtime)
      ? {
          name: text(runtime.name),
          kind: text(runtime.kind),
          autoSync: typeof runtime.autoSync === 'boolean' ? runtime.autoSync : undefined,
          revision: text(runtime.revision),
        }
      : undefined,
    modelName: text(model?.name),
    hasEngine: isRecord(spec.engine),
  };
}

/**
 * The rollout shapes upstream refuses (see shared/domain/rollout/admission.ts), checked before the
 * pin rules as upstream's validator orders them. An UPDATE of an object already being
 * deleted is admitted, as upstream admits it: the finalizer removal must never be denied.
 */
function reviewRolloutShape(request: ReviewRequest, object: KubeObject): string | undefined {
  const previous = request.operation === 'UPDATE' && isRecord(request.oldObject) ? request.oldObject : undefined;
  if (isRecord(previous?.metadata) && previous.metadata.deletionTimestamp) return undefined;
  return checkRolloutShape(object, previous);
}

async function reviewInferenceService(request: ReviewRequest, deps: AdmissionDeps): Promise<string | undefined> {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return undefined;
  const object = requireObject(request.object, 'object', request.uid);
  const rolloutDenial = reviewRolloutShape(request, object);
  if (rolloutDenial) return rolloutDenial;
  const subject = toAdmissionSubject(object, request.namespace, request.uid);
  const pinDenial = checkRuntimeRevisionPin(subject);
  if (pinDenial) return pinDenial;
  const runtimeName = subject.runtime?.name ?? '';
  if (runtimeName === '' || !subject.modelName || !subject.hasEngine) return undefined;
  const live = await deps.lookupRuntime(runtimeName, normalizeRuntimeKind(subject.runtime?.kind), subject.namespace);
  return checkNamedRuntimeAvailable(subject, live);
}

function reviewControllerRevision(request: ReviewRequest): string | undefined {
  if (request.operation !== 'UPDATE') return undefined;
  const next = requireObject(request.object, 'object', request.uid) as unknown as RevisionSnapshot;
  const previous = requireObject(request.oldObject, 'oldObject', request.uid) as unknown as RevisionSnapshot;
  return checkControllerRevisionUpdate(previous, next);
}

/** Wraps a response in its AdmissionReview envelope. */
export function respond(response: AdmissionResponse): AdmissionReviewResponse {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}

/**
 * Reviews one AdmissionReview. Throws MalformedReviewError for a review it cannot read;
 * a failed runtime lookup propagates (the caller answers per its failure policy).
 */
export async function reviewAdmission(review: unknown, deps: AdmissionDeps): Promise<AdmissionReviewResponse> {
  return reviewAdmissionRequest(parseAdmissionReview(review), deps);
}

/** Reviews a request parseAdmissionReview accepted; throws as reviewAdmission does. */
export async function reviewAdmissionRequest(request: ReviewRequest, deps: AdmissionDeps): Promise<AdmissionReviewResponse> {
  let denial: string | undefined;
  if (request.kind.group === OME_GROUP && request.kind.kind === 'InferenceService') {
    denial = await reviewInferenceService(request, deps);
  } else if (request.kind.group === 'apps' && request.kind.kind === 'ControllerRevision') {
    denial = reviewControllerRevision(request);
  }
  if (denial === undefined) return respond({ uid: request.uid, allowed: true });
  return respond({ uid: request.uid, allowed: false, status: { code: 403, reason: 'Forbidden', message: denial } });
}

function isDisabled(runtime: KubeObject): boolean {
  const spec = runtime.spec as { disabled?: unknown } | undefined;
  return spec?.disabled === true;
}

/**
 * The runtime lookup over a cluster client, as upstream's selector fetches: a
 * ServingRuntime in the ISVC's namespace; for kind ClusterServingRuntime the cluster
 * runtime first, then a ServingRuntime of that name in the namespace.
 */
export function createRuntimeLookup(client: ClusterClient): RuntimeLookup {
  const find = async (fetch: () => Promise<KubeObject>): Promise<KubeObject | undefined> => {
    try {
      return await fetch();
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw new Error(`look up runtime: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  };
  return async (runtimeName, kind, namespace) => {
    if (kind === RuntimeKind.cluster) {
      const cluster = await find(() => client.get(Resources.clusterServingRuntimes, undefined, runtimeName));
      if (cluster) return { found: true, kind: RuntimeKind.cluster, disabled: isDisabled(cluster) };
    }
    const namespaced = await find(() => client.get(Resources.servingRuntimes, namespace, runtimeName));
    if (namespaced) return { found: true, kind: RuntimeKind.namespaced, disabled: isDisabled(namespaced) };
    return { found: false };
  };
}
