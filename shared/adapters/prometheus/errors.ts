/**
 * Why a Prometheus query failed. Every message reads like the one upstream's querier
 * (client_golang) surfaces in `metricResults`, e.g. `bad_data: invalid parameter "query": …`
 * or `Post "http://…/api/v1/query": connection refused`. None carries a token or header.
 */
import { ControlPlaneError } from '../../domain/errors';

export class PrometheusQueryError extends ControlPlaneError {
  /** client_golang's error type, when the failure has one (`bad_data`, `server_error`, …). */
  readonly errorType: string | undefined;

  constructor(message: string, options: { retryable: boolean; errorType?: string; cause?: unknown }) {
    super(message, options);
    this.name = 'PrometheusQueryError';
    this.errorType = options.errorType;
  }
}

/** The address does not make a client: not a URL, or not http(s). Nothing was sent. */
export class PrometheusAddressError extends PrometheusQueryError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { retryable: false, ...options });
    this.name = 'PrometheusAddressError';
  }
}

/** The network fence refuses the request (a bearer token over plain http). Nothing was sent. */
export class PrometheusRefusedError extends PrometheusQueryError {
  constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'PrometheusRefusedError';
  }
}

/** No answer: connection refused, unknown host, reset. */
export class PrometheusUnreachableError extends PrometheusQueryError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { retryable: true, ...options });
    this.name = 'PrometheusUnreachableError';
  }
}

/** The sample's queryTimeout ran out before the answer came. */
export class PrometheusTimeoutError extends PrometheusQueryError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { retryable: true, ...options });
    this.name = 'PrometheusTimeoutError';
  }
}

/** An HTTP status without a Prometheus error body (`server_error: server error: 502`). */
export class PrometheusHttpError extends PrometheusQueryError {
  readonly status: number;

  constructor(message: string, status: number, errorType: string) {
    super(message, { retryable: status >= 500 || status === 429, errorType });
    this.name = 'PrometheusHttpError';
    this.status = status;
  }
}

/** A body that is not a Prometheus answer: not JSON, malformed, or over the size cap (`bad_response`). */
export class PrometheusResponseError extends PrometheusQueryError {
  constructor(message: string, errorType: string) {
    super(message, { retryable: false, errorType });
    this.name = 'PrometheusResponseError';
  }
}

/** Prometheus refused the query with `{status:"error", errorType, error}`, e.g. `bad_data` for a syntax error. */
export class PrometheusApiError extends PrometheusQueryError {
  constructor(message: string, errorType: string) {
    super(message, { retryable: errorType === 'timeout' || errorType === 'unavailable', errorType });
    this.name = 'PrometheusApiError';
  }
}
