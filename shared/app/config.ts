/**
 * Configuration, read once at start into a typed object. Functions call `loadConfig` on
 * their first invocation (never at import time), `npm start` builds the same object from
 * its flags, and tests construct it directly.
 */
import type { MetricsFence } from '../domain/analysis/network-fence';
import { parseSourceAllowlist, SOURCE_ALLOWLIST_VARIABLE } from '../domain/analysis/source-allowlist';
import { InvalidInputError } from '../domain/errors';
import { parseDurationSetting } from '../domain/go-duration';
import { DEFAULT_OME_NAMESPACE } from '../domain/vocabulary';
import { FUNCTION_NAMES, type ControlPlaneConfig, type ControlPlaneMode, type FunctionName } from '../ports/config';

export { FUNCTION_NAMES, type ControlPlaneConfig, type ControlPlaneMode, type FunctionName } from '../ports/config';

/** CONTROL_PLANE_MODE: `deployed` outside Lambda forces deployed mode; `local` is refused inside a Lambda. */
export const MODE_VARIABLE = 'CONTROL_PLANE_MODE';

type Env = Record<string, string | undefined>;

function readInt(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new InvalidInputError(`${name}=${JSON.stringify(raw)} is not an integer >= ${min}`);
  }
  return value;
}

/** controller-runtime's defaults for a client's QPS and burst. */
export const DEFAULT_KUBE_API_QPS = 20;
export const DEFAULT_KUBE_API_BURST = 30;

function readPositiveNumber(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new InvalidInputError(`${name}=${JSON.stringify(raw)} is not a number > 0`);
  return value;
}

function readBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new InvalidInputError(`${name}=${JSON.stringify(raw)} must be true or false`);
}

function required(env: Env, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') throw new InvalidInputError(`${name} is not set`);
  return value;
}

/** True for a known function service name. */
export function isFunctionName(value: string | undefined): value is FunctionName {
  return (FUNCTION_NAMES as readonly string[]).includes(value ?? '');
}

/**
 * Lambda (the runtime always sets AWS_LAMBDA_FUNCTION_NAME) is always deployed, whatever
 * CONTROL_PLANE_MODE says: a changed variable must not unlock the local-only credentials.
 * Elsewhere the process is local (`npm start`, tests) unless CONTROL_PLANE_MODE=deployed.
 */
function readMode(env: Env): ControlPlaneMode {
  const raw = env[MODE_VARIABLE];
  if (raw !== undefined && raw !== '' && raw !== 'local' && raw !== 'deployed') {
    throw new InvalidInputError(`${MODE_VARIABLE}=${JSON.stringify(raw)} must be local or deployed`);
  }
  if (env.AWS_LAMBDA_FUNCTION_NAME) {
    if (raw === 'local') throw new InvalidInputError(`${MODE_VARIABLE}=local is refused in Lambda (${env.AWS_LAMBDA_FUNCTION_NAME}); remove it: a deployed function always runs in deployed mode`);
    return 'deployed';
  }
  return raw === 'deployed' ? 'deployed' : 'local';
}

function readFunctionName(env: Env, mode: ControlPlaneMode): FunctionName | undefined {
  const raw = env.POWERTOOLS_SERVICE_NAME;
  if (raw === undefined || raw === '') {
    if (mode === 'deployed' && env.AWS_LAMBDA_FUNCTION_NAME) {
      throw new InvalidInputError(`POWERTOOLS_SERVICE_NAME is not set; set it to the function's name (${FUNCTION_NAMES.join(', ')}): it picks the function's cluster secrets`);
    }
    return undefined;
  }
  if (!isFunctionName(raw)) throw new InvalidInputError(`POWERTOOLS_SERVICE_NAME=${JSON.stringify(raw)} is not one of ${FUNCTION_NAMES.join(', ')}`);
  return raw;
}

/** Builds the configuration from environment variables; throws InvalidInputError naming the bad one. */
export function loadConfig(env: Env): ControlPlaneConfig {
  const mode = readMode(env);
  const functionName = readFunctionName(env, mode);
  const config: ControlPlaneConfig = {
    mode,
    ...(functionName === undefined ? {} : { functionName }),
    tableName: required(env, 'TABLE_NAME'),
    eventBusName: env.EVENT_BUS_NAME || 'default',
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    omeNamespace: env.OME_NAMESPACE || DEFAULT_OME_NAMESPACE,
    revisionRetention: readInt(env, 'RUNTIME_REVISION_RETENTION', 10, 0),
    revisionGracePeriodMs: parseDurationSetting('RUNTIME_REVISION_GRACE_PERIOD', env.RUNTIME_REVISION_GRACE_PERIOD || '24h'),
    renderWorkloads: readBool(env, 'RENDER_WORKLOADS', true),
    leaseTtlMs: parseDurationSetting('LEASE_TTL', env.LEASE_TTL || '30s'),
    maxConflictRetries: readInt(env, 'MAX_CONFLICT_RETRIES', 5, 0),
    clusterSecretPrefix: env.CLUSTER_SECRET_PREFIX ?? '',
    forwarderShards: readInt(env, 'FORWARDER_SHARDS', 1, 1),
    forwarderLeasePollMs: parseDurationSetting('FORWARDER_LEASE_POLL', env.FORWARDER_LEASE_POLL || '1s'),
    kubeApiQps: readPositiveNumber(env, 'KUBE_API_QPS', DEFAULT_KUBE_API_QPS),
    kubeApiBurst: readInt(env, 'KUBE_API_BURST', DEFAULT_KUBE_API_BURST, 1),
  };
  if (env.SQS_ENDPOINT) config.sqsEndpoint = env.SQS_ENDPOINT;
  if (env.HINT_QUEUE_URL) config.hintQueueUrl = env.HINT_QUEUE_URL;
  if (env.DYNAMODB_ENDPOINT) config.dynamoDbEndpoint = env.DYNAMODB_ENDPOINT;
  if (env.EVENTBRIDGE_ENDPOINT) config.eventBridgeEndpoint = env.EVENTBRIDGE_ENDPOINT;
  if (env.PROMETHEUS_ADDRESS) config.prometheusAddress = env.PROMETHEUS_ADDRESS;
  if (env[SOURCE_ALLOWLIST_VARIABLE]) config.analysisSourceAllowlist = parseSourceAllowlist(env[SOURCE_ALLOWLIST_VARIABLE]);
  if (env.FORWARDER_MAX_RUNTIME) config.forwarderMaxRuntimeMs = parseDurationSetting('FORWARDER_MAX_RUNTIME', env.FORWARDER_MAX_RUNTIME);
  return config;
}

/** The network fence of canary analysis for this process: its mode (local when unset) and allowlist. */
export function metricsFenceOf(config: ControlPlaneConfig): MetricsFence {
  return { mode: config.mode ?? 'local', allowlist: config.analysisSourceAllowlist ?? { origins: [], ranges: [] } };
}
