import { describe, expect, it } from 'vitest';
import { createEksToken, EKS_TOKEN_PREFIX, stsHostFor } from '../../../shared/adapters/aws-credentials';

const credentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'tok/en+x=',
};
const SIGNED_AT = Date.parse('2026-01-02T03:04:05Z');

function decode(token: string): URL {
  expect(token.startsWith(EKS_TOKEN_PREFIX)).toBe(true);
  const encoded = token.slice(EKS_TOKEN_PREFIX.length);
  // base64url without padding, as the authenticator expects.
  expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
  return new URL(Buffer.from(encoded, 'base64url').toString('utf8'));
}

describe('Function: createEksToken', () => {
  it('presigns GetCallerIdentity for the cluster, as aws eks get-token does', async () => {
    // Act
    const { token, expiresAt } = await createEksToken({ clusterName: 'prod', region: 'eu-west-1', credentials, now: SIGNED_AT });

    // Assess
    const url = decode(token);
    expect(url.protocol).toBe('https:');
    expect(url.host).toBe('sts.eu-west-1.amazonaws.com');
    expect(url.pathname).toBe('/');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      Action: 'GetCallerIdentity',
      Version: '2011-06-15',
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
      'X-Amz-Credential': 'AKIDEXAMPLE/20260102/eu-west-1/sts/aws4_request',
      'X-Amz-Date': '20260102T030405Z',
      'X-Amz-Expires': '60',
      'X-Amz-SignedHeaders': 'host;x-k8s-aws-id',
      'X-Amz-Security-Token': 'tok/en+x=',
      // The same signature botocore's SigV4QueryAuth computes for these inputs (the AWS CLI's signer).
      'X-Amz-Signature': '0a506604381593f5870853d4c3f035a51d2ac198ea3a71bfb99b01cfbf6073f5',
    });
    expect(expiresAt).toBe(SIGNED_AT + 14 * 60_000);
  });

  it('is deterministic for fixed credentials and time, and binds the cluster name into the signature', async () => {
    // Act
    const first = await createEksToken({ clusterName: 'prod', region: 'eu-west-1', credentials, now: SIGNED_AT });
    const again = await createEksToken({ clusterName: 'prod', region: 'eu-west-1', credentials: async () => credentials, now: SIGNED_AT });
    const other = await createEksToken({ clusterName: 'staging', region: 'eu-west-1', credentials, now: SIGNED_AT });

    // Assess
    expect(again.token).toBe(first.token);
    expect(decode(other.token).searchParams.get('X-Amz-Signature')).not.toBe(decode(first.token).searchParams.get('X-Amz-Signature'));
  });

  it('omits the session token for long-term keys and expires with temporary credentials that end sooner', async () => {
    // Prepare
    const expiration = new Date(SIGNED_AT + 5 * 60_000);

    // Act
    const longTerm = await createEksToken({ clusterName: 'prod', region: 'us-east-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' }, now: SIGNED_AT });
    const shortLived = await createEksToken({ clusterName: 'prod', region: 'us-east-1', credentials: { ...credentials, expiration }, now: SIGNED_AT });

    // Assess
    expect(decode(longTerm.token).searchParams.has('X-Amz-Security-Token')).toBe(false);
    expect(shortLived.expiresAt).toBe(expiration.getTime());
  });

  it.each([
    ['eu-west-1', 'sts.eu-west-1.amazonaws.com'],
    ['cn-north-1', 'sts.cn-north-1.amazonaws.com.cn'],
  ])('signs for the regional STS endpoint of %s', (region, host) => {
    expect(stsHostFor(region)).toBe(host);
  });
});
