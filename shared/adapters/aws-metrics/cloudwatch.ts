/**
 * CloudWatch as a metrics source of analysis: one GetMetricData call per metric (AWS JSON
 * 1.0 over a signed fetch, see signed-fetch.ts), its answer read through the same size cap
 * as Prometheus answers, since a query over a whole account can return a great deal.
 */
import { AWS_JSON_CONTENT_TYPE, GET_METRIC_DATA_TARGET, getMetricDataBody, parseGetMetricDataResponse } from '../../domain/analysis/cloudwatch-query';
import type { QueryReading } from '../../domain/analysis/query-result';
import { MAX_RESPONSE_BYTES, readCapped, transportError, type FetchFn } from '../prometheus/client';

export interface CloudWatchQuery {
  /** The regional endpoint (or the binding's `serverAddress`). */
  readonly endpoint: URL;
  /** A Metrics Insights query or a metric math expression. */
  readonly expression: string;
  /** The sample time: the window ends here. */
  readonly time: Date;
  readonly periodSeconds: number;
  /** Signs and sends (signingFetch over the fenced fetch). */
  readonly fetch: FetchFn;
  readonly signal?: AbortSignal;
  readonly maxResponseBytes?: number;
}

/** Runs one GetMetricData call; throws a transport error (PrometheusQueryError's kinds) when nothing came back. */
export async function queryCloudWatch(request: CloudWatchQuery): Promise<QueryReading> {
  let response: Response;
  try {
    response = await request.fetch(request.endpoint, {
      method: 'POST',
      headers: { 'Content-Type': AWS_JSON_CONTENT_TYPE, 'X-Amz-Target': GET_METRIC_DATA_TARGET },
      body: getMetricDataBody(request.expression, request.time, request.periodSeconds),
      redirect: 'manual',
      ...(request.signal ? { signal: request.signal } : {}),
    });
  } catch (cause) {
    throw transportError(cause, 'POST', request.endpoint, request.signal);
  }
  const text = await readCapped(response, request.maxResponseBytes ?? MAX_RESPONSE_BYTES, request.endpoint, request.signal);
  return parseGetMetricDataResponse(response.status, text);
}
