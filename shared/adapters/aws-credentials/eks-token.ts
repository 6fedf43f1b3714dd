/**
 * EKS bearer tokens, as `aws eks get-token` and aws-iam-authenticator make them: a presigned
 * STS GetCallerIdentity URL that names the cluster in a signed `x-k8s-aws-id` header. The API
 * server's authenticator replays the URL to STS and maps the caller's IAM identity to
 * Kubernetes groups (an EKS access entry). No call is made here: the token is pure signing.
 */
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** When temporary credentials stop working; a token signed with them dies then too. */
  expiration?: Date;
}

/** Resolves the process's AWS credentials (the SDK's default chain in a Lambda). */
export type AwsCredentialsProvider = () => Promise<AwsCredentials>;

export interface EksTokenRequest {
  clusterName: string;
  /** The cluster's region: the token is presigned for that region's STS endpoint. */
  region: string;
  credentials: AwsCredentials | AwsCredentialsProvider;
  /** Signing time, epoch milliseconds. */
  now: number;
}

export interface EksToken {
  /** `k8s-aws-v1.` followed by the unpadded base64url of the presigned URL. */
  token: string;
  /** Epoch milliseconds after which the token should be replaced (a minute before it dies). */
  expiresAt: number;
}

export const EKS_TOKEN_PREFIX = 'k8s-aws-v1.';
export const EKS_CLUSTER_ID_HEADER = 'x-k8s-aws-id';
/** The authenticator accepts a token for 15 minutes from its signing time, whatever X-Amz-Expires says. */
export const EKS_TOKEN_LIFETIME_MS = 15 * 60_000;
/** Replace tokens a minute early so a request started just before expiry still gets through. */
export const EKS_TOKEN_REFRESH_MS = 14 * 60_000;
// What aws-iam-authenticator and the AWS CLI put in the URL; the authenticator checks it is at most 60.
const PRESIGN_EXPIRES_SECONDS = 60;
const Sha256 = Hash.bind(null, 'sha256');

/** The regional STS host; China regions live under amazonaws.com.cn. */
export function stsHostFor(region: string): string {
  return `sts.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;
}

/** Presigns an EKS token for `clusterName` (the EKS cluster name, not the registry id). */
export async function createEksToken(request: EksTokenRequest): Promise<EksToken> {
  const credentials = typeof request.credentials === 'function' ? await request.credentials() : request.credentials;
  const hostname = stsHostFor(request.region);
  const signer = new SignatureV4({ service: 'sts', region: request.region, credentials, sha256: Sha256, uriEscapePath: true });
  const signed = await signer.presign(
    {
      method: 'GET',
      protocol: 'https:',
      hostname,
      path: '/',
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
      headers: { host: hostname, [EKS_CLUSTER_ID_HEADER]: request.clusterName },
    },
    { signingDate: new Date(request.now), expiresIn: PRESIGN_EXPIRES_SECONDS },
  );
  const query = Object.entries(signed.query ?? {})
    .flatMap(([name, value]) => (Array.isArray(value) ? value.map((item) => [name, item]) : value == null ? [] : [[name, value]]))
    .map(([name, value]) => `${encodeURIComponent(name ?? '')}=${encodeURIComponent(value ?? '')}`)
    .join('&');
  const url = `https://${hostname}/?${query}`;
  const token = EKS_TOKEN_PREFIX + Buffer.from(url, 'utf8').toString('base64url');
  const refreshAt = request.now + EKS_TOKEN_REFRESH_MS;
  const expiresAt = credentials.expiration ? Math.min(refreshAt, credentials.expiration.getTime()) : refreshAt;
  return { token, expiresAt };
}
