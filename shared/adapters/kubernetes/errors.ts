import { STATUS_CODES } from 'node:http';
import {
  AlreadyExistsError,
  ConflictError,
  ControlPlaneError,
  ExpiredError,
  InvalidInputError,
  NotFoundError,
  ThrottledError,
  UnavailableError,
} from '../../domain/errors';

/** A `meta/v1` Status, the body of every API server failure. */
export interface ApiStatus {
  kind?: string;
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  details?: unknown;
  code?: number;
}

/**
 * What the server said, kept as the `cause` of every typed error the adapter throws, so a
 * caller that needs the reason (say, a failed JSON patch `test`) can read it.
 */
export interface ApiFailure {
  code: number;
  reason?: string;
  message: string;
  details?: unknown;
  method: string;
  path: string;
}

export interface RequestLine {
  method: string;
  path: string;
}

/** The server's answer behind a typed error, when there was one. */
export function apiFailureOf(error: unknown): ApiFailure | undefined {
  if (!(error instanceof ControlPlaneError)) return undefined;
  const cause = (error as { cause?: unknown }).cause;
  if (typeof cause === 'object' && cause !== null && 'code' in cause && 'method' in cause && 'path' in cause) {
    return cause as ApiFailure;
  }
  return undefined;
}

/** Parses a failure body as a Status; anything else becomes its text. */
export function parseStatus(body: string): ApiStatus | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as ApiStatus;
  } catch {
    // Not JSON: proxies and load balancers answer in HTML or plain text.
  }
  return undefined;
}

/**
 * Maps an HTTP failure to the typed error family. 409 is split by `Status.reason`: a create
 * that found the name taken is AlreadyExists, everything else (stale resourceVersion,
 * failed precondition) is a Conflict. 403 from an admission webhook is a verdict on the
 * input; any other 403 is a permission the caller lacks, terminal but not the input's fault.
 */
export function errorFromStatus(code: number, status: ApiStatus | undefined, bodyText: string, request: RequestLine): ControlPlaneError {
  const text = STATUS_CODES[code] ?? 'Unknown';
  const message = status?.message || `${request.method} ${request.path}: ${code} ${text}${bodyText ? `: ${bodyText.slice(0, 200)}` : ''}`;
  const cause: ApiFailure = { code, reason: status?.reason, message, details: status?.details, method: request.method, path: request.path };
  const options = { cause };
  if (code === 404) return new NotFoundError(message, options);
  if (code === 409) return status?.reason === 'AlreadyExists' ? new AlreadyExistsError(message, options) : new ConflictError(message, options);
  if (code === 410) return new ExpiredError(message, options);
  if (code === 429) return new ThrottledError(message, options);
  if (code === 400 || code === 422) return new InvalidInputError(message, options);
  if (code === 403 && message.startsWith('admission webhook')) return new InvalidInputError(message, options);
  // A rejected credential may be an expired short-lived token: a redelivery gets a fresh one.
  if (code === 401) return new ControlPlaneError(message, { retryable: true, cause });
  if (code === 408 || code >= 500) return new UnavailableError(message, options);
  return new ControlPlaneError(message, { retryable: false, cause });
}

const CERTIFICATE_ERRORS = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ERR_TLS/;

/**
 * Maps a failure below HTTP (refused, reset, timed out, DNS) to UnavailableError. A server
 * certificate we do not trust is a configuration error that no retry cures.
 */
export function errorFromTransport(error: unknown, request: RequestLine): ControlPlaneError {
  if (error instanceof ControlPlaneError) return error;
  const code = typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : '';
  const detail = error instanceof Error ? error.message : String(error);
  const message = `${request.method} ${request.path}: ${detail}`;
  if (CERTIFICATE_ERRORS.test(code)) return new ControlPlaneError(message, { retryable: false, cause: error });
  return new UnavailableError(message, { cause: error });
}
