/**
 * Analysis against the AWS metric sources, through the executor and local peers that check
 * each request's SigV4 signature as AWS does: a CloudWatch-gated canary passes and fails
 * on the latest datapoint of its Metrics Insights query; Amazon Managed Service for
 * Prometheus is queried with PromQL, signed for `aps`; a wrong key, plain http, or no
 * credentials read inconclusive saying why, and nothing is sent unsigned.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrometheusExecutor, type PrometheusExecutorDeps } from '../../shared/adapters/prometheus/executor';
import { parseMetricsConfig } from '../../shared/domain/analysis/metrics-config';
import type { MetricsFence } from '../../shared/domain/analysis/network-fence';
import type { AnalysisSampleRequest } from '../../shared/ports/analysis';
import type { AnalysisMetric } from '../../shared/domain/rollout/types';
import { startAmpPeer, startCloudWatchPeer, type AwsMetricsPeer, type PeerSeries } from '../support/aws-metrics-peer';
import { viaTls } from '../support/http-peer';

const now = new Date('2026-12-01T20:00:00.750Z');
const at = '2026-12-01T20:00:00Z';
const nowSeconds = Math.floor(now.getTime() / 1000);
const role = { accessKeyId: 'AKIAROLLOUTRUN', secretAccessKey: 'rollout-run-secret', sessionToken: 'session-of-rollout-run' };
const loopbackFence: MetricsFence = { mode: 'local', allowlist: { origins: [], ranges: ['127.0.0.0/8'] } };

const errorRatio: AnalysisMetric = {
  name: 'error-ratio',
  query: `SELECT AVG(ErrorRatio) FROM SCHEMA("OME/Serving", Service) WHERE Service = '{{.CanaryService}}'`,
  operator: 'LT',
  threshold: '0.05',
};

function request(metrics: AnalysisMetric[], provider = 'cloudwatch'): AnalysisSampleRequest {
  return {
    namespace: 'prod',
    isvcName: 'chat',
    component: 'engine',
    canaryRevision: 'b2',
    stableRevision: 'a1',
    step: 0,
    analysis: { interval: '1m', failureLimit: 2, metrics },
    prometheus: { providerRef: { name: provider } },
  };
}

function executor(bindings: Record<string, unknown>, peer: AwsMetricsPeer, extra: Partial<PrometheusExecutorDeps> = {}) {
  const tls = viaTls(peer as never);
  const withAddress = Object.fromEntries(Object.entries(bindings).map(([name, binding]) => [name, JSON.parse(JSON.stringify(binding).replaceAll('PEER', tls.address))]));
  return createPrometheusExecutor({
    fence: loopbackFence,
    readConfig: () => parseMetricsConfig({ metricProviders: JSON.stringify(withAddress) }),
    readSecret: () => {
      throw new Error('an AWS source reads no Secret');
    },
    fetch: tls.fetch,
    awsCredentials: async () => role,
    awsRegion: 'eu-west-1',
    now: () => now,
    ...extra,
  });
}

describe('CloudWatch-gated canary against the local GetMetricData peer', () => {
  let peer: AwsMetricsPeer;
  // The canary's error ratio, a datapoint a minute; the test sets the latest.
  let latest = 0.01;
  const series = (expression: string): PeerSeries[] =>
    expression.includes(`Service = 'chat-engine-rev-b2'`)
      ? [{ label: 'chat-engine-rev-b2', points: [[nowSeconds - 180, 0.5], [nowSeconds - 60, latest], [nowSeconds + 60, 0.9]] }]
      : [];
  beforeAll(async () => {
    peer = await startCloudWatchPeer({ credentials: role, region: 'eu-west-1', now: () => now, series });
  });
  afterAll(async () => {
    await peer.close();
  });
  const binding = { cloudwatch: { type: 'cloudwatch', serverAddress: 'PEER', region: 'eu-west-1' } };

  it('passes a healthy canary on the latest datapoint in the window, with a signed GetMetricData call', async () => {
    // Act
    const verdict = await executor(binding, peer).sample(request([errorRatio]));

    // Assess
    expect(verdict).toMatchObject({ outcome: 'Successful', at, metrics: [{ name: 'error-ratio', value: '0.01', passed: true }] });
    const sent = peer.requests.at(-1)!;
    expect(sent.signatureValid).toBe(true);
    expect(String(sent.headers.authorization)).toContain('/eu-west-1/monitoring/aws4_request');
    expect(sent.headers['x-amz-security-token']).toBe(role.sessionToken);
    expect(JSON.parse(sent.body)).toEqual({
      MetricDataQueries: [{ Id: 'q', Expression: errorRatio.query.replace('{{.CanaryService}}', 'chat-engine-rev-b2'), Period: 60, ReturnData: true }],
      StartTime: nowSeconds - 300,
      EndTime: nowSeconds,
      ScanBy: 'TimestampDescending',
    });
  });

  it('fails a breached canary with its value', async () => {
    latest = 0.2;
    const verdict = await executor(binding, peer).sample(request([errorRatio]));
    latest = 0.01;

    expect(verdict).toMatchObject({ outcome: 'Failed', metrics: [{ name: 'error-ratio', value: '0.2', passed: false }] });
  });

  it('reads a query with no datapoint in its window as no data, inconclusive', async () => {
    const verdict = await executor(binding, peer).sample(request([{ ...errorRatio, query: `SELECT AVG(ErrorRatio) FROM "OME/Serving" WHERE Service = 'other'` }]));

    expect(verdict).toMatchObject({ outcome: 'Inconclusive', metrics: [{ name: 'error-ratio', message: 'no data' }] });
  });

  it('asks over five of the binding period', async () => {
    const verdict = await executor({ cloudwatch: { type: 'cloudwatch', serverAddress: 'PEER', region: 'eu-west-1', period: '5m' } }, peer).sample(request([errorRatio]));

    expect(verdict?.outcome).toBe('Successful');
    expect(JSON.parse(peer.requests.at(-1)!.body)).toMatchObject({ StartTime: nowSeconds - 1500, MetricDataQueries: [{ Period: 300 }] });
  });

  it('reads a request signed with another key as inconclusive, with the error AWS gives', async () => {
    const verdict = await executor(binding, peer, { awsCredentials: async () => ({ ...role, secretAccessKey: 'not-the-secret' }) }).sample(request([errorRatio]));

    expect(verdict).toMatchObject({ outcome: 'Inconclusive', metrics: [{ name: 'error-ratio', message: expect.stringContaining('cloudwatch: InvalidSignatureException: The request signature we calculated does not match') }] });
    expect(peer.requests.at(-1)!.signatureValid).toBe(false);
  });

  it('sends nothing when the function has no credentials, and says so in one auth entry', async () => {
    const before = peer.requests.length;
    const verdict = await executor(binding, peer, { awsCredentials: async () => Promise.reject(new Error('Could not load credentials from any providers')) }).sample(request([errorRatio]));

    expect(verdict).toMatchObject({ outcome: 'Inconclusive', metrics: [{ name: 'auth', message: 'resolve AWS credentials: Could not load credentials from any providers' }] });
    expect(peer.requests).toHaveLength(before);
  });

  it('refuses to sign over plain http, sending nothing', async () => {
    const before = peer.requests.length;
    const plain = createPrometheusExecutor({
      fence: loopbackFence,
      readConfig: () => parseMetricsConfig({ metricProviders: JSON.stringify({ cloudwatch: { type: 'cloudwatch', serverAddress: peer.address, region: 'eu-west-1' } }) }),
      readSecret: () => undefined,
      awsCredentials: async () => role,
      now: () => now,
    });

    const verdict = await plain.sample(request([errorRatio]));

    expect(verdict).toMatchObject({
      outcome: 'Inconclusive',
      metrics: [{ name: 'auth', message: `refusing to send requests signed with the function's AWS credentials over plain http to ${peer.address}: use https` }],
    });
    expect(peer.requests).toHaveLength(before);
  });
});

describe('Amazon Managed Service for Prometheus against the local workspace peer', () => {
  let peer: AwsMetricsPeer;
  beforeAll(async () => {
    peer = await startAmpPeer({ credentials: role, region: 'us-east-2', workspace: 'ws-1234', now: () => now, values: (query) => (query.includes('chat-engine-rev-b2') ? ['0.02', '0.07'] : []) });
  });
  afterAll(async () => {
    await peer.close();
  });

  it('judges the worst series of a PromQL query signed for aps in the binding region', async () => {
    const binding = { amp: { type: 'amp', serverAddress: 'PEER/workspaces/ws-1234', region: 'us-east-2', headers: { 'X-Team': 'serving' } } };
    const metric: AnalysisMetric = { name: 'errors', query: 'rate(errors{service="{{.CanaryService}}"}[1m])', operator: 'LT', threshold: '0.05' };

    const verdict = await executor(binding, peer).sample(request([metric], 'amp'));

    expect(verdict).toMatchObject({ outcome: 'Failed', metrics: [{ name: 'errors', value: '0.07', passed: false }] });
    const sent = peer.requests.at(-1)!;
    expect(sent.signatureValid).toBe(true);
    expect(String(sent.headers.authorization)).toContain('/us-east-2/aps/aws4_request');
    expect(sent.headers['x-team']).toBe('serving');
    expect(new URLSearchParams(sent.body).get('query')).toBe('rate(errors{service="chat-engine-rev-b2"}[1m])');
  });

  it('signs for the plane region when neither the binding nor the endpoint names one, which the peer refuses here', async () => {
    const verdict = await executor({ amp: { type: 'amp', serverAddress: 'PEER/workspaces/ws-1234' } }, peer).sample(request([{ name: 'errors', query: 'vector(0)', operator: 'LT', threshold: '1' }], 'amp'));

    expect(verdict?.outcome).toBe('Inconclusive');
    expect(String(peer.requests.at(-1)!.headers.authorization)).toContain('/eu-west-1/aps/aws4_request');
    expect(peer.requests.at(-1)!.signatureValid).toBe(false);
  });
});
