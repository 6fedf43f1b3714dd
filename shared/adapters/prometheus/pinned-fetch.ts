/**
 * Name resolution under the network fence, and a fetch that connects only to the address
 * the fence checked. The host is resolved once per sample (every address, as the fence
 * refuses a source if any of them is refused); the connection then goes to the first
 * checked address whatever the name resolves to later, so a DNS answer that changes
 * between the check and the request (a rebind) cannot move it. TLS still verifies the
 * certificate against the host name in the URL.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { checkResolvedAddresses, hostOf, type SourceAllowlist } from '../../domain/analysis/network-fence';
import type { FetchFn } from './client';

/** Resolves a host to all its addresses (dns.lookup with `all: true`). */
export type LookupAllFn = (host: string) => Promise<readonly LookupAddress[]>;

export const lookupAll: LookupAllFn = (host) =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });

/** A checked source: the fetch to query it with, or why the fence refuses it. */
export type FencedTarget = { readonly fetch: FetchFn } | { readonly refused: string };

/**
 * Resolves the source's host and checks every address against the fence. A host that does
 * not resolve is not refused: its fetch fails as the unresolved request would (`no such
 * host`), so each metric reports it as before.
 */
export async function fenceTarget(address: string, url: URL, allowlist: SourceAllowlist, lookup: LookupAllFn = lookupAll): Promise<FencedTarget> {
  let addresses: readonly LookupAddress[];
  try {
    addresses = await lookup(hostOf(url));
  } catch (error) {
    return { fetch: () => Promise.reject(error instanceof Error ? error : new Error(String(error))) };
  }
  const first = addresses[0];
  if (!first) return { fetch: () => Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostOf(url)}`), { code: 'ENOTFOUND' })) };
  const refused = checkResolvedAddresses({ address, url }, addresses.map((entry) => entry.address), allowlist);
  return refused ? { refused } : { fetch: pinnedFetch(first) };
}

/** Statuses whose Response may carry no body. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * A fetch over node:http(s) whose every connection goes to `pinned`. It supports what the
 * client uses: method, headers, a string body, an AbortSignal; redirects are never followed.
 */
export function pinnedFetch(pinned: LookupAddress): FetchFn {
  const lookup = ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options.all) callback(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  }) as unknown as LookupFunction;
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const headers = Object.fromEntries(new Headers(init.headers).entries());
      const request = send(url, { method: init.method ?? 'GET', headers, lookup, ...(init.signal ? { signal: init.signal } : {}) }, (response: IncomingMessage) => {
        const status = response.statusCode ?? 0;
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          for (const one of Array.isArray(value) ? value : [value ?? '']) responseHeaders.append(name, one);
        }
        const body = NULL_BODY_STATUSES.has(status) ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>);
        if (!body) response.resume();
        try {
          resolve(new Response(body, { status, headers: responseHeaders }));
        } catch (error) {
          response.destroy();
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
      request.on('error', reject);
      request.end(typeof init.body === 'string' ? init.body : undefined);
    });
}
