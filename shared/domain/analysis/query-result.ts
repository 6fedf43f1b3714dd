/**
 * Reading a Prometheus instant-query answer (`/api/v1/query`) the way upstream's querier
 * does (client_golang's API client, then `usableValues`): a scalar is one value; a vector
 * is one value per series, skipping NaN and ±Inf series (a ratio over zero requests);
 * nothing usable is no data; a string result is read as a number; a range vector is an
 * error. HTTP failures and error bodies become client_golang's `<errorType>: <message>`.
 * Pure: the adapter hands over the status and the (size-capped) body text.
 */
import { parseGoFloat } from './go-float';
import { Message } from './messages';

/** What one metric's query produced: usable numbers, no data, or an error text for status. */
export type QueryReading =
  | { readonly kind: 'values'; readonly values: readonly number[] }
  | { readonly kind: 'noData' }
  | { readonly kind: 'error'; readonly message: string; readonly errorType?: string };

/** client_golang's error types (`api.ErrorType`). */
export const PrometheusErrorType = {
  badData: 'bad_data',
  badResponse: 'bad_response',
  server: 'server_error',
  client: 'client_error',
  timeout: 'timeout',
  canceled: 'canceled',
  execution: 'execution',
} as const;

/** Series a result may hold before the plane stops reading it (hostile or runaway queries). */
export const MAX_RESULT_SERIES = 10_000;

/** HTTP codes whose body Prometheus fills with `{status:"error", errorType, error}` (client_golang's apiError). */
const API_ERROR_CODES = new Set([400, 422, 503]);

/**
 * Reads one `/api/v1/query` response. `status` is the HTTP status; `body` its text.
 */
export function parseQueryResponse(status: number, body: string, maxSeries = MAX_RESULT_SERIES): QueryReading {
  const apiError = API_ERROR_CODES.has(status);
  if (Math.floor(status / 100) !== 2 && !apiError) {
    return status >= 500
      ? error(PrometheusErrorType.server, `server error: ${status}`)
      : error(PrometheusErrorType.client, `client error: ${status}`);
  }
  let parsed: unknown;
  try {
    parsed = status === 204 ? {} : JSON.parse(body);
  } catch (cause) {
    return error(PrometheusErrorType.badResponse, cause instanceof Error ? cause.message : String(cause));
  }
  if (!isRecord(parsed)) return error(PrometheusErrorType.badResponse, 'response body is not a JSON object');
  if (parsed.status === 'error') return error(String(parsed.errorType ?? ''), String(parsed.error ?? ''));
  if (apiError) return error(PrometheusErrorType.badResponse, 'inconsistent body for response code');
  return readQueryData(parsed.data, maxSeries);
}

/** The `data` member of a successful answer: `{resultType, result}`. */
export function readQueryData(data: unknown, maxSeries = MAX_RESULT_SERIES): QueryReading {
  if (!isRecord(data)) return error(PrometheusErrorType.badResponse, 'response has no data object');
  switch (data.resultType) {
    case 'scalar': {
      const value = sampleValue(data.result);
      if (value === undefined) return error(PrometheusErrorType.badResponse, 'malformed scalar result');
      return usable(value) ? { kind: 'values', values: [value] } : { kind: 'noData' };
    }
    case 'vector':
      return readVector(data.result, maxSeries);
    case 'string': {
      const text = Array.isArray(data.result) ? data.result[1] : undefined;
      if (typeof text !== 'string') return error(PrometheusErrorType.badResponse, 'malformed string result');
      const value = parseGoFloat(text);
      return value === undefined ? { kind: 'error', message: Message.nonNumericString(text) } : { kind: 'values', values: [value] };
    }
    case 'matrix':
      return { kind: 'error', message: Message.unsupportedResult('model.Matrix') };
    default:
      return error(PrometheusErrorType.badResponse, `unexpected value type ${JSON.stringify(String(data.resultType))}`);
  }
}

function readVector(result: unknown, maxSeries: number): QueryReading {
  if (!Array.isArray(result)) return error(PrometheusErrorType.badResponse, 'malformed vector result');
  if (result.length > maxSeries) {
    return error(PrometheusErrorType.badResponse, `result has ${result.length} series, more than the ${maxSeries} the plane reads`);
  }
  const values: number[] = [];
  for (const series of result) {
    const value = isRecord(series) ? sampleValue(series.value) : undefined;
    if (value === undefined) return error(PrometheusErrorType.badResponse, 'malformed vector sample');
    if (usable(value)) values.push(value);
  }
  return values.length === 0 ? { kind: 'noData' } : { kind: 'values', values };
}

/** `[<unix seconds>, "<value>"]`, the value as Go writes floats ("NaN", "+Inf", "1e-05"). */
function sampleValue(pair: unknown): number | undefined {
  if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[1] !== 'string') return undefined;
  return parseGoFloat(pair[1]);
}

/** NaN (0/0) and ±Inf (x/0) are no usable signal, never "infinitely bad" (upstream's `unusable`). */
function usable(value: number): boolean {
  return Number.isFinite(value);
}

function error(type: string, message: string): QueryReading {
  return { kind: 'error', message: `${type}: ${message}`, errorType: type };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
