/**
 * The request handler settings of every AWS client the plane creates. A connection that
 * doesn't open, or a request that gets no answer, fails after its timeout (a retryable
 * TimeoutError, which the SDK's standard retry mode retries) instead of holding the
 * invocation, and the lease it runs under, until Lambda ends it. `@smithy/node-http-handler`
 * only logs a warning when `requestTimeout` passes unless `throwOnRequestTimeout` is set.
 */
export interface RequestTimeouts {
  /** How long opening a connection may take, in ms. */
  connectionTimeoutMs: number;
  /** How long a request may wait for its whole answer, in ms. */
  requestTimeoutMs: number;
}

export function boundedRequestHandler(timeouts: RequestTimeouts): { connectionTimeout: number; requestTimeout: number; throwOnRequestTimeout: true } {
  return { connectionTimeout: timeouts.connectionTimeoutMs, requestTimeout: timeouts.requestTimeoutMs, throwOnRequestTimeout: true };
}
