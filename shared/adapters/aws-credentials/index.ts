export { createAwsCredentialResolver, DEFAULT_CLUSTER_INFO_TTL_MS, DEFAULT_SECRET_TTL_MS } from './resolve-credentials';
export type { AwsCredentialResolverOptions, ClusterCredentialResolver } from './resolve-credentials';
export { createDefaultAwsCredentialResolver } from './clients';
export type { DefaultAwsCredentialResolverOptions } from './clients';
export { createEksToken, stsHostFor, EKS_CLUSTER_ID_HEADER, EKS_TOKEN_LIFETIME_MS, EKS_TOKEN_PREFIX, EKS_TOKEN_REFRESH_MS } from './eks-token';
export type { AwsCredentials, AwsCredentialsProvider, EksToken, EksTokenRequest } from './eks-token';
export { assertNoSharedSecret, clusterSecretName, parseClusterSecret, CLUSTER_SECRET_FORMATS } from './cluster-secret';
export { mapAwsError } from './errors';
export type { AwsCall } from './errors';
