/**
 * One analysis metric as a CloudWatch GetMetricData call (AWS JSON 1.0, the protocol the
 * SDK's CloudWatch client speaks), and its answer read as a QueryReading: each series'
 * latest datapoint in the window is one value, as each series of a Prometheus vector is.
 * Pure: the adapter signs and sends the body and hands back the status and text.
 */
import type { QueryReading } from './query-result';

/** The JSON 1.0 target of GetMetricData (CloudWatch's Smithy service name and version). */
export const GET_METRIC_DATA_TARGET = 'GraniteServiceVersion20100801.GetMetricData';
export const AWS_JSON_CONTENT_TYPE = 'application/x-amz-json-1.0';

/** Periods of datapoints a sample looks back over for the latest one (a metric published late still counts). */
export const LOOKBACK_PERIODS = 5;
/** Series of an answer the plane reads before calling it an error (a GROUP BY over a whole account). */
export const MAX_CLOUDWATCH_SERIES = 500;

/** The id of the one query a sample sends. */
const QUERY_ID = 'q';

/** The region's CloudWatch endpoint (China's regions live under amazonaws.com.cn). */
export function cloudWatchEndpoint(region: string): string {
  return `https://monitoring.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;
}

/**
 * The region an AWS endpoint names (`monitoring.eu-west-1.amazonaws.com`,
 * `aps-workspaces.us-east-1.amazonaws.com`), or undefined for any other host.
 */
export function regionOfEndpoint(host: string): string | undefined {
  return /^(?:monitoring|aps-workspaces)\.([a-z]{2}(?:-[a-z]+)+-\d+)\.amazonaws\.com(?:\.cn)?$/.exec(host)?.[1];
}

/**
 * The GetMetricData body for `expression` (a Metrics Insights query or a metric math
 * expression) at `time`: the LOOKBACK_PERIODS periods up to it, newest first.
 */
export function getMetricDataBody(expression: string, time: Date, periodSeconds: number): string {
  const end = Math.floor(time.getTime() / 1000);
  return JSON.stringify({
    MetricDataQueries: [{ Id: QUERY_ID, Expression: expression, Period: periodSeconds, ReturnData: true }],
    StartTime: end - LOOKBACK_PERIODS * periodSeconds,
    EndTime: end,
    ScanBy: 'TimestampDescending',
  });
}

/**
 * Reads a GetMetricData answer. An error status reads as `<code>: <message>` from the AWS
 * error body (`__type`, `message`); a series whose status is neither Complete nor
 * PartialData is an error; a series with no finite datapoint is skipped; no series with
 * one is no data.
 */
export function parseGetMetricDataResponse(status: number, body: string, maxSeries = MAX_CLOUDWATCH_SERIES): QueryReading {
  const parsed = parseJson(body);
  if (Math.floor(status / 100) !== 2) {
    const code = String(parsed?.__type ?? parsed?.code ?? `HTTP ${status}`).replace(/^.*#/, '');
    const message = String(parsed?.message ?? parsed?.Message ?? '');
    return { kind: 'error', message: `cloudwatch: ${code}${message ? `: ${message}` : ''}` };
  }
  if (!parsed) return { kind: 'error', message: 'cloudwatch: response body is not a JSON object' };
  const results = parsed.MetricDataResults;
  if (!Array.isArray(results)) return { kind: 'error', message: 'cloudwatch: response has no MetricDataResults' };
  if (results.length > maxSeries) return { kind: 'error', message: `cloudwatch: the query returned more than ${maxSeries} series` };
  const values: number[] = [];
  for (const result of results as unknown[]) {
    if (!isRecord(result)) continue;
    const statusCode = result.StatusCode ?? 'Complete';
    if (statusCode !== 'Complete' && statusCode !== 'PartialData') {
      return { kind: 'error', message: `cloudwatch: ${String(statusCode)}${messagesOf(parsed)}` };
    }
    const latest = latestValue(result.Timestamps, result.Values);
    if (latest !== undefined) values.push(latest);
  }
  return values.length > 0 ? { kind: 'values', values } : { kind: 'noData' };
}

/** The finite value with the newest timestamp (seconds), whatever order the answer lists them in. */
function latestValue(timestamps: unknown, values: unknown): number | undefined {
  if (!Array.isArray(timestamps) || !Array.isArray(values)) return undefined;
  let newest: { at: number; value: number } | undefined;
  for (let i = 0; i < Math.min(timestamps.length, values.length); i += 1) {
    const at = Number(timestamps[i]);
    const value = values[i];
    if (typeof value !== 'number' || !Number.isFinite(value) || !Number.isFinite(at)) continue;
    if (!newest || at > newest.at) newest = { at, value };
  }
  return newest?.value;
}

function messagesOf(parsed: Record<string, unknown>): string {
  const messages = Array.isArray(parsed.Messages) ? parsed.Messages.filter(isRecord).map((m) => String(m.Value ?? m.Code ?? '')) : [];
  const text = messages.filter(Boolean).join('; ');
  return text ? `: ${text}` : '';
}

function parseJson(body: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
