/**
 * The time budget through the embedded API server: a runtime lookup that never answers
 * gets the webhook's own answer, per its failure policy, before the API server's
 * `timeoutSeconds` runs out; the API server never reports a timed-out call.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_CONFIGURATION_TEMPLATE } from '../../infra/paths';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { serveAdmissionRequest, WebhookMessage } from '../../shared/use-cases/admission/webhook-request';
import { MAX_REVIEW_BYTES, type WebhookSettings } from '../../shared/domain/webhook/webhook-settings';
import { renderWebhookConfiguration } from '../../shared/use-cases/admission/webhook-configuration';
import { deriveWebhookToken } from '../../shared/domain/webhook/webhook-token';
import { Resources } from '../../shared/domain/model/resources';
import type { KubeObject } from '../../shared/ports/cluster';
import { WebhookName } from '../../shared/domain/vocabulary';

const KEY = Buffer.from('budget-test-key-of-more-than-thirty-two-bytes');
const NS = 'budget';
/** The API server waits this long; the budget below is a small part of it. */
const TIMEOUT_SECONDS = 5;

function isvc(name: string): KubeObject {
  return {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace: NS },
    spec: { model: { name: 'llama-3-2-3b-instruct' }, runtime: { name: 'srt', kind: 'ServingRuntime' }, engine: { minReplicas: 1 } },
  };
}

describe('admission webhook time budget', () => {
  let cluster: EmbeddedCluster;
  let server: http.Server;
  const settings: WebhookSettings = { failurePolicy: 'Fail', timeBudgetMs: 300, maxBodyBytes: MAX_REVIEW_BYTES };
  let lookups = 0;

  beforeAll(async () => {
    cluster = await startEmbeddedCluster();
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://localhost');
        const request = { method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), body: Buffer.concat(chunks).toString('utf8') };
        void serveAdmissionRequest(request, {
          keys: async () => ({ current: KEY, accepted: [] }),
          // A cluster that never answers.
          runtimeLookup: () => () => {
            lookups += 1;
            return new Promise(() => undefined);
          },
          settings,
          logger: { warn: () => undefined, error: () => undefined },
        }).then((result) => {
          res.writeHead(result.statusCode, result.headers);
          res.end(result.body);
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const configuration = renderWebhookConfiguration(readFileSync(WEBHOOK_CONFIGURATION_TEMPLATE, 'utf8'), {
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      clusterId: 'local',
      omeNamespace: 'ome',
      token: deriveWebhookToken(KEY, 'local'),
    });
    for (const webhook of configuration.webhooks as Array<{ timeoutSeconds: number }>) webhook.timeoutSeconds = TIMEOUT_SECONDS;
    await cluster.client.create(Resources.validatingWebhookConfigurations, configuration);
    await cluster.client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  });

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await cluster?.stop();
  });

  it('denies with its own message under failurePolicy Fail, instead of the API server timing out', async () => {
    // Prepare
    settings.failurePolicy = 'Fail';
    const before = lookups;

    // Act
    const error = await cluster.client.create(Resources.inferenceServices, isvc('slow-fail')).catch((caught: unknown) => caught);

    // Assess
    expect(lookups).toBe(before + 1);
    expect((error as Error).message).toBe(`admission webhook "${WebhookName.inferenceService}" denied the request: ${WebhookMessage.notChecked}`);
    await expect(cluster.client.get(Resources.inferenceServices, NS, 'slow-fail')).rejects.toThrow();
  });

  it('admits under failurePolicy Ignore (its warning: webhook-request.test.ts)', async () => {
    // Prepare
    settings.failurePolicy = 'Ignore';
    const before = lookups;

    // Act
    const created = await cluster.client.create(Resources.inferenceServices, isvc('slow-ignore'));

    // Assess
    expect(lookups).toBe(before + 1);
    expect(created.metadata.name).toBe('slow-ignore');
  });
});
