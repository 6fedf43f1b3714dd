import { describe, expect, it } from 'vitest';
import { metricsBinding, parseMetricsConfig, resolveMetricsSource, type MetricsConfig } from '../../shared/domain/analysis/metrics-config';
import type { AnalysisPrometheus } from '../../shared/domain/rollout/types';

const bindings = JSON.stringify({
  'cluster-prometheus': {
    serverAddress: 'http://prometheus.monitoring.svc:9090',
    authSecretRef: { name: 'prom-token', key: 'token' },
    headers: { 'X-Scope-OrgID': 'team-a', 'X-Extra': '1' },
  },
  plain: { serverAddress: 'http://plain:9090' },
});

describe('Function: parseMetricsConfig', () => {
  it('reads canaryAnalysis and metricProviders as upstream does', () => {
    const config = parseMetricsConfig({
      canaryAnalysis: JSON.stringify({ bundledPrometheusAddress: 'http://ome-prometheus.ome.svc:9090', defaultProvider: 'plain', queryTimeout: '9s', maxConcurrency: 8 }),
      metricProviders: bindings,
    });
    expect(config).toEqual({
      bundledPrometheusAddress: 'http://ome-prometheus.ome.svc:9090',
      defaultProvider: 'plain',
      queryTimeoutMs: 9_000,
      providers: {
        'cluster-prometheus': {
          serverAddress: 'http://prometheus.monitoring.svc:9090',
          authSecretRef: { name: 'prom-token', key: 'token' },
          headers: { 'X-Scope-OrgID': 'team-a', 'X-Extra': '1' },
        },
        plain: { serverAddress: 'http://plain:9090' },
      },
    });
  });

  it.each<[string, string | undefined, number]>([
    ['unset', undefined, 5_000],
    ['empty', '', 5_000],
    ['malformed', 'nope', 5_000],
    ['zero', '0s', 5_000],
    ['negative', '-5s', 5_000],
    ['a Go duration', '1m30s', 90_000],
    ['milliseconds', '250ms', 250],
  ])('a queryTimeout %s gives %d ms', (_name, queryTimeout, want) => {
    const analysis = queryTimeout === undefined ? {} : { queryTimeout };
    expect(parseMetricsConfig({ canaryAnalysis: JSON.stringify(analysis) }).queryTimeoutMs).toBe(want);
  });

  it('plays PROMETHEUS_ADDRESS as the bundled address only when the ConfigMap names none', () => {
    expect(parseMetricsConfig(undefined, 'http://local:9090').bundledPrometheusAddress).toBe('http://local:9090');
    expect(parseMetricsConfig({ canaryAnalysis: '{"bundledPrometheusAddress":""}' }, 'http://local:9090').bundledPrometheusAddress).toBe('http://local:9090');
    expect(parseMetricsConfig({ canaryAnalysis: '{"bundledPrometheusAddress":"http://cm:9090"}' }, 'http://local:9090').bundledPrometheusAddress).toBe('http://cm:9090');
    expect(parseMetricsConfig(undefined)).toEqual({ providers: {}, queryTimeoutMs: 5_000 });
  });

  it('honours the older autoscalerPolicy.metricProviders only while the top-level key is absent', () => {
    const nested = JSON.stringify({ metricProviders: { nested: { serverAddress: 'http://nested:9090' } }, preflight: { memberGetTimeoutSeconds: 7 } });
    expect(parseMetricsConfig({ autoscalerPolicy: nested }).providers).toEqual({ nested: { serverAddress: 'http://nested:9090' } });
    expect(Object.keys(parseMetricsConfig({ autoscalerPolicy: nested, metricProviders: bindings }).providers)).toEqual(['cluster-prometheus', 'plain']);
    // Present even as an empty object, the top-level key wins.
    expect(parseMetricsConfig({ autoscalerPolicy: nested, metricProviders: '{}' }).providers).toEqual({});
  });

  it.each<[string, Record<string, string>, string]>([
    ['a binding without serverAddress', { metricProviders: '{"a":{"serverAddress":"http://a"},"b":{"headers":{}}}' }, 'metric provider "b" has no serverAddress'],
    ['metricProviders that is not JSON', { metricProviders: '{nope' }, 'unable to parse metricProviders config json: '],
    ['canaryAnalysis that is not JSON', { canaryAnalysis: 'nope' }, 'unable to parse canaryAnalysis config json: '],
    ['canaryAnalysis that is a list', { canaryAnalysis: '[]' }, 'unable to parse canaryAnalysis config json: not a JSON object'],
    ['a binding of an unknown type', { metricProviders: '{"dd":{"type":"datadog","serverAddress":"https://dd"}}' }, 'metric provider "dd" has type "datadog": want "prometheus", "cloudwatch" or "amp"'],
    ['an amp binding without serverAddress', { metricProviders: '{"amp":{"type":"amp","region":"us-east-1"}}' }, 'metric provider "amp" has no serverAddress'],
    ['an AWS binding with a token', { metricProviders: '{"cw":{"type":"cloudwatch","authSecretRef":{"name":"t","key":"k"}}}' }, 'metric provider "cw" of type cloudwatch signs with the function\'s AWS role and takes no authSecretRef'],
    ['a region that is not one', { metricProviders: '{"cw":{"type":"cloudwatch","region":"Ireland"}}' }, 'metric provider "cw" has region "Ireland": want an AWS region such as "eu-west-1"'],
    ['a CloudWatch period CloudWatch refuses', { metricProviders: '{"cw":{"type":"cloudwatch","period":"90s"}}' }, 'metric provider "cw" has period "90s": want 1s, 5s, 10s, 20s, 30s or whole minutes'],
    ['a period on amp', { metricProviders: '{"amp":{"type":"amp","serverAddress":"https://aps","period":"1m"}}' }, 'metric provider "amp" of type amp takes no period'],
  ])('reports %s and binds nothing from it', (_name, data, problem) => {
    const config = parseMetricsConfig(data);
    expect(config.problem).toContain(problem);
    expect(config.providers).toEqual({});
    expect(metricsBinding(config)).toEqual({ boundProviders: new Set(), executor: false });
  });
});

describe('AWS bindings (type cloudwatch or amp)', () => {
  it.each<[string, Record<string, unknown>, unknown]>([
    ['a CloudWatch binding at its region\'s endpoint, one datapoint a minute', { type: 'cloudwatch', region: 'eu-west-1' }, { serverAddress: '', aws: { type: 'cloudwatch', region: 'eu-west-1', periodSeconds: 60 } }],
    ['a CloudWatch binding in the plane\'s region, every 5 minutes', { type: 'cloudwatch', period: '5m' }, { serverAddress: '', aws: { type: 'cloudwatch', periodSeconds: 300 } }],
    ['a high-resolution CloudWatch binding at an endpoint of its own', { type: 'cloudwatch', period: '10s', serverAddress: 'https://monitoring.vpce.example' }, { serverAddress: 'https://monitoring.vpce.example', aws: { type: 'cloudwatch', periodSeconds: 10 } }],
    ['a Managed Prometheus workspace', { type: 'amp', serverAddress: 'https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-1', headers: { 'X-Team': 'a' } }, { serverAddress: 'https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-1', headers: { 'X-Team': 'a' }, aws: { type: 'amp' } }],
    ['an explicit prometheus type, as no type', { type: 'prometheus', serverAddress: 'http://p:9090' }, { serverAddress: 'http://p:9090' }],
  ])('reads %s', (_name, binding, want) => {
    const config = parseMetricsConfig({ metricProviders: JSON.stringify({ source: binding }) });
    expect(config.problem).toBeUndefined();
    expect(config.providers.source).toEqual(want);
  });

  it('resolves an AWS source with no token, and only a Managed Prometheus source with headers', () => {
    const config = parseMetricsConfig({
      metricProviders: JSON.stringify({
        cw: { type: 'cloudwatch', headers: { 'X-Team': 'a' } },
        amp: { type: 'amp', serverAddress: 'https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-1', headers: { 'X-Team': 'a' } },
      }),
    });
    const canary = (name: string): AnalysisPrometheus => ({ providerRef: { name }, authRef: { name: 'mine', key: 'token' }, headers: { 'X-Canary': '1' } });

    expect(resolveMetricsSource(canary('cw'), config)).toEqual({ address: '', headers: {}, aws: { type: 'cloudwatch', periodSeconds: 60 } });
    expect(resolveMetricsSource(canary('amp'), config)).toEqual({
      address: 'https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-1',
      headers: { 'X-Team': 'a', 'X-Canary': '1' },
      aws: { type: 'amp' },
    });
    expect(metricsBinding(config)).toEqual({ boundProviders: new Set(['cw', 'amp']), executor: false });
  });
});

describe('Function: resolveMetricsSource', () => {
  const config: MetricsConfig = parseMetricsConfig({
    canaryAnalysis: JSON.stringify({ bundledPrometheusAddress: 'http://bundled:9090' }),
    metricProviders: bindings,
  });
  const withDefault = (defaultProvider: string): MetricsConfig => ({ ...config, defaultProvider });
  const noBundled: MetricsConfig = { providers: config.providers, queryTimeoutMs: 5_000 };
  const authRef = { name: 'own-token', key: 'tok' };

  it.each<[string, AnalysisPrometheus | undefined, MetricsConfig, unknown]>([
    ['no prometheus block → the bundled address', undefined, config, { address: 'http://bundled:9090', headers: {} }],
    ['an empty block → the bundled address', {}, config, { address: 'http://bundled:9090', headers: {} }],
    ['an empty serverAddress → the bundled address', { serverAddress: '' }, config, { address: 'http://bundled:9090', headers: {} }],
    ['no block, a bound defaultProvider → that binding', undefined, withDefault('cluster-prometheus'), {
      address: 'http://prometheus.monitoring.svc:9090',
      headers: { 'X-Scope-OrgID': 'team-a', 'X-Extra': '1' },
      tokenRef: { name: 'prom-token', key: 'token' },
    }],
    ['no block, an unbound defaultProvider → the bundled address', undefined, withDefault('gone'), { address: 'http://bundled:9090', headers: {} }],
    ['the bundled address keeps the canary\'s authRef and headers', { authRef, headers: { 'X-Scope-OrgID': 'mine' } }, config, {
      address: 'http://bundled:9090',
      headers: { 'X-Scope-OrgID': 'mine' },
      tokenRef: authRef,
    }],
    ['serverAddress → that address, with the canary\'s auth', { serverAddress: 'http://own:9090', authRef, headers: { A: '1' } }, config, {
      address: 'http://own:9090',
      headers: { A: '1' },
      tokenRef: authRef,
      canaryAddress: true,
    }],
    ['the canary\'s credential headers are dropped, any case; the binding\'s stay', {
      providerRef: { name: 'cluster-prometheus' },
      headers: { authorization: 'Bearer stolen', COOKIE: 'c', 'Proxy-Authorization': 'p', Host: 'evil', 'X-Scope-OrgID': 'team-b' },
    }, config, {
      address: 'http://prometheus.monitoring.svc:9090',
      headers: { 'X-Scope-OrgID': 'team-b', 'X-Extra': '1' },
      tokenRef: { name: 'prom-token', key: 'token' },
    }],
    ['providerRef → the binding with its token and headers', { providerRef: { name: 'cluster-prometheus' } }, config, {
      address: 'http://prometheus.monitoring.svc:9090',
      headers: { 'X-Scope-OrgID': 'team-a', 'X-Extra': '1' },
      tokenRef: { name: 'prom-token', key: 'token' },
    }],
    ['providerRef: authRef replaces the binding token, headers override key by key', { providerRef: { name: 'cluster-prometheus' }, authRef, headers: { 'X-Scope-OrgID': 'team-b' } }, config, {
      address: 'http://prometheus.monitoring.svc:9090',
      headers: { 'X-Scope-OrgID': 'team-b', 'X-Extra': '1' },
      tokenRef: authRef,
    }],
    ['providerRef to a binding without auth', { providerRef: { name: 'plain' } }, config, { address: 'http://plain:9090', headers: {} }],
    ['providerRef not bound → upstream\'s ProviderUnbound message', { providerRef: { name: 'mimir' } }, config, {
      problem: 'metric provider "mimir" is not bound in this cluster\'s metricProviders configuration',
    }],
    ['providerRef named like an Object member is not bound', { providerRef: { name: 'constructor' } }, config, {
      problem: 'metric provider "constructor" is not bound in this cluster\'s metricProviders configuration',
    }],
    ['no source anywhere → a problem naming what to set', undefined, noBundled, { problem: expect.stringContaining('no metrics source') }],
  ])('%s', (_name, prometheus, cfg, want) => {
    expect(resolveMetricsSource(prometheus, cfg)).toEqual(want);
  });
});

describe('Function: metricsBinding', () => {
  const providers = parseMetricsConfig({ metricProviders: bindings }).providers;
  it.each<[string, MetricsConfig, boolean]>([
    ['a bundled address', { providers, queryTimeoutMs: 5_000, bundledPrometheusAddress: 'http://b:9090' }, true],
    ['a bound default provider', { providers, queryTimeoutMs: 5_000, defaultProvider: 'plain' }, true],
    ['an unbound default provider and no bundled address', { providers, queryTimeoutMs: 5_000, defaultProvider: 'gone' }, false],
    ['nothing', { providers, queryTimeoutMs: 5_000 }, false],
  ])('with %s the default source exists: %s', (_name, config, executor) => {
    expect(metricsBinding(config)).toEqual({ boundProviders: new Set(['cluster-prometheus', 'plain']), executor });
  });
});
