/**
 * The AnalysisExecutor that samples a canary step's metrics from Prometheus. One sample:
 * read the cluster's metrics configuration, resolve the canary's source, check it against
 * the network fence (network-fence.ts; a refused source is sent nothing and its Secret is
 * not read), read the bearer token, then render and run every metric's query at the sample time, all under the one
 * `queryTimeout`, and judge the results as upstream does. A sample is always produced:
 * an unreachable source, a refused query, a missing binding or Secret is an inconclusive
 * sample whose `metricResults` say why, never an exception and never a pass.
 */
import { BEARER_TOKEN_PREFIX, Message, SampleEntry } from '../../domain/analysis/messages';
import { judgeMetric, judgeSample, setupFailureSample, templateErrorReading } from '../../domain/analysis/judge';
import { resolveMetricsSource, type MetricsConfig, type MetricsSource } from '../../domain/analysis/metrics-config';
import type { QueryReading } from '../../domain/analysis/query-result';
import { perRevisionServiceName, renderQuery, type QueryTemplateVars } from '../../domain/analysis/template';
import { NotFoundError } from '../../domain/errors';
import type { AnalysisExecutor, AnalysisSampleRequest } from '../../ports/analysis';
import type { AnalysisVerdict } from '../../domain/rollout/analysis';
import type { AnalysisMetric } from '../../domain/rollout/types';
import { formatKubeTime } from '../../domain/rollout/run';
import { checkMetricsSource, type MetricsFence } from '../../domain/analysis/network-fence';
import { queryInstant, queryUrl, type FetchFn } from './client';
import { fenceTarget, type LookupAllFn } from './pinned-fetch';

export interface PrometheusExecutorDeps {
  /** Which sources may be queried with what: the plane's mode and ANALYSIS_SOURCE_ALLOWLIST. */
  readonly fence: MetricsFence;
  /**
   * Replaces the fetch pinned to the checked address (tests that stand in for a TLS
   * server); the fence still checks the source and its resolved addresses first.
   */
  readonly fetch?: FetchFn;
  /** Resolves a source's host to all its addresses; dns.lookup by default. */
  readonly lookup?: LookupAllFn;
  /**
   * The value of one key of a Secret in `namespace`. Return undefined when the Secret has
   * no such key; throw NotFoundError when the Secret does not exist. Read at every
   * sample, so a rotated token applies from the next one.
   */
  readSecret(namespace: string, name: string, key: string): Promise<string | undefined> | string | undefined;
  /** The cluster's analysis configuration (see parseMetricsConfig), read at every sample. */
  readConfig(): Promise<MetricsConfig> | MetricsConfig;
  readonly now?: () => Date;
}

/** Builds the Prometheus-backed executor. */
export function createPrometheusExecutor(deps: PrometheusExecutorDeps): AnalysisExecutor {
  const now = deps.now ?? (() => new Date());
  return {
    async sample(request: AnalysisSampleRequest): Promise<AnalysisVerdict> {
      // Whole seconds, as status stores them: a finer stamp would read newer than its own stored copy.
      const at = formatKubeTime(now());
      return sampleAt(deps, request, at);
    },
  };
}

async function sampleAt(deps: PrometheusExecutorDeps, request: AnalysisSampleRequest, at: string): Promise<AnalysisVerdict> {
  let config: MetricsConfig;
  try {
    config = await deps.readConfig();
  } catch (error) {
    return setupFailureSample(SampleEntry.config, messageOf(error), at);
  }
  if (config.problem) return setupFailureSample(SampleEntry.config, config.problem, at);
  const source = resolveMetricsSource(request.prometheus, config);
  if ('problem' in source) return setupFailureSample(SampleEntry.prometheus, source.problem, at);
  let url: URL;
  try {
    url = queryUrl(source.address);
  } catch (error) {
    return setupFailureSample(SampleEntry.prometheus, Message.buildClient(source.address, messageOf(error)), at);
  }
  const refusal = checkMetricsSource({ address: source.address, url, canaryAddress: source.canaryAddress === true, bearer: source.tokenRef !== undefined }, deps.fence);
  if (refusal) return setupFailureSample(SampleEntry[refusal.entry], refusal.message, at);
  const target = await fenceTarget(source.address, url, deps.fence.allowlist, deps.lookup);
  if ('refused' in target) return setupFailureSample(SampleEntry.prometheus, target.refused, at);
  const token = await readToken(deps, request.namespace, source);
  if (token.problem !== undefined) return setupFailureSample(SampleEntry.auth, BEARER_TOKEN_PREFIX + token.problem, at);

  const vars = templateVars(request);
  const time = new Date(Date.parse(at));
  // One budget for the whole sample: every query shares the same deadline.
  const signal = AbortSignal.timeout(config.queryTimeoutMs);
  const fetch = deps.fetch ?? target.fetch;
  const read = (metric: AnalysisMetric) => readMetric(metric, vars, { source, token: token.value, time, signal, fetch });
  const results = await Promise.all((request.analysis.metrics ?? []).map(async (metric) => judgeMetric(metric, await read(metric), at)));
  return judgeSample(results, at);
}

async function readMetric(
  metric: AnalysisMetric,
  vars: QueryTemplateVars,
  how: { source: MetricsSource; token: string | undefined; time: Date; signal: AbortSignal; fetch: FetchFn },
): Promise<QueryReading> {
  let query: string;
  try {
    query = renderQuery(metric.query, vars);
  } catch (error) {
    return templateErrorReading(error);
  }
  try {
    return await queryInstant({
      address: how.source.address,
      query,
      time: how.time,
      headers: how.source.headers,
      ...(how.token ? { token: how.token } : {}),
      signal: how.signal,
      fetch: how.fetch,
    });
  } catch (error) {
    return { kind: 'error', message: messageOf(error) };
  }
}

async function readToken(deps: PrometheusExecutorDeps, namespace: string, source: MetricsSource): Promise<{ value?: string; problem?: string }> {
  const ref = source.tokenRef;
  if (!ref) return {};
  try {
    const value = await deps.readSecret(namespace, ref.name, ref.key);
    if (value === undefined) return { problem: Message.secretKeyMissing(namespace, ref.name, ref.key) };
    return { value };
  } catch (error) {
    if (error instanceof NotFoundError) return { problem: Message.secretNotFound(namespace, ref.name) };
    return { problem: messageOf(error) };
  }
}

function templateVars(request: AnalysisSampleRequest): QueryTemplateVars {
  const stableRevision = request.stableRevision ?? '';
  return {
    Namespace: request.namespace,
    ISVCName: request.isvcName,
    Component: request.component,
    CanaryService: request.canaryService ?? perRevisionServiceName(request.isvcName, request.component, request.canaryRevision),
    StableService: request.stableService ?? perRevisionServiceName(request.isvcName, request.component, stableRevision),
    CanaryRevision: request.canaryRevision,
    StableRevision: stableRevision,
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
