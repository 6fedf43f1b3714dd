/**
 * The webhook's front door: every refused call gets its status and a fixed body, the
 * detail only in the log, and nothing reads the registry or a cluster before the token
 * holds; a review that cannot finish in its budget is answered as the failure policy says.
 */
import { describe, expect, it } from 'vitest';
import type { RuntimeLookup } from '../../shared/use-cases/admission/review-admission';
import { computeTimeBudgetMs, serveAdmissionRequest, WebhookMessage, type DeadlineTimer, type WebhookHttpRequest, type WebhookRequestDeps } from '../../shared/use-cases/admission/webhook-request';
import { MAX_REVIEW_BYTES, type WebhookSettings } from '../../shared/domain/webhook/webhook-settings';
import { deriveWebhookToken, ORIGIN_SECRET_HEADER, webhookUrlOf, type WebhookKeys } from '../../shared/domain/webhook/webhook-token';

const KEY = Buffer.from('a-local-test-key-of-forty-eight-characters-long!');
const OLD_KEY = Buffer.from('the-key-before-the-rotation-also-forty-eight-ch!');
const CLUSTER = 'prod-eu-1';
const TOKEN = deriveWebhookToken(KEY, CLUSTER);
const pathOf = (clusterId: string, token: string, route: 'inferenceservice' | 'controllerrevision' = 'inferenceservice') =>
  new URL(webhookUrlOf('https://hook.invalid', clusterId, token, route)).pathname;
const GOOD_PATH = pathOf(CLUSTER, TOKEN);

const isvcReview = (uid = 'u-1') =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: 'ome.io', version: 'v1beta1', kind: 'InferenceService' },
      operation: 'CREATE',
      namespace: 'llama-demo',
      object: {
        metadata: { name: 'llama', namespace: 'llama-demo' },
        spec: { model: { name: 'llama-3-2-3b-instruct' }, runtime: { name: 'srt', kind: 'ServingRuntime' }, engine: { minReplicas: 1 } },
      },
    },
  });

/** Counts what a request reached: the keys, a cluster's runtime lookup, and what was logged. */
function harness(
  options: { lookup?: RuntimeLookup; keys?: () => Promise<WebhookKeys>; settings?: Partial<WebhookSettings>; timer?: DeadlineTimer; originSecret?: () => Promise<Buffer> } = {},
) {
  const calls = { keys: 0, clusters: [] as string[], lookups: 0 };
  const logged: Array<{ level: string; message: string; details: Record<string, unknown> }> = [];
  const deps: WebhookRequestDeps = {
    keys: () => {
      calls.keys += 1;
      return options.keys ? options.keys() : Promise.resolve({ current: KEY, accepted: [] });
    },
    runtimeLookup: (clusterId) => {
      calls.clusters.push(clusterId);
      return (...args) => {
        calls.lookups += 1;
        return (options.lookup ?? (async () => ({ found: true, kind: 'ServingRuntime', disabled: false })))(...args);
      };
    },
    settings: { failurePolicy: 'Fail', timeBudgetMs: 7_000, maxBodyBytes: MAX_REVIEW_BYTES, ...options.settings },
    logger: {
      warn: (message, details) => logged.push({ level: 'warn', message, details }),
      error: (message, details) => logged.push({ level: 'error', message, details }),
    },
    ...(options.timer ? { timer: options.timer } : {}),
    ...(options.originSecret ? { originSecret: options.originSecret } : {}),
  };
  const serve = (request: Partial<WebhookHttpRequest>) => serveAdmissionRequest({ method: 'POST', path: GOOD_PATH, body: isvcReview(), query: { timeout: '10s' }, ...request }, deps);
  return { calls, logged, serve };
}

/** A timer the test fires by hand. */
function manualTimer(): { timer: DeadlineTimer; fire(): void; started: number[] } {
  let fire: () => void = () => undefined;
  const started: number[] = [];
  const timer: DeadlineTimer = (ms) => {
    started.push(ms);
    return { expired: new Promise<void>((resolve) => (fire = resolve)), cancel: () => undefined };
  };
  return { timer, fire: () => fire(), started };
}

const never = new Promise<never>(() => undefined);

describe('Method: serveAdmissionRequest', () => {
  describe('refusals: a fixed body, no registry or cluster access', () => {
    it.each([
      ['no token (the old, unauthenticated URL)', { path: '/clusters/prod-eu-1/validate/inferenceservice' }, 401, WebhookMessage.unauthorized],
      ['no cluster and no token', { path: '/validate/inferenceservice' }, 401, WebhookMessage.unauthorized],
      ['a wrong token', { path: pathOf(CLUSTER, TOKEN.replace(/^./, TOKEN.startsWith('A') ? 'B' : 'A')) }, 403, WebhookMessage.forbidden],
      ["another cluster's token", { path: pathOf('prod-us-1', TOKEN) }, 403, WebhookMessage.forbidden],
      ['a token of a key no longer accepted', { path: pathOf(CLUSTER, deriveWebhookToken(OLD_KEY, CLUSTER)) }, 403, WebhookMessage.forbidden],
      ['the token of a registered cluster under an unregistered id', { path: pathOf('no-such-cluster', TOKEN) }, 403, WebhookMessage.forbidden],
      ['a malformed % escape', { path: `/clusters/%E0%A4%A/${TOKEN}/validate/inferenceservice` }, 400, WebhookMessage.badRequest],
      ['an unknown route', { path: `/clusters/${CLUSTER}/${TOKEN}/validate/pods` }, 404, WebhookMessage.notFound],
      ['an unknown path', { path: '/admin' }, 404, WebhookMessage.notFound],
      ['a GET with a valid token', { method: 'GET' }, 405, WebhookMessage.methodNotAllowed],
      ['a PUT with a valid token', { method: 'PUT' }, 405, WebhookMessage.methodNotAllowed],
      ['a body over the limit', { body: `{"pad":"${'x'.repeat(MAX_REVIEW_BYTES)}"}` }, 413, WebhookMessage.payloadTooLarge],
      ['a body that is not JSON', { body: '{"apiVersion":' }, 400, WebhookMessage.notAReview],
      ['JSON that is not a review', { body: '{"apiVersion":"v1","kind":"Pod"}' }, 400, WebhookMessage.notAReview],
      ['a review without uid', { body: '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}}' }, 400, WebhookMessage.notAReview],
    ])('%s → %i', async (_name, request, statusCode, message) => {
      // Prepare
      const { calls, logged, serve } = harness();

      // Act
      const response = await serve(request);

      // Assess
      expect(response.statusCode).toBe(statusCode);
      expect(JSON.parse(response.body)).toEqual({ message });
      expect(calls.clusters).toEqual([]);
      expect(calls.lookups).toBe(0);
      expect(logged).toHaveLength(1);
      if (statusCode === 405) expect(response.headers.allow).toBe('POST');
    });

    it('refuses an unauthenticated review before reading the keys, and a wrong token before reading the body', async () => {
      // Prepare
      const { calls, serve } = harness();

      // Act
      const unauthenticated = await serve({ path: '/clusters/prod-eu-1/validate/inferenceservice', method: 'GET', body: 'x'.repeat(MAX_REVIEW_BYTES + 1) });
      const wrongToken = await serve({ path: pathOf('prod-us-1', TOKEN), method: 'GET', body: 'x'.repeat(MAX_REVIEW_BYTES + 1) });

      // Assess
      expect([unauthenticated.statusCode, wrongToken.statusCode]).toEqual([401, 403]);
      expect(calls.keys).toBe(1);
    });

    it('answers 503 with a fixed body when the keys cannot be read, logging why', async () => {
      // Prepare
      const { calls, logged, serve } = harness({ keys: () => Promise.reject(new Error('AccessDenied on arn:aws:secretsmanager:eu-west-1:123:secret:key')) });

      // Act
      const response = await serve({});

      // Assess
      expect(response.statusCode).toBe(503);
      expect(response.body).toBe(JSON.stringify({ message: WebhookMessage.unavailable }));
      expect(calls.clusters).toEqual([]);
      expect(logged[0]?.details.error).toContain('arn:aws:secretsmanager');
    });
  });

  describe('an authenticated review', () => {
    it("is reviewed against the token's cluster", async () => {
      // Prepare
      const { calls, serve } = harness({ lookup: async () => ({ found: false }) });

      // Act
      const response = await serve({});

      // Assess
      expect(response.statusCode).toBe(200);
      expect(JSON.parse(response.body).response).toEqual({
        uid: 'u-1',
        allowed: false,
        status: { code: 403, reason: 'Forbidden', message: 'runtime srt does not support model llama-3-2-3b-instruct: ServingRuntime srt not found in namespace llama-demo' },
      });
      expect(calls.clusters).toEqual([CLUSTER]);
    });

    it('accepts the token of a key still accepted during a rotation, and a base64 body', async () => {
      // Prepare
      const { serve } = harness({ keys: async () => ({ current: KEY, accepted: [OLD_KEY] }) });

      // Act
      const response = await serve({ path: pathOf(CLUSTER, deriveWebhookToken(OLD_KEY, CLUSTER), 'controllerrevision'), body: Buffer.from(isvcReview('u-2')).toString('base64'), isBase64Encoded: true });

      // Assess
      expect(response.statusCode).toBe(200);
      expect(JSON.parse(response.body).response).toEqual({ uid: 'u-2', allowed: true });
    });

    it('tells the author what is wrong with the object under review', async () => {
      // Prepare
      const { serve } = harness();
      const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u-3', kind: { group: 'ome.io', version: 'v1beta1', kind: 'InferenceService' }, operation: 'UPDATE', object: { metadata: { name: 'x' }, spec: { runtime: 'srt' } } } });

      // Act
      const response = await serve({ body });

      // Assess
      expect(JSON.parse(response.body).response).toEqual({ uid: 'u-3', allowed: false, status: { code: 400, reason: 'BadRequest', message: 'spec.runtime must be an object' } });
    });
  });

  describe('a review that cannot finish', () => {
    it.each([
      ['Fail', { allowed: false, status: { code: 500, reason: 'InternalError', message: WebhookMessage.notChecked } }],
      ['Ignore', { allowed: true, warnings: [WebhookMessage.admittedUnchecked] }],
    ] as const)('answers a failed runtime lookup per failurePolicy %s, without the error text', async (failurePolicy, expected) => {
      // Prepare
      const { logged, serve } = harness({
        settings: { failurePolicy },
        lookup: () => Promise.reject(new Error('cluster prod-eu-1: secret arn:aws:secretsmanager:eu-west-1:1:secret:x: AccessDenied')),
      });

      // Act
      const response = await serve({});

      // Assess
      expect(response.statusCode).toBe(200);
      expect(JSON.parse(response.body).response).toEqual({ uid: 'u-1', ...expected });
      expect(response.body).not.toContain('arn:');
      expect(logged.map((entry) => entry.details.error)).toEqual(['cluster prod-eu-1: secret arn:aws:secretsmanager:eu-west-1:1:secret:x: AccessDenied']);
    });

    it.each([
      ['Fail', { allowed: false, status: { code: 500, reason: 'InternalError', message: WebhookMessage.notChecked } }],
      ['Ignore', { allowed: true, warnings: [WebhookMessage.admittedUnchecked] }],
    ] as const)('answers per failurePolicy %s when the runtime lookup outlasts the budget', async (failurePolicy, expected) => {
      // Prepare: a lookup that never answers, and a budget the test ends.
      const clock = manualTimer();
      const { calls, serve } = harness({ settings: { failurePolicy }, lookup: () => never, timer: clock.timer });

      // Act
      const pending = serve({});
      await new Promise((resolve) => setImmediate(resolve));
      expect(calls.lookups).toBe(1);
      clock.fire();
      const response = await pending;

      // Assess
      expect(clock.started).toEqual([7_000]);
      expect(response.statusCode).toBe(200);
      expect(JSON.parse(response.body).response).toEqual({ uid: 'u-1', ...expected });
    });

    it('answers 503 when the keys are not read within the budget', async () => {
      // Prepare
      const clock = manualTimer();
      const { calls, serve } = harness({ keys: () => never, timer: clock.timer });

      // Act
      const pending = serve({});
      clock.fire();
      const response = await pending;

      // Assess
      expect(response.statusCode).toBe(503);
      expect(calls.clusters).toEqual([]);
    });
  });
});

describe('Method: computeTimeBudgetMs', () => {
  it.each([
    ['the configured budget under the default timeout', 7_000, '10s', 10_000, 7_000],
    ["70% of the API server's timeout when that is less", 7_000, '5s', 10_000, 3_500],
    ['the configured budget without a timeout', 7_000, undefined, undefined, 7_000],
    ['the invocation time left, less 500 ms', 7_000, '30s', 4_000, 3_500],
    ['a floor of 100 ms', 7_000, '1s', 200, 100],
    ['the configured budget when the timeout is not in seconds', 2_000, '10m', undefined, 2_000],
  ])('%s', (_name, configured, timeout, remaining, expected) => {
    expect(computeTimeBudgetMs(configured, timeout, remaining)).toBe(expected);
  });
});

describe('behind the front door', () => {
  const ORIGIN = Buffer.from('the-front-door-origin-secret-of-48-characters-ok');

  it.each([
    ['no origin header', {}],
    ['a wrong origin secret', { [ORIGIN_SECRET_HEADER]: 'the-front-door-origin-secret-of-48-characters-no' }],
    ['a prefix of the origin secret', { [ORIGIN_SECRET_HEADER]: 'the-front-door-origin-secret' }],
  ])('refuses a call with %s before reading the keys, whatever its token', async (_case, headers) => {
    // Prepare
    const { calls, serve } = harness({ originSecret: async () => ORIGIN });

    // Act
    const response = await serve({ headers });

    // Assess
    expect(response).toMatchObject({ statusCode: 403, body: JSON.stringify({ message: WebhookMessage.forbidden }) });
    expect(calls).toEqual({ keys: 0, clusters: [], lookups: 0 });
  });

  it('serves a call that carries the origin secret, then checks its token as before', async () => {
    // Prepare
    const { calls, serve } = harness({ originSecret: async () => ORIGIN });

    // Act
    const served = await serve({ headers: { [ORIGIN_SECRET_HEADER]: ORIGIN.toString('utf8') } });
    const forged = await serve({ headers: { [ORIGIN_SECRET_HEADER]: ORIGIN.toString('utf8') }, path: pathOf(CLUSTER, deriveWebhookToken(OLD_KEY, CLUSTER)) });

    // Assess
    expect(served.statusCode).toBe(200);
    expect(JSON.parse(served.body)).toMatchObject({ response: { uid: 'u-1', allowed: true } });
    expect(forged.statusCode).toBe(403);
    expect(calls.lookups).toBe(1);
  });

  it('answers 503 when the origin secret cannot be read', async () => {
    // Prepare
    const { calls, serve } = harness({ originSecret: () => Promise.reject(new Error('AccessDenied')) });

    // Act
    const response = await serve({ headers: { [ORIGIN_SECRET_HEADER]: ORIGIN.toString('utf8') } });

    // Assess
    expect(response).toMatchObject({ statusCode: 503, body: JSON.stringify({ message: WebhookMessage.unavailable }) });
    expect(calls.keys).toBe(0);
  });
});
