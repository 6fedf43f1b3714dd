/**
 * admission-webhook: the clusters' API servers call this function URL with an
 * AdmissionReview; it answers with the review's response. The cluster is named in the
 * path, `/clusters/<id>/validate/inferenceservice` (or `?cluster=<id>`), so the runtime
 * check reads that cluster's runtimes.
 */
import middy from '@middy/core';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import {
  createRuntimeLookup,
  parseWebhookClusterId,
  reviewAdmissionBody,
  type HttpAdmissionResult,
} from '../../shared/admission/review-admission';
import type { AppContext } from '../../shared/app/context';
import { getAppContext } from '../../shared/app/context';

const logger = new Logger({ serviceName: 'admission-webhook' });

/**
 * Reviews one request body for a registered cluster, without Lambda types: the local
 * control plane serves this over HTTP. The app context is read only when a runtime must
 * be looked up.
 */
export async function reviewAdmissionHttp(
  body: string,
  clusterId: string | undefined,
  appOf: () => AppContext = () => getAppContext(),
): Promise<HttpAdmissionResult> {
  return reviewAdmissionBody(body, {
    async lookupRuntime(runtimeName, kind, namespace) {
      if (clusterId === undefined) {
        throw new Error('the webhook URL names no cluster: register it as /clusters/<id>/validate/inferenceservice');
      }
      const { client } = await appOf().cluster(clusterId);
      return createRuntimeLookup(client)(runtimeName, kind, namespace);
    },
  });
}

async function handle(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const raw = event.body ?? '';
  const body = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  const clusterId = parseWebhookClusterId(event.rawPath, event.queryStringParameters);
  const result = await reviewAdmissionHttp(body, clusterId);
  if (result.statusCode !== 200 || !result.body.includes('"allowed":true')) {
    logger.info('not admitted', { cluster: clusterId, statusCode: result.statusCode, response: result.body });
  }
  return { statusCode: result.statusCode, headers: { 'content-type': 'application/json' }, body: result.body };
}

export const handler = middy(handle).use(injectLambdaContext(logger));
