/** The Prometheus analysis adapter: the executor, its cluster reads, and the HTTP client. */
export { createPrometheusExecutor, type PrometheusExecutorDeps } from './executor';
export { clusterMetricsConfigReader, clusterSecretReader, ConfigMaps, Secrets } from './cluster-reads';
export { MAX_RESPONSE_BYTES, queryInstant, queryUrl, type FetchFn, type InstantQuery } from './client';
export * from './errors';
export { fenceTarget, lookupAll, pinnedFetch, type FencedTarget, type LookupAllFn } from './pinned-fetch';
