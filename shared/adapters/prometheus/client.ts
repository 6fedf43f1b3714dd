/**
 * The Prometheus HTTP API client of analysis: one instant query (`/api/v1/query`, a POST
 * form as client_golang sends it, GET when the server answers 405), under the caller's
 * AbortSignal, with a bearer token (never over plain http) and headers. The answer is read through a size cap and
 * a series cap: a source is configured by users and its answers are untrusted input.
 * Failures are typed (errors.ts); nothing here logs, so the token never leaves the request.
 */
import { MAX_RESULT_SERIES, parseQueryResponse, PrometheusErrorType, type QueryReading } from '../../domain/analysis/query-result';
import { FenceMessage } from '../../domain/analysis/network-fence';
import { sdkErrorShape } from '../sdk-error';
import {
  PrometheusAddressError,
  PrometheusApiError,
  PrometheusHttpError,
  PrometheusRefusedError,
  PrometheusResponseError,
  PrometheusTimeoutError,
  PrometheusUnreachableError,
} from './errors';

/** Bytes of an answer the client reads before giving up on it. */
export const MAX_RESPONSE_BYTES = 1024 * 1024;

export const QUERY_PATH = '/api/v1/query';

export type FetchFn = typeof fetch;

export interface InstantQuery {
  /** Base URL of the Prometheus HTTP API; a path prefix is kept (`http://x/prom` queries `/prom/api/v1/query`). */
  readonly address: string;
  readonly query: string;
  /** Evaluation time of the instant query. */
  readonly time: Date;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as `Authorization: Bearer <token>` when non-empty; refused (PrometheusRefusedError) over plain http. */
  readonly token?: string;
  readonly signal?: AbortSignal;
  readonly fetch?: FetchFn;
  readonly maxResponseBytes?: number;
  readonly maxSeries?: number;
}

/** An address as a URL, or PrometheusAddressError when it makes no client (not a URL, or not http(s)). */
export function sourceUrl(address: string): URL {
  let url: URL;
  try {
    url = new URL(address);
  } catch (cause) {
    throw new PrometheusAddressError(`parse ${JSON.stringify(address)}: invalid URL`, { cause });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new PrometheusAddressError(`unsupported protocol scheme ${JSON.stringify(url.protocol.replace(/:$/, ''))}`);
  }
  return url;
}

/** The query endpoint for an address, or PrometheusAddressError when it makes no client. */
export function queryUrl(address: string): URL {
  const base = sourceUrl(address);
  const url = new URL(base.origin);
  url.pathname = base.pathname.replace(/\/+$/, '') + QUERY_PATH;
  return url;
}

/**
 * Runs one instant query. Resolves to the usable values or no data; a range vector or a
 * non-numeric string reads as an error reading (upstream judges those inconclusive).
 * Throws a PrometheusQueryError subclass when the query itself fails.
 */
export async function queryInstant(request: InstantQuery): Promise<QueryReading> {
  const url = queryUrl(request.address);
  if (request.token && url.protocol === 'http:') throw new PrometheusRefusedError(FenceMessage.plainHttpBearer(request.address));
  const doFetch = request.fetch ?? fetch;
  const form = new URLSearchParams({ query: request.query, time: String(request.time.getTime() / 1000) });
  const headers: Record<string, string> = { ...(request.headers ?? {}) };
  // As upstream sets them: the token first, then the headers, so an Authorization header wins.
  const ownAuthorization = Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
  if (request.token && !ownAuthorization) headers.Authorization = `Bearer ${request.token}`;
  let response = await send(doFetch, url, 'POST', form, headers, request.signal);
  if (response.status === 405) {
    await response.body?.cancel();
    const getUrl = new URL(url);
    getUrl.search = form.toString();
    response = await send(doFetch, getUrl, 'GET', undefined, headers, request.signal);
  }
  const body = await readCapped(response, request.maxResponseBytes ?? MAX_RESPONSE_BYTES, url, request.signal);
  const reading = parseQueryResponse(response.status, body, request.maxSeries ?? MAX_RESULT_SERIES);
  if (reading.kind !== 'error' || reading.errorType === undefined) return reading;
  switch (reading.errorType) {
    case PrometheusErrorType.server:
    case PrometheusErrorType.client:
      throw new PrometheusHttpError(reading.message, response.status, reading.errorType);
    case PrometheusErrorType.badResponse:
      throw new PrometheusResponseError(reading.message, reading.errorType);
    default:
      throw new PrometheusApiError(reading.message, reading.errorType);
  }
}

async function send(
  doFetch: FetchFn,
  url: URL,
  method: 'POST' | 'GET',
  form: URLSearchParams | undefined,
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
): Promise<Response> {
  const init: RequestInit = {
    method,
    headers: form ? { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' } : headers,
    ...(form ? { body: form.toString() } : {}),
    ...(signal ? { signal } : {}),
    redirect: 'manual',
  };
  try {
    return await doFetch(url, init);
  } catch (cause) {
    throw transportError(cause, method, url, signal);
  }
}

/** The body's text, read through `maxBytes` (PrometheusResponseError beyond it). */
export async function readCapped(response: Response, maxBytes: number, url: URL, signal: AbortSignal | undefined): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? '');
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    throw tooLarge(maxBytes);
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel();
        throw tooLarge(maxBytes);
      }
      chunks.push(value);
    }
  } catch (cause) {
    if (cause instanceof PrometheusResponseError) throw cause;
    throw transportError(cause, 'POST', url, signal);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

function tooLarge(maxBytes: number): PrometheusResponseError {
  return new PrometheusResponseError(`${PrometheusErrorType.badResponse}: response body exceeds ${maxBytes} bytes`, PrometheusErrorType.badResponse);
}

/** Go's `Post "<url>": <reason>` shape, with Node's cause named plainly. */
export function transportError(cause: unknown, method: string, url: URL, signal: AbortSignal | undefined): Error {
  const verb = method === 'POST' ? 'Post' : 'Get';
  const where = `${verb} ${JSON.stringify(url.toString())}`;
  if (signal?.aborted || isAbort(cause)) return new PrometheusTimeoutError(`${where}: context deadline exceeded`, { cause });
  // fetch wraps the socket error: TypeError('fetch failed') with the errno error as its cause.
  const inner = sdkErrorShape((cause as { cause?: unknown } | undefined)?.cause);
  const code = inner.code ?? sdkErrorShape(cause).code;
  const detail = inner.message ?? sdkErrorShape(cause).message ?? String(cause);
  if (code === 'ECONNREFUSED') return new PrometheusUnreachableError(`${where}: connection refused (${detail})`, { cause });
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new PrometheusUnreachableError(`${where}: no such host (${detail})`, { cause });
  return new PrometheusUnreachableError(`${where}: ${detail}`, { cause });
}

function isAbort(error: unknown): boolean {
  const name = sdkErrorShape(error).name;
  return name === 'AbortError' || name === 'TimeoutError';
}
