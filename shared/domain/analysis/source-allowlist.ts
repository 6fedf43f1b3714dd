/**
 * ANALYSIS_SOURCE_ALLOWLIST, the operator's exceptions to the network fence of canary
 * analysis (network-fence.ts). Every function reads it with its configuration, so a bad
 * value fails them all alike; only the functions that sample metrics apply the fence.
 */
import { isIP } from 'node:net';
import { InvalidInputError } from '../errors';

/** The plane's setting (an environment variable, read once by loadConfig). */
export const SOURCE_ALLOWLIST_VARIABLE = 'ANALYSIS_SOURCE_ALLOWLIST';

/** What the operator allows beyond the fence. */
export interface SourceAllowlist {
  /** `scheme://host[:port]` origins, normalised as URL.origin: a canary may name them, and they may resolve anywhere. */
  readonly origins: readonly string[];
  /** IP ranges (CIDR, or one address) a source may resolve into although they are private, loopback or link-local. */
  readonly ranges: readonly string[];
}

export const EMPTY_SOURCE_ALLOWLIST: SourceAllowlist = { origins: [], ranges: [] };

/** The family of an IP address, as node:net's BlockList names it; undefined for anything else. */
export function ipFamily(ip: string): 'ipv4' | 'ipv6' | undefined {
  const version = isIP(ip);
  return version === 4 ? 'ipv4' : version === 6 ? 'ipv6' : undefined;
}

/**
 * Reads ANALYSIS_SOURCE_ALLOWLIST: entries separated by commas or white space, each an
 * http(s) origin (`http://127.0.0.1:9090`, `https://prometheus.monitoring.svc`), an IP
 * address, or a CIDR range (`10.20.0.0/16`, `fd00::/8`). Throws InvalidInputError naming
 * the first entry that is none of these.
 */
export function parseSourceAllowlist(text: string | undefined): SourceAllowlist {
  const origins: string[] = [];
  const ranges: string[] = [];
  for (const entry of (text ?? '').split(/[\s,]+/).filter(Boolean)) {
    if (entry.includes('://')) origins.push(parseOrigin(entry));
    else ranges.push(parseRange(entry));
  }
  return { origins, ranges };
}

function parseOrigin(entry: string): string {
  let url: URL | undefined;
  try {
    url = new URL(entry);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.pathname.replace(/\/+$/, '') !== '' || url.search || url.username) {
    throw new InvalidInputError(`${SOURCE_ALLOWLIST_VARIABLE}: ${JSON.stringify(entry)} is not an http(s) origin (scheme://host[:port])`);
  }
  return url.origin;
}

function parseRange(entry: string): string {
  const [network = '', prefixText, extra] = entry.split('/');
  const family = ipFamily(network);
  const width = family === 'ipv4' ? 32 : 128;
  const prefix = prefixText === undefined ? width : Number(prefixText);
  if (!family || extra !== undefined || !/^\d+$/.test(prefixText ?? '0') || prefix > width) {
    throw new InvalidInputError(`${SOURCE_ALLOWLIST_VARIABLE}: ${JSON.stringify(entry)} is not an http(s) origin, an IP address or a CIDR range`);
  }
  return `${network}/${prefix}`;
}
