/**
 * The AnalysisExecutor that samples a canary step's metrics from Prometheus, or from the
 * AWS source a binding names (CloudWatch's GetMetricData, Managed Prometheus' query API,
 * each request SigV4-signed with the function's role). One sample:
 * read the cluster's metrics configuration, resolve the canary's source, check it against
 * the network fence (network-fence.ts; a refused source is sent nothing and its Secret is
 * not read), read the bearer token, then render and run every metric's query at the sample time, all under the one
 * `queryTimeout`, and judge the results as upstream does. A sample is always produced:
 * an unreachable source, a refused query, a missing binding or Secret is an inconclusive
 * sample whose `metricResults` say why, never an exception and never a pass.
 */
import { AWS_CREDENTIALS_PREFIX, BEARER_TOKEN_PREFIX, Message, SampleEntry } from '../../domain/analysis/messages';
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
import { queryInstant, queryUrl, sourceUrl, type FetchFn } from './client';
import { fenceTarget, type LookupAllFn } from './pinned-fetch';
import { AWS_SIGNING_SERVICE, AwsMetricsType, DEFAULT_CLOUDWATCH_PERIOD_SECONDS } from '../../domain/analysis/metrics-config';
import { cloudWatchEndpoint, regionOfEndpoint } from '../../domain/analysis/cloudwatch-query';
import type { AwsCredentials, AwsCredentialsProvider } from '../aws-credentials/eks-token';
import { queryCloudWatch } from '../aws-metrics/cloudwatch';
import { signingFetch } from '../aws-metrics/signed-fetch';

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
  /** The function's own AWS credentials (its role), which AWS sources are signed with. */
  readonly awsCredentials?: AwsCredentialsProvider;
  /** The plane's region: an AWS source's when neither its binding nor its endpoint names one. */
  readonly awsRegion?: string;
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
  const resolved = resolveMetricsSource(request.prometheus, config);
  if ('problem' in resolved) return setupFailureSample(SampleEntry.prometheus, resolved.problem, at);
  const region = resolved.aws ? awsRegionOf(resolved, deps) : undefined;
  if (resolved.aws && !region) return setupFailureSample(SampleEntry.prometheus, Message.noAwsRegion(resolved.aws.type), at);
  const source = resolved.aws?.type === AwsMetricsType.cloudWatch && !resolved.address ? { ...resolved, address: cloudWatchEndpoint(region!) } : resolved;
  let url: URL;
  try {
    url = source.aws?.type === AwsMetricsType.cloudWatch ? sourceUrl(source.address) : queryUrl(source.address);
  } catch (error) {
    return setupFailureSample(SampleEntry.prometheus, Message.buildClient(source.address, messageOf(error)), at);
  }
  const candidate = { address: source.address, url, canaryAddress: source.canaryAddress === true, bearer: source.tokenRef !== undefined, signed: source.aws !== undefined };
  const refusal = checkMetricsSource(candidate, deps.fence);
  if (refusal) return setupFailureSample(SampleEntry[refusal.entry], refusal.message, at);
  const target = await fenceTarget(source.address, url, deps.fence.allowlist, deps.lookup);
  if ('refused' in target) return setupFailureSample(SampleEntry.prometheus, target.refused, at);
  const token = await readToken(deps, request.namespace, source);
  if (token.problem !== undefined) return setupFailureSample(SampleEntry.auth, BEARER_TOKEN_PREFIX + token.problem, at);
  let fetch = deps.fetch ?? target.fetch;
  if (source.aws) {
    const credentials = await readAwsCredentials(deps);
    if ('problem' in credentials) return setupFailureSample(SampleEntry.auth, AWS_CREDENTIALS_PREFIX + credentials.problem, at);
    fetch = signingFetch(fetch, { service: AWS_SIGNING_SERVICE[source.aws.type], region: region!, credentials, ...(deps.now ? { now: deps.now } : {}) });
  }

  const vars = templateVars(request);
  const time = new Date(Date.parse(at));
  // One budget for the whole sample: every query shares the same deadline.
  const signal = AbortSignal.timeout(config.queryTimeoutMs);
  const read = (metric: AnalysisMetric) => readMetric(metric, vars, { source, url, token: token.value, time, signal, fetch });
  const results = await Promise.all((request.analysis.metrics ?? []).map(async (metric) => judgeMetric(metric, await read(metric), at)));
  return judgeSample(results, at);
}

/** An AWS source's region: its binding's, else the one its endpoint names, else the plane's. */
function awsRegionOf(source: MetricsSource, deps: PrometheusExecutorDeps): string | undefined {
  if (source.aws?.region) return source.aws.region;
  let host = '';
  try {
    host = source.address ? new URL(source.address).hostname : '';
  } catch {
    host = '';
  }
  return regionOfEndpoint(host) ?? deps.awsRegion;
}

async function readAwsCredentials(deps: PrometheusExecutorDeps): Promise<AwsCredentials | { problem: string }> {
  if (!deps.awsCredentials) return { problem: 'this function has no AWS credentials to sign with' };
  try {
    return await deps.awsCredentials();
  } catch (error) {
    return { problem: messageOf(error) };
  }
}

async function readMetric(
  metric: AnalysisMetric,
  vars: QueryTemplateVars,
  how: { source: MetricsSource; url: URL; token: string | undefined; time: Date; signal: AbortSignal; fetch: FetchFn },
): Promise<QueryReading> {
  let query: string;
  try {
    query = renderQuery(metric.query, vars);
  } catch (error) {
    return templateErrorReading(error);
  }
  try {
    if (how.source.aws?.type === AwsMetricsType.cloudWatch) {
      const periodSeconds = how.source.aws.periodSeconds ?? DEFAULT_CLOUDWATCH_PERIOD_SECONDS;
      return await queryCloudWatch({ endpoint: how.url, expression: query, time: how.time, periodSeconds, fetch: how.fetch, signal: how.signal });
    }
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
