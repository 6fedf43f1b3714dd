import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handler } from '../../functions/admission-webhook/handler';

const context = { functionName: 'admission-webhook', awsRequestId: 'req-1', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

function functionUrlEvent(body: string, base64: boolean): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/clusters/prod-eu/validate/controllerrevision',
    rawQueryString: 'timeout=10s',
    queryStringParameters: { timeout: '10s' },
    headers: { 'content-type': 'application/json' },
    isBase64Encoded: base64,
    body: base64 ? Buffer.from(body).toString('base64') : body,
    requestContext: {} as APIGatewayProxyEventV2['requestContext'],
  };
}

const revision = (data: unknown) => ({
  metadata: { name: 'cr-srt-0123abcd', namespace: 'ome', labels: { 'ome.io/runtime-of': 'srt' }, annotations: { 'ome.io/created-by': 'ome-controller' } },
  data,
  revision: 1,
});

describe('admission-webhook handler', () => {
  it('answers a function URL event (base64 body) with the AdmissionReview response as JSON', async () => {
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { uid: 'r-9', kind: { group: 'apps', version: 'v1', kind: 'ControllerRevision' }, operation: 'UPDATE', namespace: 'ome', oldObject: revision({ a: 1 }), object: revision({ a: 2 }) },
    };

    const result = (await handler(functionUrlEvent(JSON.stringify(review), true), context)) as { statusCode: number; headers: Record<string, string>; body: string };

    expect(result.statusCode).toBe(200);
    expect(result.headers['content-type']).toBe('application/json');
    expect(JSON.parse(result.body)).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'r-9', allowed: false, status: { code: 403, reason: 'Forbidden', message: 'ControllerRevision ome/cr-srt-0123abcd is owned by OME; .data is immutable' } },
    });
  });

  it('answers 400 to a body that is not a review', async () => {
    const result = (await handler(functionUrlEvent('not json', false), context)) as { statusCode: number; body: string };
    expect(result.statusCode).toBe(400);
    expect(JSON.parse(result.body).response.status.message).toMatch(/^the request body is not JSON/);
  });
});
