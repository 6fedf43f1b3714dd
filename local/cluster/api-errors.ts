/**
 * `Status` objects as kube-apiserver writes them: the same `reason`, `code`, `message`
 * and `details` for the same failure, so clients that branch on them (kubectl's
 * `Error from server (NotFound): …`, client-go's `IsConflict`) behave as against a real
 * cluster.
 */

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  details?: StatusDetails;
  code: number;
}

/** A failed API request; `status` is what the HTTP layer writes back. */
export class ApiError extends Error {
  readonly status: Status;

  constructor(status: Partial<Status> & Pick<Status, 'message' | 'reason' | 'code'>) {
    super(status.message);
    this.name = 'ApiError';
    const ordered: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: status.message, reason: status.reason, code: status.code };
    if (status.details !== undefined) ordered.details = status.details;
    this.status = { ...ordered, code: status.code };
  }

  get code(): number {
    return this.status.code;
  }

  get reason(): string {
    return this.status.reason;
  }
}

/** The group-qualified resource as messages print it: `configmaps`, `inferenceservices.ome.io`. */
export interface QualifiedResource {
  group: string;
  plural: string;
}

export function qualifiedResourceName(resource: QualifiedResource): string {
  return resource.group === '' ? resource.plural : `${resource.plural}.${resource.group}`;
}

function resourceDetails(resource: QualifiedResource, name: string): StatusDetails {
  return resource.group === '' ? { name, kind: resource.plural } : { name, group: resource.group, kind: resource.plural };
}

export function notFound(resource: QualifiedResource, name: string): ApiError {
  return new ApiError({
    message: `${qualifiedResourceName(resource)} "${name}" not found`,
    reason: 'NotFound',
    details: resourceDetails(resource, name),
    code: 404,
  });
}

/** The answer for a path that names no resource the server serves. */
export function pathNotFound(): ApiError {
  return new ApiError({ message: 'the server could not find the requested resource', reason: 'NotFound', details: {}, code: 404 });
}

export function alreadyExists(resource: QualifiedResource, name: string): ApiError {
  return new ApiError({
    message: `${qualifiedResourceName(resource)} "${name}" already exists`,
    reason: 'AlreadyExists',
    details: resourceDetails(resource, name),
    code: 409,
  });
}

export const CONFLICT_STALE_MESSAGE =
  'the object has been modified; please apply your changes to the latest version and try again';

export function conflict(resource: QualifiedResource, name: string, why: string = CONFLICT_STALE_MESSAGE): ApiError {
  return new ApiError({
    message: `Operation cannot be fulfilled on ${qualifiedResourceName(resource)} "${name}": ${why}`,
    reason: 'Conflict',
    details: resourceDetails(resource, name),
    code: 409,
  });
}

export interface FieldError {
  type: 'FieldValueInvalid' | 'FieldValueRequired' | 'FieldValueNotSupported' | 'FieldValueForbidden' | 'FieldValueTypeInvalid' | 'FieldValueTooLong' | 'FieldValueTooMany' | 'FieldValueDuplicate';
  field: string;
  /** The full text as field.Error.Error() prints it, e.g. `metadata.name: Required value`. */
  message: string;
}

const FIELD_ERROR_LABEL: Record<FieldError['type'], string> = {
  FieldValueInvalid: 'Invalid value',
  FieldValueRequired: 'Required value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueDuplicate: 'Duplicate value',
};

/**
 * The bad value of a field error that prints none, as apimachinery's `field.OmitValueType`
 * (the CEL rules of a CRD's schema report their message alone).
 */
export const OMIT_VALUE: unique symbol = Symbol('omit value');

/** Builds one field error the way apimachinery's `field.Error` renders it. */
export function fieldError(type: FieldError['type'], field: string, value: unknown, detail?: string): FieldError {
  const label = FIELD_ERROR_LABEL[type];
  let text = `${field}: ${label}`;
  if (type === 'FieldValueRequired' || type === 'FieldValueForbidden' || type === 'FieldValueTooLong') {
    text = detail ? `${text}: ${detail}` : text;
  } else {
    if (value !== OMIT_VALUE) text = `${text}: ${renderFieldValue(value)}`;
    if (detail) text = `${text}: ${detail}`;
  }
  return { type, field, message: text };
}

/**
 * The bad value as field.Error prints it in kube-apiserver 1.36: its JSON (`"name"`, `-1`,
 * `{"app":"x"}`, `null`), object keys sorted as Go's encoder writes a map.
 */
function renderFieldValue(value: unknown): string {
  return value === undefined ? 'null' : JSON.stringify(sortedKeys(value));
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, item]) => [key, sortedKeys(item)]));
}

/**
 * 422 Invalid: `<Kind>[.<group>] "<name>" is invalid: <errors>`. Empty details fields are
 * left out, as Go's `omitempty` leaves them (an options error names no object).
 */
export function invalid(group: string, kind: string, name: string, errors: FieldError[]): ApiError {
  const qualifiedKind = group === '' ? kind : `${kind}.${group}`;
  const aggregate = errors.length === 1 ? (errors[0]?.message ?? '') : `[${errors.map((e) => e.message).join(', ')}]`;
  const details: StatusDetails = {};
  if (name !== '') details.name = name;
  if (group !== '') details.group = group;
  if (kind !== '') details.kind = kind;
  details.causes = errors.map((e) => ({ reason: e.type, message: e.message.slice(e.field.length + 2), field: e.field }));
  return new ApiError({ message: `${qualifiedKind} "${name}" is invalid: ${aggregate}`, reason: 'Invalid', details, code: 422 });
}

/** 422 without detail, as the server answers a JSON patch that does not apply. */
export function unprocessable(): ApiError {
  return new ApiError({
    message: 'the server rejected our request due to an error in our request',
    reason: 'Invalid',
    details: {},
    code: 422,
  });
}

export function badRequest(message: string): ApiError {
  return new ApiError({ message, reason: 'BadRequest', code: 400 });
}

/** The storage key function's refusal of a name that cannot be a path segment. */
export function invalidNameParameter(name: string, problems: string[]): ApiError {
  return badRequest(`Name parameter invalid: ${JSON.stringify(name)}: ${problems.join(';')}`);
}

export function forbidden(resource: QualifiedResource, name: string, why: string): ApiError {
  return new ApiError({
    message: `${qualifiedResourceName(resource)} "${name}" is forbidden: ${why}`,
    reason: 'Forbidden',
    details: resourceDetails(resource, name),
    code: 403,
  });
}

export function expired(message: string): ApiError {
  return new ApiError({ message, reason: 'Expired', code: 410 });
}

export function methodNotAllowed(): ApiError {
  return new ApiError({
    message: 'the server does not allow this method on the requested resource',
    reason: 'MethodNotAllowed',
    details: {},
    code: 405,
  });
}

/** A body or patch of a media type the resource does not take; the Status carries no details. */
export function unsupportedMediaType(accepted: string[]): ApiError {
  return new ApiError({
    message: `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    reason: 'UnsupportedMediaType',
    code: 415,
  });
}

export function notAcceptable(accepted: string[]): ApiError {
  return new ApiError({
    message: `only the following media types are accepted: ${accepted.join(', ')}`,
    reason: 'NotAcceptable',
    code: 406,
  });
}

export function internalError(detail: string): ApiError {
  return new ApiError({
    message: `Internal error occurred: ${detail}`,
    reason: 'InternalError',
    details: { causes: [{ message: detail }] },
    code: 500,
  });
}

export function tooManyRequests(): ApiError {
  return new ApiError({
    message: 'Too many requests, please try again later.',
    reason: 'TooManyRequests',
    details: { retryAfterSeconds: 1 },
    code: 429,
  });
}

export function timeout(): ApiError {
  return new ApiError({
    message: 'Timeout: request did not complete within the allotted timeout',
    reason: 'Timeout',
    details: {},
    code: 504,
  });
}
