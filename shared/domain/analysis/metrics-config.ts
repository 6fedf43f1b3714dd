/**
 * Where analysis metrics come from: the operator configuration upstream reads from the
 * `inferenceservice-config` ConfigMap in the OME namespace (the `canaryAnalysis` key for
 * defaults, the top-level `metricProviders` key for provider bindings), and the source a
 * canary's `prometheus` block resolves to against it. Pure.
 */
import { parseGoDuration } from '../go-duration';
import type { MetricsBinding } from '../rollout/analysis';
import type { AnalysisPrometheus } from '../rollout/types';
import { Message } from './messages';

/** The ConfigMap and its keys, as upstream names them. */
export const INFERENCESERVICE_CONFIG = 'inferenceservice-config';
export const CANARY_ANALYSIS_KEY = 'canaryAnalysis';
export const METRIC_PROVIDERS_KEY = 'metricProviders';
/** The older home of bindings, honoured only while the top-level key is absent. */
export const AUTOSCALER_POLICY_KEY = 'autoscalerPolicy';

/** Upstream's DefaultAnalysisQueryTimeout. */
export const DEFAULT_QUERY_TIMEOUT = '5s';
const NS_PER_MS = 1_000_000n;

/** A Secret key in the InferenceService's namespace holding a bearer token. */
export interface TokenRef {
  readonly name: string;
  readonly key: string;
}

/**
 * The AWS sources a binding may name with `type` (the plane's extension: upstream's
 * binding is always Prometheus). Both sign with the function's own role (SigV4).
 * - `cloudwatch`: the metric's `query` is a CloudWatch Metrics Insights query or metric
 *   math expression, run by GetMetricData over the binding's `period`; each series'
 *   latest datapoint is one value.
 * - `amp`: Amazon Managed Service for Prometheus, PromQL as for Prometheus; `serverAddress`
 *   is the workspace's endpoint (`https://aps-workspaces.<region>.amazonaws.com/workspaces/<id>`).
 */
export const AwsMetricsType = { cloudWatch: 'cloudwatch', amp: 'amp' } as const;
export type AwsMetricsType = (typeof AwsMetricsType)[keyof typeof AwsMetricsType];

/** The SigV4 service name each AWS source signs for. */
export const AWS_SIGNING_SERVICE: Readonly<Record<AwsMetricsType, string>> = { cloudwatch: 'monitoring', amp: 'aps' };

/** A CloudWatch binding's `period` when it sets none: one datapoint a minute, as standard metrics have. */
export const DEFAULT_CLOUDWATCH_PERIOD_SECONDS = 60;

/** An AWS source of a binding: which service, in which region (else the plane's own), over what period. */
export interface AwsMetricsBinding {
  readonly type: AwsMetricsType;
  readonly region?: string;
  /** CloudWatch only: the period of the datapoints, seconds. */
  readonly periodSeconds?: number;
}

/** One `metricProviders` binding (upstream's MetricProviderBinding, plus `aws` for the plane's AWS sources). */
export interface MetricProviderBinding {
  /** Empty for a CloudWatch binding that uses its region's endpoint. */
  readonly serverAddress: string;
  readonly authSecretRef?: TokenRef;
  readonly headers?: Readonly<Record<string, string>>;
  readonly aws?: AwsMetricsBinding;
}

/** The analysis settings of one cluster, read once per sample. */
export interface MetricsConfig {
  /** The fallback source for canaries that name none. */
  readonly bundledPrometheusAddress?: string;
  /** The binding for canaries that name no source; an unbound name falls back to the bundled address. */
  readonly defaultProvider?: string;
  readonly providers: Readonly<Record<string, MetricProviderBinding>>;
  /** How long all the queries of one sample may take together. */
  readonly queryTimeoutMs: number;
  /** Why part of the configuration could not be read; every sample then reads inconclusive with it. */
  readonly problem?: string;
}

/** The source one sample queries. */
export interface MetricsSource {
  readonly address: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly tokenRef?: TokenRef;
  /** The address is the canary's own `serverAddress` rather than an operator's source (see network-fence.ts). */
  readonly canaryAddress?: true;
  /** An AWS source, signed with the function's role; never with a bearer token. */
  readonly aws?: AwsMetricsBinding;
}

/**
 * Headers a canary's `prometheus.headers` may not set: they carry or redirect credentials,
 * which come only from `authRef` or the operator's binding. Compared without case.
 */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'cookie', 'host']);

export const DEFAULT_METRICS_CONFIG: MetricsConfig = { providers: {}, queryTimeoutMs: 5_000 };

/**
 * Reads the ConfigMap's data as upstream's loaders do. `canaryAnalysis` and
 * `metricProviders` are JSON; a `queryTimeout` that is not a positive Go duration falls
 * back to 5s. `fallbackAddress` (the plane's PROMETHEUS_ADDRESS) plays
 * `bundledPrometheusAddress` when the ConfigMap names none. A key that does not parse,
 * or a binding without `serverAddress`, is reported in `problem` (upstream stops the
 * reconcile there; the plane keeps the rest and reads every sample inconclusive).
 */
export function parseMetricsConfig(data: Readonly<Record<string, string>> | undefined, fallbackAddress?: string): MetricsConfig {
  const problems: string[] = [];
  const analysis = readJsonObject(data, CANARY_ANALYSIS_KEY, problems);
  const providers = readProviders(data, problems);
  const bundled = stringField(analysis, 'bundledPrometheusAddress') || fallbackAddress || '';
  const defaultProvider = stringField(analysis, 'defaultProvider');
  return {
    ...(bundled ? { bundledPrometheusAddress: bundled } : {}),
    ...(defaultProvider ? { defaultProvider } : {}),
    providers,
    queryTimeoutMs: positiveDurationMs(stringField(analysis, 'queryTimeout')) ?? DEFAULT_METRICS_CONFIG.queryTimeoutMs,
    ...(problems.length > 0 ? { problem: problems.join('; ') } : {}),
  };
}

function readProviders(data: Readonly<Record<string, string>> | undefined, problems: string[]): Record<string, MetricProviderBinding> {
  let raw: Record<string, unknown> | undefined;
  if (data && Object.hasOwn(data, METRIC_PROVIDERS_KEY)) {
    raw = readJsonObject(data, METRIC_PROVIDERS_KEY, problems);
  } else {
    const alias = readJsonObject(data, AUTOSCALER_POLICY_KEY, problems)?.metricProviders;
    raw = isRecord(alias) ? alias : undefined;
  }
  const providers: Record<string, MetricProviderBinding> = {};
  for (const [name, value] of Object.entries(raw ?? {})) {
    const binding = readBinding(value);
    if (typeof binding === 'string') {
      problems.push(`metric provider ${JSON.stringify(name)} ${binding}`);
      return {};
    }
    providers[name] = binding;
  }
  return providers;
}

/** One binding, or what is wrong with it (completing `metric provider "<name>" …`). */
function readBinding(value: unknown): MetricProviderBinding | string {
  const record = isRecord(value) ? value : {};
  const serverAddress = stringField(record, 'serverAddress');
  const aws = readAwsBinding(record);
  if (typeof aws === 'string') return aws;
  if (!serverAddress && aws?.type !== AwsMetricsType.cloudWatch) return 'has no serverAddress';
  const ref = record.authSecretRef;
  if (aws && ref !== undefined) return `of type ${aws.type} signs with the function's AWS role and takes no authSecretRef`;
  const headers = stringMap(record.headers);
  return {
    serverAddress,
    ...(isRecord(ref) ? { authSecretRef: { name: stringField(ref, 'name'), key: stringField(ref, 'key') } } : {}),
    ...(headers ? { headers } : {}),
    ...(aws ? { aws } : {}),
  };
}

const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;
/** GetMetricData's periods: high resolution, or whole minutes. */
const HIGH_RESOLUTION_PERIODS = new Set([1, 5, 10, 20, 30]);
const NS_PER_SECOND = 1_000_000_000n;

/** The binding's `type`, `region` and `period`: undefined for Prometheus (no `type`, or `prometheus`). */
function readAwsBinding(record: Record<string, unknown>): AwsMetricsBinding | undefined | string {
  const type = record.type ?? 'prometheus';
  if (type === 'prometheus') return undefined;
  if (type !== AwsMetricsType.cloudWatch && type !== AwsMetricsType.amp) {
    return `has type ${JSON.stringify(type)}: want "prometheus", "cloudwatch" or "amp"`;
  }
  const region = record.region;
  if (region !== undefined && (typeof region !== 'string' || !AWS_REGION.test(region))) return `has region ${JSON.stringify(region)}: want an AWS region such as "eu-west-1"`;
  let periodSeconds: number | undefined;
  if (record.period !== undefined) {
    if (type !== AwsMetricsType.cloudWatch) return `of type ${type} takes no period`;
    periodSeconds = periodSecondsOf(record.period);
    if (periodSeconds === undefined) return `has period ${JSON.stringify(record.period)}: want 1s, 5s, 10s, 20s, 30s or whole minutes`;
  }
  return {
    type,
    ...(typeof region === 'string' ? { region } : {}),
    ...(type === AwsMetricsType.cloudWatch ? { periodSeconds: periodSeconds ?? DEFAULT_CLOUDWATCH_PERIOD_SECONDS } : {}),
  };
}

function periodSecondsOf(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  let ns: bigint;
  try {
    ns = parseGoDuration(value);
  } catch {
    return undefined;
  }
  if (ns <= 0n || ns % NS_PER_SECOND !== 0n) return undefined;
  const seconds = Number(ns / NS_PER_SECOND);
  return HIGH_RESOLUTION_PERIODS.has(seconds) || seconds % 60 === 0 ? seconds : undefined;
}

function readJsonObject(data: Readonly<Record<string, string>> | undefined, key: string, problems: string[]): Record<string, unknown> | undefined {
  const text = data?.[key];
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed)) return parsed;
    if (parsed === null) return undefined;
    problems.push(`unable to parse ${key} config json: not a JSON object`);
  } catch (cause) {
    problems.push(`unable to parse ${key} config json: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
  return undefined;
}

function positiveDurationMs(text: string): number | undefined {
  if (!text) return undefined;
  try {
    const ns = parseGoDuration(text);
    return ns > 0n ? Number(ns / NS_PER_MS) || 1 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The source a canary's `prometheus` block queries. `serverAddress` is used as is (marked,
 * for the network fence);
 * `providerRef` takes its binding (the canary's `authRef` replaces the binding's token,
 * its `headers` override the binding's key by key); neither takes the
 * `defaultProvider` binding when set and bound, else `bundledPrometheusAddress`, with
 * the canary's own `authRef` and `headers`. A providerRef that is not bound (any more),
 * or no source at all, is a problem the sample reports. The canary's CREDENTIAL_HEADERS
 * are dropped: upstream lets an `Authorization` header win over the token, which would let
 * whoever edits the InferenceService replace the operator's credentials.
 */
export function resolveMetricsSource(prometheus: AnalysisPrometheus | undefined, config: MetricsConfig): MetricsSource | { readonly problem: string } {
  const own = ownAuth(prometheus);
  if (prometheus?.serverAddress) return { address: prometheus.serverAddress, ...own, canaryAddress: true };
  const refName = prometheus?.providerRef?.name;
  if (refName) {
    const binding = lookup(config.providers, refName);
    return binding ? fromBinding(binding, own) : { problem: Message.providerUnbound(refName) };
  }
  const fallback = config.defaultProvider ? lookup(config.providers, config.defaultProvider) : undefined;
  if (fallback) return fromBinding(fallback, own);
  if (config.bundledPrometheusAddress) return { address: config.bundledPrometheusAddress, ...own };
  return { problem: Message.noSource };
}

/**
 * What this cluster can evaluate, for plan parking: every bound provider name, and an
 * executor when canaries that name no source have a default one (a bound
 * `defaultProvider`, or a bundled address). A configuration that does not read binds
 * nothing, so new plans park instead of sampling against half a configuration.
 */
export function metricsBinding(config: MetricsConfig): MetricsBinding {
  if (config.problem) return { boundProviders: new Set(), executor: false };
  const defaultBound = config.defaultProvider !== undefined && lookup(config.providers, config.defaultProvider) !== undefined;
  return { boundProviders: new Set(Object.keys(config.providers)), executor: defaultBound || Boolean(config.bundledPrometheusAddress) };
}

function ownAuth(prometheus: AnalysisPrometheus | undefined): { headers: Record<string, string>; tokenRef?: TokenRef } {
  const ref = prometheus?.authRef;
  const headers = Object.fromEntries(Object.entries(prometheus?.headers ?? {}).filter(([name]) => !CREDENTIAL_HEADERS.has(name.toLowerCase())));
  return { headers, ...(ref ? { tokenRef: { name: ref.name ?? '', key: ref.key } } : {}) };
}

function fromBinding(binding: MetricProviderBinding, own: { headers: Record<string, string>; tokenRef?: TokenRef }): MetricsSource {
  // An AWS source signs with the function's role: no token is read, and CloudWatch takes no headers.
  if (binding.aws) {
    const headers = binding.aws.type === AwsMetricsType.amp ? { ...(binding.headers ?? {}), ...own.headers } : {};
    return { address: binding.serverAddress, headers, aws: binding.aws };
  }
  const tokenRef = own.tokenRef ?? binding.authSecretRef;
  return { address: binding.serverAddress, headers: { ...(binding.headers ?? {}), ...own.headers }, ...(tokenRef ? { tokenRef } : {}) };
}

function lookup(providers: Readonly<Record<string, MetricProviderBinding>>, name: string): MetricProviderBinding | undefined {
  return Object.hasOwn(providers, name) ? providers[name] : undefined;
}

function stringField(record: Record<string, unknown> | undefined, field: string): string {
  const value = record?.[field];
  return typeof value === 'string' ? value : '';
}

function stringMap(value: unknown): Record<string, string> | undefined {
  if (!isRecord(value)) return undefined;
  const out: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value)) if (typeof entry === 'string') out[key] = entry;
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
