/**
 * Resolves a registered cluster's credentials in AWS. Kubeconfig records need nothing.
 * Secret records read Secrets Manager (a kubeconfig, or a token with optional server and CA;
 * see parseClusterSecret). EKS records take the endpoint and CA from DescribeCluster and a
 * fresh presigned token. Results are cached per cluster until they expire — tokens 14 minutes
 * of their 15, secrets a few minutes so a rotation is picked up — and concurrent resolutions
 * of one cluster share a single call.
 */
import { DescribeClusterCommand } from '@aws-sdk/client-eks';
import type { EKSClient } from '@aws-sdk/client-eks';
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { InvalidInputError, UnavailableError } from '../../errors';
import type { Clock } from '../../ports/clock';
import { systemClock } from '../../ports/clock';
import type { ClusterRecord } from '../../ports/store';
import type { ResolvedCredentials } from '../kubernetes/connection';
import { assertSecretInPrefix, parseClusterSecret } from './cluster-secret';
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
  /** Secrets a record may name start with this (CLUSTER_SECRET_PREFIX); empty refuses every secret record. */
  secretPrefix: string;
  /** How long a secret's content is reused before it is read again. Default 5 minutes. */
  secretTtlMs?: number;
  /** How long an EKS cluster's endpoint and CA are reused. Default 1 hour. */
  clusterInfoTtlMs?: number;
}

export type ClusterCredentialResolver = (record: ClusterRecord) => Promise<ResolvedCredentials>;

interface Expiring<T> {
  value: T;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/**
 * A cache of expiring values where concurrent misses on one key share one load. A pending
 * load never expires; a failed one is forgotten so the next call tries again.
 */
function createSingleFlightCache<T>(clock: Clock): (key: string, load: () => Promise<Expiring<T>>) => Promise<T> {
  const entries = new Map<string, { value: Promise<T>; expiresAt: number }>();
  return (key, load) => {
    const hit = entries.get(key);
    if (hit && hit.expiresAt > clock.now()) return hit.value;
    const entry = {
      expiresAt: Number.POSITIVE_INFINITY,
      value: load().then(
        (loaded) => {
          entry.expiresAt = loaded.expiresAt;
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

  async function readSecret(record: ClusterRecord, secretArn: string): Promise<Expiring<ResolvedCredentials>> {
    let text: string | undefined;
    try {
      const output = await options.secrets.send(new GetSecretValueCommand({ SecretId: secretArn }));
      text = output.SecretString ?? (output.SecretBinary ? Buffer.from(output.SecretBinary).toString('utf8') : undefined);
    } catch (error) {
      throw mapAwsError(error, { action: `cluster ${record.id}: read secret ${secretArn}`, permission: 'secretsmanager:GetSecretValue', resource: secretArn });
    }
    if (!text) throw new InvalidInputError(`cluster ${record.id}: secret ${secretArn} is empty`);
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
    const [endpoint, token] = await Promise.all([endpoints(`${region}/${clusterName}`, () => describeCluster(clusterName, region)), signToken]);
    return { value: { token: token.token, server: endpoint.server, caData: endpoint.caData, expiresAt: token.expiresAt }, expiresAt: token.expiresAt };
  }

  return async (record) => {
    const { credentials } = record;
    switch (credentials.kind) {
      case 'kubeconfig':
        return {};
      case 'secret':
        assertSecretInPrefix(record.id, credentials.secretArn, options.secretPrefix);
        return resolved(`${record.id}\0secret\0${credentials.secretArn}`, () => readSecret(record, credentials.secretArn));
      case 'eks':
        return resolved(`${record.id}\0eks\0${credentials.region}\0${credentials.clusterName}`, () =>
          eksCredentials(credentials.clusterName, credentials.region),
        );
    }
  };
}
