import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/app/config';
import { InvalidInputError } from '../../shared/domain/errors';

describe('Function: loadConfig — forwarder shards and API budgets', () => {
  it('defaults to one shard, a one-second hand-over poll and controller-runtime’s 20 QPS, burst 30', () => {
    expect(loadConfig({ TABLE_NAME: 't' })).toMatchObject({ forwarderShards: 1, forwarderLeasePollMs: 1_000, kubeApiQps: 20, kubeApiBurst: 30 });
  });

  it('reads them from the environment', () => {
    expect(loadConfig({ TABLE_NAME: 't', FORWARDER_SHARDS: '8', FORWARDER_LEASE_POLL: '2s', KUBE_API_QPS: '5.5', KUBE_API_BURST: '10' })).toMatchObject({
      forwarderShards: 8,
      forwarderLeasePollMs: 2_000,
      kubeApiQps: 5.5,
      kubeApiBurst: 10,
    });
  });

  it.each<[Record<string, string>, string]>([
    [{ FORWARDER_SHARDS: '0' }, 'FORWARDER_SHARDS="0" is not an integer >= 1'],
    [{ FORWARDER_SHARDS: 'four' }, 'FORWARDER_SHARDS="four" is not an integer >= 1'],
    [{ FORWARDER_LEASE_POLL: '1' }, 'FORWARDER_LEASE_POLL="1" is not a duration (time: missing unit in duration "1"); use Go duration syntax such as 30s, 5m, 1h30m, 1.5h or 300ms'],
    [{ KUBE_API_QPS: '0' }, 'KUBE_API_QPS="0" is not a number > 0'],
    [{ KUBE_API_QPS: 'fast' }, 'KUBE_API_QPS="fast" is not a number > 0'],
    [{ KUBE_API_BURST: '0' }, 'KUBE_API_BURST="0" is not an integer >= 1'],
  ])('refuses %o', (env, message) => {
    expect(() => loadConfig({ TABLE_NAME: 't', ...env })).toThrow(new InvalidInputError(message));
  });
});
