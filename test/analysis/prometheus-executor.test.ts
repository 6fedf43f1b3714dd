import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrometheusExecutor, type PrometheusExecutorDeps } from '../../shared/adapters/prometheus/executor';
import { parseMetricsConfig, type MetricsConfig } from '../../shared/domain/analysis/metrics-config';
import { NotFoundError } from '../../shared/domain/errors';
import type { AnalysisSampleRequest } from '../../shared/ports/analysis';
import type { AnalysisMetric, AnalysisPrometheus, ComparisonOperator } from '../../shared/domain/rollout/types';
import type { MetricsFence } from '../../shared/domain/analysis/network-fence';
import { json, startHttpPeer, vectorAnswer, viaTls, type HttpPeer } from '../support/http-peer';
import { freePort, startTestPrometheus, type TestPrometheus } from '../support/test-prometheus';

const now = new Date('2026-12-01T20:00:00.750Z');
const at = '2026-12-01T20:00:00Z';

const metric = (name: string, query: string, operator: ComparisonOperator = 'LT', threshold = '0.05'): AnalysisMetric => ({ name, query, operator, threshold });

function request(metrics: AnalysisMetric[], prometheus?: AnalysisPrometheus): AnalysisSampleRequest {
  return {
    namespace: 'prod',
    isvcName: 'chat',
    component: 'engine',
    canaryRevision: 'b2',
    stableRevision: 'a1',
    step: 0,
    analysis: { interval: '1m', failureLimit: 2, metrics },
    ...(prometheus ? { prometheus } : {}),
  };
}

/** The local plane's fence, with the loopback peers and Prometheus of these tests allowed. */
const loopbackFence: MetricsFence = { mode: 'local', allowlist: { origins: [], ranges: ['127.0.0.0/8'] } };

function executor(config: MetricsConfig, secrets: Record<string, Record<string, string>> = {}, extra: Partial<PrometheusExecutorDeps> = {}) {
  return createPrometheusExecutor({
    fence: loopbackFence,
    readConfig: () => config,
    readSecret: (namespace, name, key) => {
      const secret = secrets[`${namespace}/${name}`];
      if (!secret) throw new NotFoundError(`secrets "${name}" not found`);
      return secret[key];
    },
    now: () => now,
    ...extra,
  });
}

describe('Prometheus executor against a real Prometheus', () => {
  let prometheus: TestPrometheus;
  let config: MetricsConfig;
  beforeAll(async () => {
    prometheus = await startTestPrometheus();
    config = parseMetricsConfig({ canaryAnalysis: JSON.stringify({ bundledPrometheusAddress: prometheus.address }) });
  });
  afterAll(async () => {
    await prometheus?.stop();
  });

  it('passes a healthy metric, stamping the whole-second sample time', async () => {
    const verdict = await executor(config).sample(request([metric('error-rate', 'vector(0.01)')]));
    expect(verdict).toEqual({
      outcome: 'Successful',
      at,
      metrics: [{ name: 'error-rate', value: '0.01', threshold: '0.05', operator: 'LT', passed: true, time: at }],
    });
  });

  it('fails a breached metric with its value', async () => {
    const verdict = await executor(config).sample(request([metric('error-rate', 'vector(0.5)')]));
    expect(verdict?.outcome).toBe('Failed');
    expect(verdict?.metrics).toEqual([{ name: 'error-rate', value: '0.5', threshold: '0.05', operator: 'LT', passed: false, time: at }]);
  });

  it('judges the worst series of a per-pod vector, for upper and lower bounds', async () => {
    const perPod = 'label_replace(vector(0.01), "pod", "a", "", "") or label_replace(vector(0.2), "pod", "b", "", "")';
    const verdict = await executor(config).sample(request([metric('err', perPod, 'LTE', '0.1'), metric('success', perPod, 'GTE', '0.01')]));
    expect(verdict?.outcome).toBe('Failed');
    expect(verdict?.metrics?.map((m) => [m.name, m.value, m.passed])).toEqual([
      ['err', '0.2', false],
      ['success', '0.01', true],
    ]);
  });

  it('reads a scalar result', async () => {
    const verdict = await executor(config).sample(request([metric('latency', 'scalar(vector(250))', 'LT', '500')]));
    expect(verdict?.metrics?.[0]).toMatchObject({ value: '250', passed: true });
  });

  it.each<[string, string, string | RegExp]>([
    ['a selector matching nothing (no data)', 'sum(rate(request_errors_total{namespace="{{.Namespace}}", revision_hash="{{.CanaryRevision}}"}[5m]))', 'no data'],
    ['a ratio over zero requests (NaN)', 'vector(0) / vector(0)', 'no data'],
    ['a scalar NaN', '0/0', 'no data'],
    ['a query with a syntax error (400 bad_data)', 'sum(rate(requests_total[5m]', /^bad_data: invalid parameter "query": .*parse error/],
    ['a range vector', 'requests_total[5m]', 'unsupported prometheus result type model.Matrix (expected scalar or vector)'],
    ['an unknown template variable', 'x{ns="{{.Namespce}}"}', /^template error: template: promql:1:\d+: executing "promql" at <\.Namespce>: can't evaluate field Namespce/],
  ])('reads %s as inconclusive with its cause', async (_name, query, message) => {
    const verdict = await executor(config).sample(request([metric('m', query)]));
    expect(verdict?.outcome).toBe('Inconclusive');
    expect(verdict?.metrics).toHaveLength(1);
    const result = verdict?.metrics?.[0];
    expect(result).toMatchObject({ name: 'm', threshold: '0.05', operator: 'LT', passed: false, time: at });
    expect(result).not.toHaveProperty('value');
    if (typeof message === 'string') expect(result?.message).toBe(message);
    else expect(result?.message).toMatch(message);
  });

  it('fails when one metric breaches even though another is inconclusive, and queries every metric', async () => {
    const verdict = await executor(config).sample(request([metric('nodata', 'absent_over_time(vector(1)[1m:]) * 0 == 1'), metric('bad', 'vector(0.9)'), metric('good', 'vector(0.01)')]));
    expect(verdict?.outcome).toBe('Failed');
    expect(verdict?.metrics?.map((m) => [m.name, m.passed, m.value ?? m.message])).toEqual([
      ['nodata', false, 'no data'],
      ['bad', false, '0.9'],
      ['good', true, '0.01'],
    ]);
  });

  it('is inconclusive, not failed, when a healthy metric sits beside an unreadable one', async () => {
    const verdict = await executor(config).sample(request([metric('good', 'vector(0.01)'), metric('broken', 'sum(')]));
    expect(verdict?.outcome).toBe('Inconclusive');
    expect(verdict?.metrics?.map((m) => m.passed)).toEqual([true, false]);
  });
});

describe('Prometheus executor faults', () => {
  let peer: HttpPeer;
  beforeAll(async () => {
    peer = await startHttpPeer();
  });
  afterAll(async () => {
    await peer.close();
  });

  it('reads an unreachable Prometheus as an inconclusive sample naming the refused connection on every metric', async () => {
    const port = await freePort();
    const config = parseMetricsConfig(undefined, `http://127.0.0.1:${port}`);
    const verdict = await executor(config).sample(request([metric('a', 'vector(1)'), metric('b', 'vector(2)')]));
    expect(verdict?.outcome).toBe('Inconclusive');
    for (const result of verdict?.metrics ?? []) {
      expect(result.passed).toBe(false);
      expect(result.message).toMatch(new RegExp(`^Post "http://127.0.0.1:${port}/api/v1/query": connection refused`));
    }
    expect(verdict?.metrics).toHaveLength(2);
  });

  it('reports an unbound providerRef in one prometheus entry, with upstream\'s message', async () => {
    const config = parseMetricsConfig({ metricProviders: JSON.stringify({ other: { serverAddress: peer.address } }) }, peer.address);
    const before = peer.requests.length;
    const verdict = await executor(config).sample(request([metric('a', 'vector(1)')], { providerRef: { name: 'mimir' } }));
    expect(verdict).toEqual({
      outcome: 'Inconclusive',
      at,
      metrics: [{ name: 'prometheus', passed: false, message: 'metric provider "mimir" is not bound in this cluster\'s metricProviders configuration', time: at }],
    });
    expect(peer.requests.length).toBe(before);
  });

  it('reports a canary with no source anywhere in one prometheus entry', async () => {
    const verdict = await executor(parseMetricsConfig(undefined)).sample(request([metric('a', 'vector(1)')]));
    expect(verdict?.metrics).toEqual([{ name: 'prometheus', passed: false, message: expect.stringContaining('no metrics source') as unknown as string, time: at }]);
  });

  it('reports an address that makes no client in one prometheus entry', async () => {
    const verdict = await executor(parseMetricsConfig(undefined)).sample(request([metric('a', 'vector(1)')], { serverAddress: 'prometheus:9090' }));
    expect(verdict?.metrics).toEqual([{ name: 'prometheus', passed: false, message: 'build client for "prometheus:9090": unsupported protocol scheme "prometheus"', time: at }]);
  });

  it.each<[string, Record<string, Record<string, string>>, string]>([
    ['a missing Secret', {}, 'resolve bearer token: secret prod/prom-bearer not found'],
    ['a Secret without the key', { 'prod/prom-bearer': { other: 'x' } }, 'resolve bearer token: secret prod/prom-bearer has no key "token"'],
  ])('reports %s in one auth entry and sends no query', async (_name, secrets, message) => {
    const before = peer.requests.length;
    const verdict = await executor(parseMetricsConfig(undefined), secrets).sample(
      request([metric('a', 'vector(1)'), metric('b', 'vector(1)')], { serverAddress: viaTls(peer).address, authRef: { name: 'prom-bearer', key: 'token' } }),
    );
    expect(verdict).toEqual({ outcome: 'Inconclusive', at, metrics: [{ name: 'auth', passed: false, message, time: at }] });
    expect(peer.requests.length).toBe(before);
  });

  it('reports a configuration that does not parse in one config entry', async () => {
    const config = parseMetricsConfig({ metricProviders: '{"p":{}}' }, peer.address);
    const verdict = await executor(config).sample(request([metric('a', 'vector(1)')]));
    expect(verdict?.metrics).toEqual([{ name: 'config', passed: false, message: 'metric provider "p" has no serverAddress', time: at }]);
  });

  it('sends the binding\'s token and headers, the canary\'s headers winning key by key, and renders the template', async () => {
    peer.handle(vectorAnswer('0.01', '0.04'));
    const tls = viaTls(peer);
    const config = parseMetricsConfig({
      metricProviders: JSON.stringify({
        'cluster-prometheus': { serverAddress: tls.address, authSecretRef: { name: 'binding-token', key: 'token' }, headers: { 'X-Scope-OrgID': 'team-a', 'X-Extra': '1' } },
      }),
    });
    const before = peer.requests.length;
    const query = 'errors{ns="{{.Namespace}}",isvc="{{.ISVCName}}",c="{{.Component}}",rev="{{.CanaryRevision}}",stable="{{.StableRevision}}",svc="{{.CanaryService}}",ssvc="{{.StableService}}"}';
    const verdict = await executor(config, { 'prod/binding-token': { token: 'b1nd' } }, { fetch: tls.fetch }).sample(
      request([metric('err', query, 'LTE')], { providerRef: { name: 'cluster-prometheus' }, headers: { 'X-Scope-OrgID': 'team-b' } }),
    );
    expect(verdict?.metrics?.[0]).toMatchObject({ value: '0.04', passed: true });
    const sent = peer.requests[before];
    expect(sent?.headers.authorization).toBe('Bearer b1nd');
    expect(sent?.headers['x-scope-orgid']).toBe('team-b');
    expect(sent?.headers['x-extra']).toBe('1');
    const form = new URLSearchParams(sent?.body);
    expect(form.get('query')).toBe('errors{ns="prod",isvc="chat",c="engine",rev="b2",stable="a1",svc="chat-engine-rev-b2",ssvc="chat-engine-rev-a1"}');
    expect(form.get('time')).toBe(String(Date.parse(at) / 1000));
  });

  it('lets the canary\'s authRef replace the binding token', async () => {
    peer.handle(vectorAnswer('0'));
    const tls = viaTls(peer);
    const config = parseMetricsConfig({ metricProviders: JSON.stringify({ p: { serverAddress: tls.address, authSecretRef: { name: 'binding-token', key: 'token' } } }) });
    const before = peer.requests.length;
    await executor(config, { 'prod/own': { t: 'mine' } }, { fetch: tls.fetch }).sample(request([metric('a', 'vector(1)')], { providerRef: { name: 'p' }, authRef: { name: 'own', key: 't' } }));
    expect(peer.requests[before]?.headers.authorization).toBe('Bearer mine');
  });

  it('runs the metrics of a sample at once: a peer that answers only once both queries wait still answers both', async () => {
    const waiting: (() => void)[] = [];
    peer.handle((_request, response) => {
      waiting.push(() => vectorAnswer('0.01')(_request, response));
      if (waiting.length === 2) for (const answer of waiting.splice(0)) answer();
    });
    const config = { ...parseMetricsConfig(undefined, peer.address), queryTimeoutMs: 10_000 };
    const verdict = await executor(config).sample(request([metric('a', 'vector(1)'), metric('b', 'vector(2)')]));
    expect(verdict?.outcome).toBe('Successful');
  });

  it('bounds all the queries of a sample by one queryTimeout', async () => {
    peer.handle(() => {
      // hangs: only the sample's deadline ends the requests
    });
    const config = { ...parseMetricsConfig(undefined, peer.address), queryTimeoutMs: 200 };
    const verdict = await executor(config).sample(request([metric('a', 'vector(1)'), metric('b', 'vector(2)')]));
    expect(verdict?.outcome).toBe('Inconclusive');
    expect(verdict?.metrics?.map((m) => m.message)).toEqual([
      `Post "${peer.address}/api/v1/query": context deadline exceeded`,
      `Post "${peer.address}/api/v1/query": context deadline exceeded`,
    ]);
  });

  it('reads a 200 that is not a Prometheus answer as inconclusive with bad_response', async () => {
    peer.handle((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/html' });
      response.end('<html>model server</html>');
    });
    const verdict = await executor(parseMetricsConfig(undefined, peer.address)).sample(request([metric('a', 'vector(1)')]));
    expect(verdict?.outcome).toBe('Inconclusive');
    expect(verdict?.metrics?.[0]?.message).toMatch(/^bad_response: /);
  });

  it('reads a configuration that cannot be fetched as one config entry', async () => {
    const verdict = await createPrometheusExecutor({
      fence: loopbackFence,
      readConfig: () => Promise.reject(new Error('configmaps "inferenceservice-config" is forbidden')),
      readSecret: () => undefined,
      now: () => now,
    }).sample(request([metric('a', 'vector(1)')]));
    expect(verdict?.metrics).toEqual([{ name: 'config', passed: false, message: 'configmaps "inferenceservice-config" is forbidden', time: at }]);
    peer.handle(json(200, {}));
  });
});
