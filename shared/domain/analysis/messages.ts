/**
 * What users read in `status.components.<c>.canary.metricResults` when a metric cannot be
 * judged. Spelled as upstream's evaluator writes them (OME `canary/analysis/evaluate.go`,
 * `canary/sampler.go`, `canary/analysis_sampler.go`), so status reads the same on both.
 */

/** An empty vector, or only NaN/±Inf series (a ratio over zero requests). */
export const NO_DATA_MESSAGE = 'no data';

/** Prefix of a metric whose query template does not render. */
export const TEMPLATE_ERROR_PREFIX = 'template error: ';

/** Prefix of the one `auth` entry when the authRef token cannot be read. */
export const BEARER_TOKEN_PREFIX = 'resolve bearer token: ';

/** Prefix of the one `auth` entry when the function's AWS credentials, which AWS sources are signed with, cannot be read. */
export const AWS_CREDENTIALS_PREFIX = 'resolve AWS credentials: ';

/** Prefix of a metric whose threshold is not a number (admission rejects these; a slip reads inconclusive). */
export const INVALID_THRESHOLD_PREFIX = 'invalid threshold: ';

/** Names of the single entry a sample carries when it fails before any metric is queried. */
export const SampleEntry = {
  /** The authRef (or a binding's authSecretRef) token could not be read. */
  auth: 'auth',
  /** No client could be built for the source: no address, a malformed one, or an unbound provider. */
  prometheus: 'prometheus',
  /** The operator configuration (`canaryAnalysis`, `metricProviders`) does not parse. */
  config: 'config',
} as const;

export const Message = {
  secretNotFound: (namespace: string, name: string) => `secret ${namespace}/${name} not found`,
  secretKeyMissing: (namespace: string, name: string, key: string) => `secret ${namespace}/${name} has no key ${JSON.stringify(key)}`,
  buildClient: (address: string, reason: string) => `build client for ${JSON.stringify(address)}: ${reason}`,
  /** Upstream's ProviderUnbound text, shared with plan parking (findUnboundProvider). */
  providerUnbound: (name: string) => `metric provider "${name}" is not bound in this cluster's metricProviders configuration`,
  noSource:
    'no metrics source: the canary sets no prometheus.serverAddress or providerRef, and canaryAnalysis sets no bundledPrometheusAddress or bound defaultProvider',
  noAwsRegion: (type: string) => `metric provider of type ${type} names no region, and the plane has none: set "region" in its metricProviders binding`,
  unsupportedResult: (type: string) => `unsupported prometheus result type ${type} (expected scalar or vector)`,
  nonNumericString: (value: string) => `non-numeric string result ${JSON.stringify(value)}`,
} as const;
