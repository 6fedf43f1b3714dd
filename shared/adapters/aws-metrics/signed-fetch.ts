/**
 * A fetch that signs every request with SigV4 for one AWS service and region, as the SDK's
 * clients do: the method, path, query, body and headers (Host included) are signed with
 * the function's own credentials, resolved by the caller. Used for the AWS metric sources
 * of analysis (CloudWatch, Amazon Managed Service for Prometheus), which go through the
 * same fenced fetch as any other source rather than the SDK's own HTTP stack.
 */
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentials } from '../aws-credentials/eks-token';
import type { FetchFn } from '../prometheus/client';

export interface SigningScope {
  /** The SigV4 service name: `monitoring` for CloudWatch, `aps` for Managed Prometheus. */
  readonly service: string;
  readonly region: string;
  readonly credentials: AwsCredentials;
  /** The signing time; now by default. */
  readonly now?: () => Date;
}

const Sha256 = Hash.bind(null, 'sha256');

/** A URL's query as SigV4 signs it: each name once, repeated names as a list. */
export function signableQuery(url: URL): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of url.searchParams) {
    const known = query[name];
    query[name] = known === undefined ? value : [...(Array.isArray(known) ? known : [known]), value];
  }
  return query;
}

/** Wraps `fetchFn` so that every request it sends is signed for `scope`. Supports string bodies only. */
export function signingFetch(fetchFn: FetchFn, scope: SigningScope): FetchFn {
  const signer = new SignatureV4({ service: scope.service, region: scope.region, credentials: scope.credentials, sha256: Sha256, uriEscapePath: true });
  return async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const query = signableQuery(url);
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    const signed = await signer.sign(
      {
        method: init.method ?? 'GET',
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port ? { port: Number(url.port) } : {}),
        path: url.pathname,
        query,
        headers: { ...headers, host: url.host },
        body: typeof init.body === 'string' ? init.body : undefined,
      },
      { signingDate: scope.now?.() ?? new Date() },
    );
    // The fetch sets Host from the URL, to the value just signed.
    const { host: _host, ...sent } = signed.headers;
    return fetchFn(url, { ...init, headers: sent });
  };
}
