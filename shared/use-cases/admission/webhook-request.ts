/**
 * The admission webhook as an HTTP endpoint: authentication, limits and a time budget in
 * front of the review itself (review-admission.ts).
 *
 * In order, each step before anything that costs more:
 * 0. behind a front door, its origin secret (403): a call that did not come through it;
 * 1. the path's shape (404 unknown, 400 a `%` escape that does not decode, 401 a webhook
 *    route without a token);
 * 2. the token against the webhook's keys (403): nothing reads the registry or a cluster
 *    before this;
 * 3. the method (405), the body's size (413), the AdmissionReview envelope (400);
 * 4. the review, raced against the time budget.
 *
 * Every rejection has a fixed body that names nothing of the caller's request (neither
 * whether the cluster is registered nor any error text); the detail goes to the log.
 * A review that cannot finish (the budget ran out, the runtime could not be read) is
 * answered as the failure policy says: denied under Fail, admitted with a warning under
 * Ignore, in either case before the API server's own timeout.
 */
import {
  parseAdmissionReview,
  reviewAdmissionRequest,
  respond,
  MalformedReviewError,
  type AdmissionReviewResponse,
  type ReviewRequest,
  type RuntimeLookup,
} from './review-admission';
import { ORIGIN_SECRET_HEADER, parseWebhookPath, verifyOriginSecret, verifyWebhookToken, type WebhookKeys } from '../../domain/webhook/webhook-token';
import type { WebhookFailurePolicy, WebhookSettings } from '../../domain/webhook/webhook-settings';
import type { ClusterMode } from '../../ports/store';

export interface WebhookHttpRequest {
  method: string;
  /** The raw path, as the function URL received it (still percent-encoded). */
  path: string;
  /** The API server appends `?timeout=<n>s`, its `timeoutSeconds`. */
  query?: Record<string, string | undefined> | undefined;
  body: string;
  isBase64Encoded?: boolean;
  /** Header names in lower case, as function URLs pass them. */
  headers?: Record<string, string | undefined>;
}

export interface WebhookHttpResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

export interface WebhookLogger {
  warn(message: string, details: Record<string, unknown>): void;
  error(message: string, details: Record<string, unknown>): void;
}

/** Starts a timer; `expired` settles when it fires, `cancel` stops it. */
export type DeadlineTimer = (ms: number) => { expired: Promise<void>; cancel(): void };

export interface WebhookRequestDeps {
  /** The keys tokens are checked against; the caller reads them once and caches them. */
  keys(): Promise<WebhookKeys>;
  /** The front door's origin secret, when the function sits behind one; read once and cached like the keys. */
  originSecret?(): Promise<Buffer>;
  /** The runtime lookup in one cluster; called only for an authenticated request. */
  runtimeLookup(clusterId: string): RuntimeLookup;
  /**
   * The cluster's mode (shared/domain/cluster-mode.ts), read only for an authenticated review.
   * In a `delegate` cluster upstream OME's own webhooks judge: this one allows everything.
   */
  clusterMode?(clusterId: string): Promise<ClusterMode>;
  settings: WebhookSettings;
  logger: WebhookLogger;
  /** What the invocation has left (Lambda's getRemainingTimeInMillis). */
  remainingMs?: () => number;
  timer?: DeadlineTimer;
}

/** The fixed bodies of rejected calls, and the messages of reviews that could not finish. */
export const WebhookMessage = {
  badRequest: 'bad request',
  unauthorized: 'this URL carries no webhook credential; register the URL with the token of this cluster',
  forbidden: 'forbidden',
  notFound: 'not found',
  methodNotAllowed: 'only POST is served',
  payloadTooLarge: 'the request body is too large',
  notAReview: 'the request body is not an AdmissionReview of admission.k8s.io/v1 with a request.uid',
  unavailable: 'the admission webhook is unavailable',
  /** The review could not finish: the runtime could not be read, or time ran out. */
  notChecked: 'the admission webhook could not complete its checks; the control plane logged the cause',
  admittedUnchecked: 'admitted without the admission webhook\'s checks (failurePolicy Ignore); the control plane logged the cause',
} as const;

/** The budget never falls below this, so a tiny `timeout` still leaves room to answer. */
const MIN_BUDGET_MS = 100;
/** Of the API server's timeout, the share the review may use; the rest is the round trip. */
const BUDGET_SHARE_OF_TIMEOUT = 0.7;
/** Kept back from the invocation's own limit, to write the answer. */
const INVOCATION_RESERVE_MS = 500;

/**
 * How long this request's review may take: the configured budget, at most 70% of the
 * API server's `timeout` (it counts the round trip and any cold start too) and less than
 * the invocation has left.
 */
export function computeTimeBudgetMs(configuredMs: number, apiServerTimeout: string | undefined, remainingMs: number | undefined): number {
  let budget = configuredMs;
  const seconds = /^(\d+)s$/.exec(apiServerTimeout ?? '')?.[1];
  if (seconds !== undefined) budget = Math.min(budget, Number(seconds) * 1000 * BUDGET_SHARE_OF_TIMEOUT);
  if (remainingMs !== undefined) budget = Math.min(budget, remainingMs - INVOCATION_RESERVE_MS);
  return Math.max(MIN_BUDGET_MS, Math.floor(budget));
}

const systemTimer: DeadlineTimer = (ms) => {
  let handle: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<void>((resolve) => {
    handle = setTimeout(resolve, ms);
  });
  return { expired, cancel: () => clearTimeout(handle) };
};

const TIMED_OUT = Symbol('timed out');

function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): WebhookHttpResponse {
  return { statusCode, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

function reject(statusCode: number, message: string, headers: Record<string, string> = {}): WebhookHttpResponse {
  return json(statusCode, { message }, headers);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The answer to a review that could not finish, as the failure policy says. */
export function unfinishedReviewResponse(uid: string, policy: WebhookFailurePolicy): AdmissionReviewResponse {
  if (policy === 'Ignore') return respond({ uid, allowed: true, warnings: [WebhookMessage.admittedUnchecked] });
  return respond({ uid, allowed: false, status: { code: 500, reason: 'InternalError', message: WebhookMessage.notChecked } });
}

/** Reads the body and its envelope; a WebhookHttpResponse when it is refused. */
function readReview(request: WebhookHttpRequest, maxBytes: number, logger: WebhookLogger, where: Record<string, unknown>): ReviewRequest | WebhookHttpResponse {
  const body = request.isBase64Encoded ? Buffer.from(request.body, 'base64') : Buffer.from(request.body, 'utf8');
  if (body.byteLength > maxBytes) {
    logger.warn('webhook request refused: body too large', { ...where, bytes: body.byteLength, maxBytes });
    return reject(413, WebhookMessage.payloadTooLarge);
  }
  try {
    return parseAdmissionReview(JSON.parse(body.toString('utf8')));
  } catch (error) {
    logger.warn('webhook request refused: not an AdmissionReview', { ...where, error: messageOf(error) });
    return reject(400, WebhookMessage.notAReview);
  }
}

/**
 * Answers one call of the webhook's function URL. Never throws: whatever goes wrong is
 * logged and answered with a fixed message.
 */
export async function serveAdmissionRequest(request: WebhookHttpRequest, deps: WebhookRequestDeps): Promise<WebhookHttpResponse> {
  const { logger, settings } = deps;
  if (deps.originSecret) {
    const refused = await checkOrigin(request, deps.originSecret, logger);
    if (refused) return refused;
  }
  const path = parseWebhookPath(request.path);
  if (path.kind !== 'route') {
    // A token-shaped segment may be a real credential sent to a mistyped path: not logged.
    logger.warn('webhook request refused', { path: request.path.replace(/[A-Za-z0-9_-]{43}/g, '<token>'), method: request.method, refused: path.kind });
    if (path.kind === 'malformed') return reject(400, WebhookMessage.badRequest);
    if (path.kind === 'unauthenticated') return reject(401, WebhookMessage.unauthorized);
    return reject(404, WebhookMessage.notFound);
  }
  const where = { cluster: path.clusterId, route: path.route };
  const budgetMs = computeTimeBudgetMs(settings.timeBudgetMs, request.query?.timeout, deps.remainingMs?.());
  const deadline = (deps.timer ?? systemTimer)(budgetMs);
  const expired = deadline.expired.then((): typeof TIMED_OUT => TIMED_OUT);
  try {
    let keys: WebhookKeys | typeof TIMED_OUT;
    try {
      keys = await Promise.race([deps.keys(), expired]);
    } catch (error) {
      logger.error('webhook keys could not be read', { ...where, error: messageOf(error) });
      return reject(503, WebhookMessage.unavailable);
    }
    if (keys === TIMED_OUT) {
      logger.error('webhook keys were not read within the time budget', { ...where, budgetMs });
      return reject(503, WebhookMessage.unavailable);
    }
    if (!verifyWebhookToken(keys, path.clusterId, path.token)) {
      logger.warn('webhook request refused: the token does not match the cluster', where);
      return reject(403, WebhookMessage.forbidden);
    }
    if (request.method.toUpperCase() !== 'POST') {
      logger.warn('webhook request refused: method', { ...where, method: request.method });
      return reject(405, WebhookMessage.methodNotAllowed, { allow: 'POST' });
    }
    const review = readReview(request, settings.maxBodyBytes, logger, where);
    if (!('uid' in review)) return review;
    return json(200, await reviewWithin(review, path.clusterId, expired, deps, { ...where, uid: review.uid, budgetMs }));
  } finally {
    deadline.cancel();
  }
}

/** Refuses a call that did not come through the front door; undefined when it did. */
async function checkOrigin(request: WebhookHttpRequest, read: () => Promise<Buffer>, logger: WebhookLogger): Promise<WebhookHttpResponse | undefined> {
  let secret: Buffer;
  try {
    secret = await read();
  } catch (error) {
    logger.error('the front door\'s origin secret could not be read', { error: messageOf(error) });
    return reject(503, WebhookMessage.unavailable);
  }
  if (verifyOriginSecret(secret, request.headers?.[ORIGIN_SECRET_HEADER])) return undefined;
  logger.warn('webhook request refused: not through the front door', { method: request.method });
  return reject(403, WebhookMessage.forbidden);
}

/** Upstream's webhooks judge a delegate cluster's objects; ours judges the others. */
async function reviewInMode(request: ReviewRequest, clusterId: string, deps: WebhookRequestDeps): Promise<AdmissionReviewResponse> {
  if ((await deps.clusterMode?.(clusterId)) === 'delegate') return respond({ uid: request.uid, allowed: true });
  return reviewAdmissionRequest(request, { lookupRuntime: deps.runtimeLookup(clusterId) });
}

async function reviewWithin(
  request: ReviewRequest,
  clusterId: string,
  expired: Promise<typeof TIMED_OUT>,
  deps: WebhookRequestDeps,
  where: Record<string, unknown>,
): Promise<AdmissionReviewResponse> {
  const { logger, settings } = deps;
  try {
    const reviewed = await Promise.race([reviewInMode(request, clusterId, deps), expired]);
    if (reviewed !== TIMED_OUT) return reviewed;
    logger.error('review not finished within the time budget', { ...where, failurePolicy: settings.failurePolicy });
  } catch (error) {
    if (error instanceof MalformedReviewError) {
      // About the object under review, which its author may read.
      return respond({ uid: request.uid, allowed: false, status: { code: 400, reason: 'BadRequest', message: error.message } });
    }
    logger.error('review failed', { ...where, failurePolicy: settings.failurePolicy, error: messageOf(error) });
  }
  return unfinishedReviewResponse(request.uid, settings.failurePolicy);
}
