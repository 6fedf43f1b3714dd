/**
 * The admission webhook in a delegate cluster: upstream's webhooks judge there, so an
 * authenticated review is allowed without checks (no runtime lookup), while a standalone
 * cluster's review is judged as before, and a record without a mode fails the review as
 * the failure policy says.
 */
import { describe, expect, it } from 'vitest';
import { serveAdmissionRequest, WebhookMessage, type WebhookRequestDeps } from '../../shared/use-cases/admission/webhook-request';
import { MAX_REVIEW_BYTES } from '../../shared/domain/webhook/webhook-settings';
import { deriveWebhookToken, webhookUrlOf } from '../../shared/domain/webhook/webhook-token';
import { ClusterModeError, type ClusterMode } from '../../shared/domain/cluster-mode';

const KEY = Buffer.from('a-local-test-key-of-forty-eight-characters-long!');
const pathOf = (clusterId: string) => new URL(webhookUrlOf('https://hook.invalid', clusterId, deriveWebhookToken(KEY, clusterId), 'inferenceservice')).pathname;

/** A review upstream's webhook (and ours) denies: a revision with autoSync true. */
const deniedReview = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'u-1',
    kind: { group: 'ome.io', version: 'v1beta1', kind: 'InferenceService' },
    operation: 'CREATE',
    namespace: 'llama-demo',
    object: {
      metadata: { name: 'llama', namespace: 'llama-demo' },
      spec: { model: { name: 'm' }, runtime: { name: 'srt', kind: 'ServingRuntime', autoSync: true, revision: 'r-llama-demo-srt-0123abcd' }, engine: { minReplicas: 1 } },
    },
  },
});

function depsFor(mode: (clusterId: string) => Promise<ClusterMode>): { deps: WebhookRequestDeps; lookups: string[] } {
  const lookups: string[] = [];
  return {
    lookups,
    deps: {
      keys: async () => ({ current: KEY, accepted: [] }),
      runtimeLookup: (clusterId) => async () => {
        lookups.push(clusterId);
        return { found: true, kind: 'ServingRuntime', disabled: false };
      },
      clusterMode: mode,
      settings: { failurePolicy: 'Fail', timeBudgetMs: 7_000, maxBodyBytes: MAX_REVIEW_BYTES },
      logger: { warn: () => undefined, error: () => undefined },
    },
  };
}

describe('the admission webhook by cluster mode', () => {
  it('allows a delegate cluster\'s review without any check or runtime lookup', async () => {
    const { deps, lookups } = depsFor(async () => 'delegate');
    const result = await serveAdmissionRequest({ method: 'POST', path: pathOf('edge'), body: deniedReview }, deps);
    expect(JSON.parse(result.body)).toEqual({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'u-1', allowed: true } });
    expect(lookups).toEqual([]);
  });

  it('judges a standalone cluster\'s review as upstream\'s webhook does', async () => {
    const { deps } = depsFor(async () => 'standalone');
    const result = await serveAdmissionRequest({ method: 'POST', path: pathOf('prod'), body: deniedReview }, deps);
    expect(JSON.parse(result.body).response).toMatchObject({ uid: 'u-1', allowed: false, status: { code: 403 } });
  });

  it('fails the review as the failure policy says when the record has no mode', async () => {
    const { deps, lookups } = depsFor(async (clusterId) => {
      throw new ClusterModeError(clusterId, undefined);
    });
    const result = await serveAdmissionRequest({ method: 'POST', path: pathOf('legacy'), body: deniedReview }, deps);
    expect(JSON.parse(result.body).response).toEqual({ uid: 'u-1', allowed: false, status: { code: 500, reason: 'InternalError', message: WebhookMessage.notChecked } });
    expect(lookups).toEqual([]);
  });
});
