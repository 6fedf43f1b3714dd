/**
 * admission-webhook: the clusters' API servers call this function URL with an
 * AdmissionReview at `/clusters/<id>/<token>/validate/<kind>`, through the front door
 * (infra/front-door/), which adds its origin secret; the secret, then the token against
 * the webhook's key, are checked before anything else (shared/use-cases/admission/webhook-request.ts).
 * Only then is the named cluster's registry record read: for its mode (a delegate cluster's
 * objects are judged by upstream OME's webhooks, so this one allows them) and to look a
 * runtime up.
 */
import middy from '@middy/core';
import { createLogger, injectLambdaContext } from '../../shared/app/logger';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { createRuntimeLookup } from '../../shared/use-cases/admission/review-admission';
import { serveAdmissionRequest, WebhookMessage, type WebhookHttpRequest, type WebhookHttpResponse } from '../../shared/use-cases/admission/webhook-request';
import { webhookWiringOf, type WebhookWiring } from '../../shared/app/webhook-wiring';
import type { AppContext } from '../../shared/app/context';
import { getAppContext } from '../../shared/app/context';

const logger = createLogger('admission-webhook');

/**
 * Answers one request without Lambda types; the local control plane serves the same
 * handler over HTTP. The app context (the registry, cluster clients) is read only for an
 * authenticated review that needs a runtime.
 */
export async function serveAdmissionHttp(
  request: WebhookHttpRequest,
  options: { appOf?: () => AppContext; remainingMs?: () => number; env?: Record<string, string | undefined> } = {},
): Promise<WebhookHttpResponse> {
  // A thrown error would reach the caller as a 502 with Lambda's error text: answer 503 instead.
  const unavailable = (message: string, error: unknown): WebhookHttpResponse => {
    logger.error(message, { error: error instanceof Error ? error.message : String(error) });
    return { statusCode: 503, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: WebhookMessage.unavailable }) };
  };
  let current: WebhookWiring;
  try {
    current = webhookWiringOf(options.env ?? process.env);
  } catch (error) {
    return unavailable('admission webhook misconfigured', error);
  }
  const appOf = options.appOf ?? (() => getAppContext());
  try {
    return await serveAdmissionRequest(request, {
      keys: current.keys,
      ...(current.originSecret ? { originSecret: current.originSecret } : {}),
      runtimeLookup: (clusterId) => async (runtimeName, kind, namespace) => {
        const { client } = await appOf().cluster(clusterId);
        return createRuntimeLookup(client)(runtimeName, kind, namespace);
      },
      clusterMode: (clusterId) => appOf().clusterMode(clusterId),
      settings: current.config,
      logger,
      ...(options.remainingMs ? { remainingMs: options.remainingMs } : {}),
    });
  } catch (error) {
    return unavailable('admission webhook failed', error);
  }
}

async function handle(event: APIGatewayProxyEventV2, context: Context): Promise<APIGatewayProxyStructuredResultV2> {
  return serveAdmissionHttp(
    {
      method: event.requestContext?.http?.method ?? '',
      path: event.rawPath,
      query: event.queryStringParameters,
      body: event.body ?? '',
      isBase64Encoded: event.isBase64Encoded,
      headers: event.headers,
    },
    { remainingMs: () => context.getRemainingTimeInMillis() },
  );
}

export const handler = middy(handle).use(injectLambdaContext(logger));
