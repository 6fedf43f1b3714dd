/**
 * The network fence of canary analysis: which metrics sources the plane may query, with
 * which credentials. A canary's `prometheus` block is written by whoever may edit the
 * InferenceService, and its token comes from a Secret they may not be able to read, so
 * the plane must not become their deputy: no bearer token over plain http, no private,
 * loopback, link-local or unspecified address unless the plane's operator lists it, and
 * in deployed mode no canary-chosen address at all unless listed. Pure: the adapter
 * resolves host names and passes the addresses in.
 */
import { BlockList } from 'node:net';
import { InvalidInputError } from '../errors';
import { ipFamily, SOURCE_ALLOWLIST_VARIABLE, type SourceAllowlist } from './source-allowlist';

export { EMPTY_SOURCE_ALLOWLIST, parseSourceAllowlist, SOURCE_ALLOWLIST_VARIABLE, type SourceAllowlist } from './source-allowlist';

/** Where the plane runs (shared/app/config.ts' ControlPlaneMode, repeated to keep this module free of it). */
export type FenceMode = 'deployed' | 'local';

export interface MetricsFence {
  readonly mode: FenceMode;
  readonly allowlist: SourceAllowlist;
}

/** The kinds of address the fence refuses unless allowed; `public` passes. */
export type AddressClass = 'public' | 'private' | 'loopback' | 'link-local' | 'unspecified';

const BLOCKED_RANGES: ReadonlyArray<readonly [AddressClass, string, number, 'ipv4' | 'ipv6']> = [
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['loopback', '::1', 128, 'ipv6'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  // IPv6's unique local addresses are its private ranges.
  ['private', 'fc00::', 7, 'ipv6'],
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['link-local', 'fe80::', 10, 'ipv6'],
];

const BLOCKED = BLOCKED_RANGES.map(([kind, network, prefix, family]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { kind, list };
});

/** The class of one IP address (v4, v6, or v4-mapped v6, which counts as its v4 address). */
export function classifyAddress(ip: string): AddressClass {
  const family = ipFamily(ip);
  if (!family) throw new InvalidInputError(`${JSON.stringify(ip)} is not an IP address`);
  return BLOCKED.find(({ list }) => list.check(ip, family))?.kind ?? 'public';
}

/** Why the fence refuses a source before anything is resolved or read, and the status entry to report it under. */
export interface FenceRefusal {
  readonly entry: 'prometheus' | 'auth';
  readonly message: string;
}

/** A source as the fence sees it before resolving its host. */
export interface FenceCandidate {
  /** The source's base address, as configured. */
  readonly address: string;
  /** Its query URL (queryUrl): only its protocol and origin matter here. */
  readonly url: URL;
  /** The address is the canary's own `serverAddress`, not an operator's source. */
  readonly canaryAddress: boolean;
  /** A bearer token would be sent. */
  readonly bearer: boolean;
  /** Requests would be SigV4-signed with the function's role (an AWS source): its session token goes in a header. */
  readonly signed?: boolean;
}

type FenceCheck = (candidate: FenceCandidate, fence: MetricsFence) => FenceRefusal | undefined;

/** The checks that need no name resolution, in order; the first refusal wins. */
const SOURCE_CHECKS: ReadonlyArray<FenceCheck> = [
  function canaryAddressInDeployedMode(candidate, fence) {
    if (!candidate.canaryAddress || fence.mode !== 'deployed' || fence.allowlist.origins.includes(candidate.url.origin)) return undefined;
    return { entry: 'prometheus', message: FenceMessage.canaryAddress(candidate.address) };
  },
  function bearerOverPlainHttp(candidate) {
    if (!candidate.bearer || candidate.url.protocol !== 'http:') return undefined;
    return { entry: 'auth', message: FenceMessage.plainHttpBearer(candidate.address) };
  },
  function signedOverPlainHttp(candidate) {
    if (!candidate.signed || candidate.url.protocol !== 'http:') return undefined;
    return { entry: 'auth', message: FenceMessage.plainHttpSigned(candidate.address) };
  },
];

/** Why a source may not be queried as configured, or nothing. Applies in both modes except the deployed-only check. */
export function checkMetricsSource(candidate: FenceCandidate, fence: MetricsFence): FenceRefusal | undefined {
  for (const check of SOURCE_CHECKS) {
    const refusal = check(candidate, fence);
    if (refusal) return refusal;
  }
  return undefined;
}

/**
 * Why a source whose host resolved to `addresses` may not be queried, or nothing: any
 * address in a refused class and not allowed refuses the whole source (a host name with
 * one private address could be answered from it). An origin in the allowlist may resolve
 * anywhere.
 */
export function checkResolvedAddresses(candidate: Pick<FenceCandidate, 'address' | 'url'>, addresses: readonly string[], allowlist: SourceAllowlist): string | undefined {
  if (allowlist.origins.includes(candidate.url.origin)) return undefined;
  const allowed = allowedRanges(allowlist);
  for (const address of addresses) {
    const kind = classifyAddress(address);
    if (kind === 'public') continue;
    const family = ipFamily(address);
    if (family && allowed.check(address, family)) continue;
    return FenceMessage.blockedAddress(candidate.address, hostOf(candidate.url), address, kind);
  }
  return undefined;
}

function allowedRanges(allowlist: SourceAllowlist): BlockList {
  const list = new BlockList();
  for (const range of allowlist.ranges) {
    const [network = '', prefix] = range.split('/');
    const family = ipFamily(network);
    // A range without a prefix is its one address, never the whole address space.
    if (family) list.addSubnet(network, prefix === undefined ? (family === 'ipv4' ? 32 : 128) : Number(prefix), family);
  }
  return list;
}

/** The URL's host without IPv6 brackets, as name resolution takes it. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** What users read in `metricResults` when the fence refuses a source. */
export const FenceMessage = {
  plainHttpBearer: (address: string) => `refusing to send a bearer token over plain http to ${address}: use https`,
  plainHttpSigned: (address: string) => `refusing to send requests signed with the function's AWS credentials over plain http to ${address}: use https`,
  canaryAddress: (address: string) =>
    `refusing the canary's own serverAddress ${address}: in deployed mode metrics come from metricProviders bindings (providerRef) unless ${SOURCE_ALLOWLIST_VARIABLE} lists the origin`,
  blockedAddress: (address: string, host: string, ip: string, kind: AddressClass) =>
    `refusing to query ${address}: ${host === ip ? ip : `${host} resolves to ${ip}`}, ${kind === 'unspecified' ? 'an' : 'a'} ${kind} address; ${SOURCE_ALLOWLIST_VARIABLE} must list it to allow it`,
} as const;
