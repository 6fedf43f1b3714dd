/**
 * The admission webhook's credential: a token per cluster in the URL path, derived from
 * the webhook's own key rather than stored, so checking it needs neither the registry nor
 * a cluster.
 *
 *   token = base64url(HMAC-SHA256(key, "<cluster-id>"))
 *   URL   = <base>/clusters/<cluster-id>/<token>/validate/<kind>
 *
 * The path carries it because kube-apiserver allows no query string, fragment or userinfo
 * in `clientConfig.url`, and a Lambda function URL's IAM auth needs SigV4, which an API
 * server cannot sign. A token names one cluster: another cluster's token fails.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** The routes the function serves, one per webhook of the configuration. */
export const WebhookRoute = {
  inferenceService: 'inferenceservice',
  controllerRevision: 'controllerrevision',
} as const;
export type WebhookRouteName = (typeof WebhookRoute)[keyof typeof WebhookRoute];

const ROUTES: readonly string[] = Object.values(WebhookRoute);

/** Shortest key accepted: 256 bits, the HMAC's own strength. */
export const MIN_WEBHOOK_KEY_BYTES = 32;

/**
 * The key's bytes from its stored text (the secret's value, the local key file): the
 * text without surrounding whitespace, as UTF-8. Undefined when it is too short to use.
 */
export function webhookKeyFromText(text: string): Buffer | undefined {
  const key = Buffer.from(text.trim(), 'utf8');
  return key.byteLength < MIN_WEBHOOK_KEY_BYTES ? undefined : key;
}

/** The keys a token is checked against: the current one first, then any still accepted during a rotation. */
export interface WebhookKeys {
  current: Buffer;
  accepted: Buffer[];
}

/** A base64url SHA-256 digest: 43 characters, no padding. */
const TOKEN_FORM = /^[A-Za-z0-9_-]{43}$/;

function digest(key: Buffer, clusterId: string): Buffer {
  return createHmac('sha256', key).update(clusterId, 'utf8').digest();
}

/** The token of a cluster's webhook URL under `key`. */
export function deriveWebhookToken(key: Buffer, clusterId: string): string {
  return digest(key, clusterId).toString('base64url');
}

/**
 * True when `token` is the token of `clusterId` under any accepted key. The comparison is
 * over equal-length digests with `timingSafeEqual`, so its time tells nothing about how
 * much of a guess was right; the form check looks only at the caller's own input.
 */
export function verifyWebhookToken(keys: WebhookKeys, clusterId: string, token: string): boolean {
  if (!TOKEN_FORM.test(token)) return false;
  const presented = Buffer.from(token, 'base64url');
  let matched = false;
  // Every key is tried, matched or not, so the time does not say which key matched.
  for (const key of [keys.current, ...keys.accepted]) {
    if (timingSafeEqual(presented, digest(key, clusterId))) matched = true;
  }
  return matched;
}

/**
 * The header the front door (infra/front-door/viewer-request.js) adds to every call it lets
 * through, holding the origin secret: the function refuses a call without it, so the
 * function URL is of no use to anyone who calls it directly.
 */
export const ORIGIN_SECRET_HEADER = 'x-ome-origin-verify';

/** Whether `presented` is the origin secret, compared in constant time. */
export function verifyOriginSecret(expected: Buffer, presented: string | undefined): boolean {
  if (presented === undefined) return false;
  const bytes = Buffer.from(presented, 'utf8');
  return bytes.byteLength === expected.byteLength && timingSafeEqual(bytes, expected);
}

/**
 * A cluster's entry in the front door's key value store: the hex SHA-256 of its token under
 * `cluster/<id>`. The store holds digests, so reading it grants nothing; deleting the entry
 * revokes that cluster alone.
 */
export function frontDoorEntryOf(clusterId: string, token: string): { key: string; value: string } {
  return { key: `cluster/${clusterId}`, value: createHash('sha256').update(token, 'utf8').digest('hex') };
}

/** The URL a cluster registers for one webhook: `<baseUrl>/clusters/<id>/<token>/validate/<route>`. */
export function webhookUrlOf(baseUrl: string, clusterId: string, token: string, route: WebhookRouteName): string {
  return `${baseUrl.replace(/\/+$/, '')}/clusters/${encodeURIComponent(clusterId)}/${token}/validate/${route}`;
}

/** What a request path says, before the token is checked. */
export type WebhookPath =
  | { kind: 'route'; clusterId: string; token: string; route: WebhookRouteName }
  /** A webhook route without a credential (`/validate/...`, `/clusters/<id>/validate/...`). */
  | { kind: 'unauthenticated' }
  /** A `%` escape that does not decode. */
  | { kind: 'malformed' }
  | { kind: 'unknown' };

const AUTHENTICATED_PATH = /^\/clusters\/([^/]+)\/([^/]+)\/validate\/([^/]+)\/?$/;
const CREDENTIAL_FREE_PATH = /\/validate(?:\/[^/]*)?\/?$/;

/** Reads a function URL path; never throws, whatever the caller sent. */
export function parseWebhookPath(rawPath: string): WebhookPath {
  const match = AUTHENTICATED_PATH.exec(rawPath);
  if (!match) return CREDENTIAL_FREE_PATH.test(rawPath) ? { kind: 'unauthenticated' } : { kind: 'unknown' };
  const [, encodedId = '', token = '', route = ''] = match;
  if (!ROUTES.includes(route)) return { kind: 'unknown' };
  let clusterId: string;
  try {
    clusterId = decodeURIComponent(encodedId);
  } catch {
    return { kind: 'malformed' };
  }
  return { kind: 'route', clusterId, token, route: route as WebhookRouteName };
}
