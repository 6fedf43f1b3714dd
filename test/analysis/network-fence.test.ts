import { describe, expect, it } from 'vitest';
import {
  checkMetricsSource,
  checkResolvedAddresses,
  classifyAddress,
  parseSourceAllowlist,
  type AddressClass,
  type FenceCandidate,
  type MetricsFence,
  type SourceAllowlist,
} from '../../shared/domain/analysis/network-fence';
import { loadConfig, metricsFenceOf } from '../../shared/app/config';
import { InvalidInputError } from '../../shared/domain/errors';

describe('Function: classifyAddress', () => {
  it.each<[string, AddressClass]>([
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['172.32.0.1', 'public'],
    ['172.15.255.255', 'public'],
    ['192.168.1.1', 'private'],
    ['192.169.0.1', 'public'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['fd12:3456::1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:10.1.2.3', 'private'],
    ['8.8.8.8', 'public'],
    ['2606:4700::1111', 'public'],
  ])('%s is %s', (ip, want) => {
    expect(classifyAddress(ip)).toBe(want);
  });

  it('refuses what is not an IP address', () => {
    expect(() => classifyAddress('prometheus.svc')).toThrow(InvalidInputError);
  });
});

describe('Function: parseSourceAllowlist', () => {
  it.each<[string | undefined, SourceAllowlist]>([
    [undefined, { origins: [], ranges: [] }],
    ['', { origins: [], ranges: [] }],
    ['http://127.0.0.1:9090', { origins: ['http://127.0.0.1:9090'], ranges: [] }],
    ['https://Prometheus.Monitoring.svc:443/, http://ome-prometheus.ome.svc:9090', { origins: ['https://prometheus.monitoring.svc', 'http://ome-prometheus.ome.svc:9090'], ranges: [] }],
    ['10.20.0.0/16 fd00::/8,192.168.1.7', { origins: [], ranges: ['10.20.0.0/16', 'fd00::/8', '192.168.1.7/32'] }],
    ['::1', { origins: [], ranges: ['::1/128'] }],
  ])('reads %j', (text, want) => {
    expect(parseSourceAllowlist(text)).toEqual(want);
  });

  it.each([['prometheus.svc'], ['10.0.0.0/33'], ['10.0.0.0/x'], ['ftp://prom'], ['http://prom:9090/api'], ['http://user@prom'], ['10.0.0.0/8/1']])('refuses %j, naming it', (text) => {
    expect(() => parseSourceAllowlist(text)).toThrow(new RegExp(`ANALYSIS_SOURCE_ALLOWLIST: ${JSON.stringify(text).replace(/[/.]/g, '\\$&')}`));
  });

  it('is read once by loadConfig into the fence of the process', () => {
    const config = loadConfig({ TABLE_NAME: 't', CONTROL_PLANE_MODE: 'deployed', ANALYSIS_SOURCE_ALLOWLIST: 'https://mimir.example, 10.0.0.0/8' });
    expect(metricsFenceOf(config)).toEqual({ mode: 'deployed', allowlist: { origins: ['https://mimir.example'], ranges: ['10.0.0.0/8'] } });
    expect(metricsFenceOf(loadConfig({ TABLE_NAME: 't' }))).toEqual({ mode: 'local', allowlist: { origins: [], ranges: [] } });
    expect(() => loadConfig({ TABLE_NAME: 't', ANALYSIS_SOURCE_ALLOWLIST: 'nope' })).toThrow(InvalidInputError);
  });
});

const candidate = (address: string, over: Partial<FenceCandidate> = {}): FenceCandidate => ({ address, url: new URL(address), canaryAddress: false, bearer: false, ...over });
const local: MetricsFence = { mode: 'local', allowlist: { origins: [], ranges: [] } };
const deployed: MetricsFence = { mode: 'deployed', allowlist: { origins: [], ranges: [] } };

describe('Function: checkMetricsSource', () => {
  it.each<[string, FenceCandidate, MetricsFence, string | undefined]>([
    ['an operator source over https with a token', candidate('https://prom.example', { bearer: true }), deployed, undefined],
    ['an operator source over http without a token', candidate('http://prom.example'), deployed, undefined],
    ['a token over plain http (local)', candidate('http://prom.example:9090', { bearer: true }), local, 'auth: refusing to send a bearer token over plain http to http://prom.example:9090: use https'],
    ['a token over plain http (deployed, an operator source)', candidate('http://prom.example', { bearer: true }), deployed, 'auth: refusing to send a bearer token over plain http to http://prom.example: use https'],
    ['an AWS source signed over https', candidate('https://monitoring.eu-west-1.amazonaws.com', { signed: true }), deployed, undefined],
    [
      'an AWS source signed over plain http',
      candidate('http://monitoring.internal', { signed: true }),
      local,
      "auth: refusing to send requests signed with the function's AWS credentials over plain http to http://monitoring.internal: use https",
    ],
    ['a canary address, locally', candidate('https://mine.example', { canaryAddress: true }), local, undefined],
    [
      'a canary address in deployed mode',
      candidate('https://mine.example', { canaryAddress: true }),
      deployed,
      'prometheus: refusing the canary\'s own serverAddress https://mine.example: in deployed mode metrics come from metricProviders bindings (providerRef) unless ANALYSIS_SOURCE_ALLOWLIST lists the origin',
    ],
    ['a listed canary origin in deployed mode', candidate('https://mine.example/prom', { canaryAddress: true }), { mode: 'deployed', allowlist: { origins: ['https://mine.example'], ranges: [] } }, undefined],
    [
      'a listed canary origin still sends no token over http',
      candidate('http://mine.example', { canaryAddress: true, bearer: true }),
      { mode: 'deployed', allowlist: { origins: ['http://mine.example'], ranges: [] } },
      'auth: refusing to send a bearer token over plain http to http://mine.example: use https',
    ],
  ])('%s', (_name, source, fence, want) => {
    const refusal = checkMetricsSource(source, fence);
    expect(refusal ? `${refusal.entry}: ${refusal.message}` : undefined).toBe(want);
  });
});

describe('Function: checkResolvedAddresses', () => {
  const none: SourceAllowlist = { origins: [], ranges: [] };
  it.each<[string, string, string[], SourceAllowlist, string | undefined]>([
    ['a public address', 'https://prom.example', ['93.184.216.34'], none, undefined],
    ['the metadata service', 'http://169.254.169.254/', ['169.254.169.254'], none, 'refusing to query http://169.254.169.254/: 169.254.169.254, a link-local address; ANALYSIS_SOURCE_ALLOWLIST must list it to allow it'],
    ['a name with one private address among public ones', 'https://prom.example', ['93.184.216.34', '10.0.0.7'], none, 'refusing to query https://prom.example: prom.example resolves to 10.0.0.7, a private address; ANALYSIS_SOURCE_ALLOWLIST must list it to allow it'],
    ['loopback v6', 'http://[::1]:9090', ['::1'], none, 'refusing to query http://[::1]:9090: ::1, a loopback address; ANALYSIS_SOURCE_ALLOWLIST must list it to allow it'],
    ['the unspecified address', 'http://0.0.0.0:9090', ['0.0.0.0'], none, 'refusing to query http://0.0.0.0:9090: 0.0.0.0, an unspecified address; ANALYSIS_SOURCE_ALLOWLIST must list it to allow it'],
    ['a private address in a listed range', 'http://prom.svc:9090', ['10.96.4.2'], { origins: [], ranges: ['10.96.0.0/12'] }, undefined],
    ['a private address outside the listed range', 'http://prom.svc:9090', ['10.0.0.2'], { origins: [], ranges: ['10.96.0.0/12'] }, 'refusing to query http://prom.svc:9090: prom.svc resolves to 10.0.0.2, a private address; ANALYSIS_SOURCE_ALLOWLIST must list it to allow it'],
    ['a listed origin', 'http://127.0.0.1:9090', ['127.0.0.1'], { origins: ['http://127.0.0.1:9090'], ranges: [] }, undefined],
    ['the listed origin\'s host on another port', 'http://127.0.0.1:9091', ['127.0.0.1'], { origins: ['http://127.0.0.1:9090'], ranges: [] }, 'refusing to query http://127.0.0.1:9091: 127.0.0.1, a loopback address; ANALYSIS_SOURCE_ALLOWLIST must list it to allow it'],
    ['a range given without its prefix is one address', 'http://prom.svc', ['10.0.0.3'], { origins: [], ranges: ['10.0.0.2'] }, 'refusing to query http://prom.svc: prom.svc resolves to 10.0.0.3, a private address; ANALYSIS_SOURCE_ALLOWLIST must list it to allow it'],
  ])('%s', (_name, address, addresses, allowlist, want) => {
    expect(checkResolvedAddresses({ address, url: new URL(address) }, addresses, allowlist)).toBe(want);
  });
});
