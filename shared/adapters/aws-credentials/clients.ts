import { EKSClient } from '@aws-sdk/client-eks';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { boundedRequestHandler } from '../aws-request-handler';
import type { Clock } from '../../ports/clock';
import type { AwsCredentialsProvider } from './eks-token';
import type { ClusterCredentialResolver } from './resolve-credentials';
import { createAwsCredentialResolver } from './resolve-credentials';

let functionCredentials: AwsCredentialsProvider | undefined;

/**
 * The function's own AWS credentials (its role, through the SDK's default chain), one
 * provider per process: it caches what it resolves until shortly before expiry.
 */
export function functionAwsCredentials(): AwsCredentialsProvider {
  functionCredentials ??= defaultProvider();
  return functionCredentials;
}

export interface DefaultAwsCredentialResolverOptions {
  /** Where the cluster secrets live (the functions' region). */
  region: string;
  /** CLUSTER_SECRET_PREFIX. */
  secretPrefix: string;
  clock?: Clock;
}

/**
 * The resolver a deployed function uses: the SDK's default credential chain (the function's
 * role), one Secrets Manager client and an EKS client per cluster region. Create it once per
 * process; nothing is called until a secret or EKS record is resolved.
 */
export function createDefaultAwsCredentialResolver(options: DefaultAwsCredentialResolverOptions): ClusterCredentialResolver {
  const credentials = functionAwsCredentials();
  const common = { credentials, maxAttempts: 3, retryMode: 'standard', requestHandler: boundedRequestHandler({ connectionTimeoutMs: 1_000, requestTimeoutMs: 5_000 }) } as const;
  const secrets = new SecretsManagerClient({ region: options.region, ...common });
  const eksClients = new Map<string, EKSClient>();
  const eks = (region: string): EKSClient => {
    let client = eksClients.get(region);
    if (!client) {
      client = new EKSClient({ region, ...common });
      eksClients.set(region, client);
    }
    return client;
  };
  return createAwsCredentialResolver({
    secrets,
    eks,
    credentials,
    secretPrefix: options.secretPrefix,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
}
