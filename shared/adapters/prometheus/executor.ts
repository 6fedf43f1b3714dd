/**
 * The AnalysisExecutor that samples a canary step's metrics from Prometheus. One sample:
 * read the cluster's metrics configuration, resolve the canary's source, read the bearer
 * token, then render and run every metric's query at the sample time, all under the one
 * `queryTimeout`, and judge the results as upstream does. A sample is always produced:
 * an unreachable source, a refused query, a missing binding or Secret is an inconclusive
 * sample whose `metricResults` say why, never an exception and never a pass.
 */
import { BEARER_TOKEN_PREFIX, Message, SampleEntry } from '../../analysis/messages';
import { judgeMetric, judgeSample, setupFailureSample, templateErrorReading } from '../../analysis/judge';
import { resolveMetricsSource, type MetricsConfig, type MetricsSource } from '../../analysis/metrics-config';
import type { QueryReading } from '../../analysis/query-result';
import { perRevisionServiceName, renderQuery, type QueryTemplateVars } from '../../analysis/template';
import { NotFoundError } from '../../errors';
import type { AnalysisExecutor, AnalysisSampleRequest } from '../../ports/analysis';
import type { AnalysisVerdict } from '../../rollout/analysis';
import type { AnalysisMetric } from '../../rollout/types';
import { formatKubeTime } from '../../rollout/run';
import { queryInstant, queryUrl, type FetchFn } from './client';

export interface PrometheusExecutorDeps {
  readonly fetch?: FetchFn;
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
  try {
    queryUrl(source.address);
  } catch (error) {
    return setupFailureSample(SampleEntry.prometheus, Message.buildClient(source.address, messageOf(error)), at);
  }
  const token = await readToken(deps, request.namespace, source);
  if (token.problem !== undefined) return setupFailureSample(SampleEntry.auth, BEARER_TOKEN_PREFIX + token.problem, at);

  const vars = templateVars(request);
  const time = new Date(Date.parse(at));
  // One budget for the whole sample: every query shares the same deadline.
  const signal = AbortSignal.timeout(config.queryTimeoutMs);
  const read = (metric: AnalysisMetric) => readMetric(deps, metric, vars, { source, token: token.value, time, signal });
  const results = await Promise.all((request.analysis.metrics ?? []).map(async (metric) => judgeMetric(metric, await read(metric), at)));
  return judgeSample(results, at);
}

async function readMetric(
  deps: PrometheusExecutorDeps,
  metric: AnalysisMetric,
  vars: QueryTemplateVars,
  how: { source: MetricsSource; token: string | undefined; time: Date; signal: AbortSignal },
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
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
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
