/**
 * The network fence at work: a local HTTP peer stands in for every address a sample might
 * reach (the executor's fetch carries any request to it), and counts what arrives. A
 * refused source must leave the count unchanged.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPrometheusExecutor, type PrometheusExecutorDeps } from '../../shared/adapters/prometheus/executor';
import type { LookupAllFn } from '../../shared/adapters/prometheus/pinned-fetch';
import { parseMetricsConfig, type MetricsConfig } from '../../shared/domain/analysis/metrics-config';
import type { MetricsFence } from '../../shared/domain/analysis/network-fence';
import type { AnalysisSampleRequest } from '../../shared/ports/analysis';
import type { AnalysisPrometheus } from '../../shared/domain/rollout/types';
import { startHttpPeer, vectorAnswer, viaTls, type HttpPeer } from '../support/http-peer';

const now = new Date('2026-12-01T20:00:00Z');
const at = '2026-12-01T20:00:00Z';

function request(prometheus: AnalysisPrometheus): AnalysisSampleRequest {
  return {
    namespace: 'prod',
    isvcName: 'chat',
    component: 'engine',
    canaryRevision: 'b2',
    stableRevision: 'a1',
    step: 0,
    analysis: { interval: '1m', failureLimit: 2, metrics: [{ name: 'err', query: 'errors', operator: 'LT', threshold: '0.05' }] },
    prometheus,
  };
}

const localFence = (ranges: string[] = [], origins: string[] = []): MetricsFence => ({ mode: 'local', allowlist: { origins, ranges } });

describe('Prometheus executor behind the network fence', () => {
  let peer: HttpPeer;
  let secretReads: number;
  /** Carries a request for any address to the peer, so a refused one would be seen there. */
  let toPeer: typeof fetch;

  beforeAll(async () => {
    peer = await startHttpPeer(vectorAnswer('0.01'));
    toPeer = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      return fetch(new URL(`${url.pathname}${url.search}`, peer.address), init);
    };
  });
  afterAll(async () => {
    await peer.close();
  });
  beforeEach(() => {
    secretReads = 0;
  });

  function executor(fence: MetricsFence, extra: Partial<PrometheusExecutorDeps> = {}, config: MetricsConfig = parseMetricsConfig(undefined)) {
    return createPrometheusExecutor({
      fence,
      readConfig: () => config,
      readSecret: () => {
        secretReads += 1;
        return 's3cret';
      },
      now: () => now,
      ...extra,
    });
  }

  it('refuses the metadata service at http://169.254.169.254/ and sends nothing', async () => {
    const before = peer.requests.length;
    const verdict = await executor(localFence(), { fetch: toPeer }).sample(request({ serverAddress: 'http://169.254.169.254/' }));
    expect(verdict).toEqual({
      outcome: 'Inconclusive',
      at,
      metrics: [{ name: 'prometheus', passed: false, message: 'refusing to query http://169.254.169.254/: 169.254.169.254, a link-local address; ANALYSIS_SOURCE_ALLOWLIST must list it to allow it', time: at }],
    });
    expect(peer.requests.length).toBe(before);
  });

  it('refuses a host name if any address it resolves to is blocked, and reads no Secret', async () => {
    const lookup: LookupAllFn = async () => [{ address: '93.184.216.34', family: 4 }, { address: '169.254.169.254', family: 4 }];
    const before = peer.requests.length;
    const verdict = await executor(localFence(), { fetch: toPeer, lookup }).sample(request({ serverAddress: 'https://metrics.example.test', authRef: { name: 't', key: 'k' } }));
    expect(verdict?.metrics?.[0]?.message).toBe(
      'refusing to query https://metrics.example.test: metrics.example.test resolves to 169.254.169.254, a link-local address; ANALYSIS_SOURCE_ALLOWLIST must list it to allow it',
    );
    expect(peer.requests.length).toBe(before);
    expect(secretReads).toBe(0);
  });

  it('refuses a bearer token over plain http in an auth entry, before reading the Secret or sending anything', async () => {
    const before = peer.requests.length;
    const verdict = await executor(localFence(['127.0.0.0/8']), { fetch: toPeer }).sample(request({ serverAddress: peer.address, authRef: { name: 'prom-bearer', key: 'token' } }));
    expect(verdict).toEqual({
      outcome: 'Inconclusive',
      at,
      metrics: [{ name: 'auth', passed: false, message: `refusing to send a bearer token over plain http to ${peer.address}: use https`, time: at }],
    });
    expect(peer.requests.length).toBe(before);
    expect(secretReads).toBe(0);
  });

  it('refuses a binding that points a token at plain http too', async () => {
    const config = parseMetricsConfig({ metricProviders: JSON.stringify({ p: { serverAddress: peer.address, authSecretRef: { name: 'b', key: 'k' } } }) });
    const before = peer.requests.length;
    const verdict = await executor(localFence(['127.0.0.0/8']), { fetch: toPeer }, config).sample(request({ providerRef: { name: 'p' } }));
    expect(verdict?.metrics).toEqual([{ name: 'auth', passed: false, message: `refusing to send a bearer token over plain http to ${peer.address}: use https`, time: at }]);
    expect(peer.requests.length).toBe(before);
  });

  it('sends none of the canary\'s Authorization, Cookie, Proxy-Authorization or Host headers', async () => {
    const before = peer.requests.length;
    const headers = { authorization: 'Bearer stolen', Cookie: 'session=1', 'PROXY-AUTHORIZATION': 'Basic x', Host: 'evil.example', 'X-Scope-OrgID': 'team-b' };
    const verdict = await executor(localFence(['127.0.0.0/8'])).sample(request({ serverAddress: peer.address, headers }));
    expect(verdict?.outcome).toBe('Successful');
    const sent = peer.requests[before];
    expect(sent?.headers.authorization).toBeUndefined();
    expect(sent?.headers.cookie).toBeUndefined();
    expect(sent?.headers['proxy-authorization']).toBeUndefined();
    expect(sent?.headers.host).toBe(new URL(peer.address).host);
    expect(sent?.headers['x-scope-orgid']).toBe('team-b');
  });

  it('sends the token to an allowed https source, and the canary\'s Authorization header does not replace it', async () => {
    const tls = viaTls(peer);
    const before = peer.requests.length;
    const verdict = await executor(localFence(['127.0.0.1/32']), { fetch: tls.fetch }).sample(
      request({ serverAddress: tls.address, authRef: { name: 'prom-bearer', key: 'token' }, headers: { Authorization: 'Basic mine' } }),
    );
    expect(verdict?.outcome).toBe('Successful');
    expect(peer.requests.length).toBe(before + 1);
    expect(peer.requests[before]?.headers.authorization).toBe('Bearer s3cret');
  });

  it('queries a loopback source whose origin is listed (the local plane\'s Prometheus), and refuses it when not', async () => {
    const before = peer.requests.length;
    expect((await executor(localFence([], [peer.address])).sample(request({ serverAddress: peer.address })))?.outcome).toBe('Successful');
    expect(peer.requests.length).toBe(before + 1);
    const refused = await executor(localFence()).sample(request({ serverAddress: peer.address }));
    expect(refused?.metrics?.[0]?.message).toBe(`refusing to query ${peer.address}: 127.0.0.1, a loopback address; ANALYSIS_SOURCE_ALLOWLIST must list it to allow it`);
    expect(peer.requests.length).toBe(before + 1);
  });

  it('connects to the address it checked, not to what the name resolves to later', async () => {
    const port = new URL(peer.address).port;
    // `rebind.invalid` never resolves in DNS: the request can only reach the peer through the checked address.
    const lookup: LookupAllFn = async (host) => (host === 'rebind.invalid' ? [{ address: '127.0.0.1', family: 4 }] : []);
    const before = peer.requests.length;
    const verdict = await executor(localFence(['127.0.0.1/32']), { lookup }).sample(request({ serverAddress: `http://rebind.invalid:${port}` }));
    expect(verdict?.outcome).toBe('Successful');
    expect(peer.requests[before]?.headers.host).toBe(`rebind.invalid:${port}`);
  });

  describe('in deployed mode', () => {
    const deployed = (origins: string[] = []): MetricsFence => ({ mode: 'deployed', allowlist: { origins, ranges: ['127.0.0.0/8'] } });

    it('refuses the canary\'s own serverAddress and sends nothing', async () => {
      const before = peer.requests.length;
      const verdict = await executor(deployed(), { fetch: toPeer }).sample(request({ serverAddress: peer.address }));
      expect(verdict?.metrics).toEqual([
        {
          name: 'prometheus',
          passed: false,
          message: `refusing the canary's own serverAddress ${peer.address}: in deployed mode metrics come from metricProviders bindings (providerRef) unless ANALYSIS_SOURCE_ALLOWLIST lists the origin`,
          time: at,
        },
      ]);
      expect(peer.requests.length).toBe(before);
    });

    it('queries a metricProviders binding, and a canary address whose origin is listed', async () => {
      const config = parseMetricsConfig({ metricProviders: JSON.stringify({ p: { serverAddress: peer.address } }) });
      const before = peer.requests.length;
      expect((await executor(deployed(), {}, config).sample(request({ providerRef: { name: 'p' } })))?.outcome).toBe('Successful');
      expect((await executor(deployed([peer.address])).sample(request({ serverAddress: `${peer.address}/` })))?.outcome).toBe('Successful');
      expect(peer.requests.length).toBe(before + 2);
    });
  });
});
