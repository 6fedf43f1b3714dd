/**
 * Resolves a registered cluster's credentials in AWS. Kubeconfig records need nothing.
 * Secret records read the calling function's own secret from Secrets Manager (a kubeconfig,
 * or a token with its server and optional CA; see parseClusterSecret). EKS records take the
 * endpoint and CA from DescribeCluster and a fresh presigned token. Either way the server a
 * token goes to comes with it, never from the record. Results are cached per
 * cluster and function until they expire — tokens 14 minutes of their 15, secrets a few
 * minutes so a rotation is picked up — or until the API server refuses them (`forget`), and
 * concurrent resolutions of one cluster share a single call.
 */
import { DescribeClusterCommand } from '@aws-sdk/client-eks';
import type { EKSClient } from '@aws-sdk/client-eks';
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { InvalidInputError, UnavailableError } from '../../domain/errors';
import type { Clock } from '../../ports/clock';
import { systemClock } from '../../ports/clock';
import type { ClusterRecord } from '../../ports/store';
import type { ResolvedCredentials } from '../kubernetes/connection';
import { assertNoSharedSecret, clusterSecretName, parseClusterSecret } from './cluster-secret';
import type { AwsCredentialsProvider } from './eks-token';
import { createEksToken } from './eks-token';
import { mapAwsError } from './errors';

export const DEFAULT_SECRET_TTL_MS = 5 * 60_000;
export const DEFAULT_CLUSTER_INFO_TTL_MS = 60 * 60_000;

export interface AwsCredentialResolverOptions {
  secrets: SecretsManagerClient;
  /** One client, or one per region (an EKS record names its cluster's region). */
  eks: EKSClient | ((region: string) => EKSClient);
  /** The credentials EKS tokens are signed with: the function's role. */
  credentials: AwsCredentialsProvider;
  clock?: Clock;
  /** CLUSTER_SECRET_PREFIX: function F reads `<prefix><cluster-id>/F`; empty refuses every secret record. */
  secretPrefix: string;
  /** How long a secret's content is reused before it is read again. Default 5 minutes. */
  secretTtlMs?: number;
  /** How long an EKS cluster's endpoint and CA are reused. Default 1 hour. */
  clusterInfoTtlMs?: number;
}

export interface ClusterCredentialResolver {
  /** The credential `functionName` (its service name) uses for the record's cluster. */
  resolve(record: ClusterRecord, functionName: string | undefined): Promise<ResolvedCredentials>;
  /**
   * Drops `rejected`, a credential the API server answered 401 to (a rotated secret, a revoked
   * or expired token), so the next `resolve` reads the secret again or signs a new token. A
   * credential already replaced is left alone: many requests failing at once cost one re-read.
   */
  forget(record: ClusterRecord, functionName: string | undefined, rejected: ResolvedCredentials): void;
}

interface Expiring<T> {
  value: T;
  /** Epoch milliseconds. */
  expiresAt: number;
}

interface SingleFlightCache<T> {
  get(key: string, load: () => Promise<Expiring<T>>): Promise<T>;
  /** Drops the key's entry when it holds `value` (not a newer one, nor a load in flight). */
  forget(key: string, value: T): void;
}

/**
 * A cache of expiring values where concurrent misses on one key share one load. A pending
 * load never expires; a failed one is forgotten so the next call tries again.
 */
function createSingleFlightCache<T>(clock: Clock): SingleFlightCache<T> {
  const entries = new Map<string, { value: Promise<T>; expiresAt: number; settled?: T }>();
  return {
    get(key, load) {
      const hit = entries.get(key);
      if (hit && hit.expiresAt > clock.now()) return hit.value;
      const entry: { value: Promise<T>; expiresAt: number; settled?: T } = {
        expiresAt: Number.POSITIVE_INFINITY,
        value: load().then(
          (loaded) => {
            entry.expiresAt = loaded.expiresAt;
            entry.settled = loaded.value;
            return loaded.value;
          },
          (error: unknown) => {
            if (entries.get(key) === entry) entries.delete(key);
            throw error;
          },
        ),
      };
      entries.set(key, entry);
      return entry.value;
    },
    forget(key, value) {
      const entry = entries.get(key);
      if (entry && entry.settled === value) entries.delete(key);
    },
  };
}

interface ClusterEndpoint {
  server: string;
  caData: string;
}

/** Builds the resolver `createAppContext` takes for secret and EKS records. */
export function createAwsCredentialResolver(options: AwsCredentialResolverOptions): ClusterCredentialResolver {
  const clock = options.clock ?? systemClock;
  const secretTtlMs = options.secretTtlMs ?? DEFAULT_SECRET_TTL_MS;
  const clusterInfoTtlMs = options.clusterInfoTtlMs ?? DEFAULT_CLUSTER_INFO_TTL_MS;
  const eksFor = typeof options.eks === 'function' ? options.eks : () => options.eks as EKSClient;
  const resolved = createSingleFlightCache<ResolvedCredentials>(clock);
  const endpoints = createSingleFlightCache<ClusterEndpoint>(clock);

  async function readSecret(record: ClusterRecord, secretName: string): Promise<Expiring<ResolvedCredentials>> {
    let text: string | undefined;
    try {
      const output = await options.secrets.send(new GetSecretValueCommand({ SecretId: secretName }));
      text = output.SecretString ?? (output.SecretBinary ? Buffer.from(output.SecretBinary).toString('utf8') : undefined);
    } catch (error) {
      throw mapAwsError(error, { action: `cluster ${record.id}: read secret ${secretName}`, permission: 'secretsmanager:GetSecretValue', resource: `arn:aws:secretsmanager:<region>:<account>:secret:${secretName}-*` });
    }
    if (!text) throw new InvalidInputError(`cluster ${record.id}: secret ${secretName} is empty`);
    const expiresAt = clock.now() + secretTtlMs;
    return { value: { ...parseClusterSecret(record.id, text), expiresAt }, expiresAt };
  }

  async function describeCluster(clusterName: string, region: string): Promise<Expiring<ClusterEndpoint>> {
    let cluster;
    try {
      ({ cluster } = await eksFor(region).send(new DescribeClusterCommand({ name: clusterName })));
    } catch (error) {
      throw mapAwsError(error, {
        action: `describe EKS cluster ${clusterName} in ${region}`,
        permission: 'eks:DescribeCluster',
        resource: `arn:aws:eks:${region}:<account>:cluster/${clusterName}`,
      });
    }
    const server = cluster?.endpoint;
    const caData = cluster?.certificateAuthority?.data;
    if (!server || !caData) {
      // A cluster still being created has neither yet; a later delivery will find them.
      throw new UnavailableError(`EKS cluster ${clusterName} in ${region} has no endpoint yet (status ${cluster?.status ?? 'unknown'})`);
    }
    return { value: { server, caData }, expiresAt: clock.now() + clusterInfoTtlMs };
  }

  async function eksCredentials(clusterName: string, region: string): Promise<Expiring<ResolvedCredentials>> {
    const signToken = createEksToken({ clusterName, region, credentials: options.credentials, now: clock.now() }).catch((error: unknown) => {
      throw mapAwsError(error, { action: `sign an EKS token for ${clusterName}`, permission: 'sts:GetCallerIdentity', resource: '*' });
    });
    const [endpoint, token] = await Promise.all([endpoints.get(`${region}/${clusterName}`, () => describeCluster(clusterName, region)), signToken]);
    return { value: { token: token.token, server: endpoint.server, caData: endpoint.caData, expiresAt: token.expiresAt }, expiresAt: token.expiresAt };
  }

  /** The cache key and loader of a record's credential for one function; undefined for kubeconfig records. */
  function sourceOf(record: ClusterRecord, functionName: string | undefined): { key: string; load: () => Promise<Expiring<ResolvedCredentials>> } | undefined {
    const { credentials } = record;
    switch (credentials.kind) {
      case 'kubeconfig':
      case 'kubeconfig-file':
        return undefined;
      case 'secret': {
        assertNoSharedSecret(record.id, credentials, options.secretPrefix);
        const secretName = clusterSecretName(record.id, functionName, options.secretPrefix);
        return { key: `${record.id}\0secret\0${secretName}`, load: () => readSecret(record, secretName) };
      }
      case 'eks':
        // Signed with the process's role, whichever function asks: one token per cluster.
        return {
          key: `${record.id}\0eks\0${credentials.region}\0${credentials.clusterName}`,
          load: () => eksCredentials(credentials.clusterName, credentials.region),
        };
    }
  }

  return {
    async resolve(record, functionName) {
      const source = sourceOf(record, functionName);
      return source ? resolved.get(source.key, source.load) : {};
    },
    forget(record, functionName, rejected) {
      let source;
      try {
        source = sourceOf(record, functionName);
      } catch {
        // A record that cannot be resolved has nothing cached.
        return;
      }
      if (source) resolved.forget(source.key, rejected);
    },
  };
}
