/**
 * The cluster mode of a registry record: parsed strictly, refused with a message that names
 * the cluster and both values when missing or wrong, and refused wherever a record is used
 * (the app context that functions, the forwarder and the webhook connect through).
 */
import { describe, expect, it } from 'vitest';
import { forClusterMode } from '../../shared/app/cluster-mode';
import { clusterModeOf, ClusterModeError, formatClusterModeProblem, parseClusterMode } from '../../shared/domain/cluster-mode';
import { createAppContext } from '../../shared/app/context';
import { loadConfig } from '../../shared/app/config';
import { isRetryable } from '../../shared/domain/errors';
import type { ClusterRecord } from '../../shared/ports/store';
import { createMemoryStores } from '../../shared/adapters/memory';

const FIX = 'set "mode" to "standalone" (no OME controller runs in the cluster; the plane renders and writes status) or "delegate" (OME\'s controller runs there; the plane acts through annotations and spec.runtime.revision)';

describe('parseClusterMode', () => {
  it.each([
    ['standalone', 'standalone'],
    ['delegate', 'delegate'],
    ['Standalone', undefined],
    [' delegate', undefined],
    ['delegated', undefined],
    ['', undefined],
    [undefined, undefined],
    [null, undefined],
    [1, undefined],
    [{ mode: 'delegate' }, undefined],
  ])('%j -> %j', (raw, expected) => {
    expect(parseClusterMode(raw)).toBe(expected);
  });
});

describe('clusterModeOf', () => {
  it.each([
    ['no mode', { id: 'prod-eu' }, `cluster "prod-eu" has no mode in its registry record; ${FIX}`],
    ['an empty mode', { id: 'prod-eu', mode: '' }, `cluster "prod-eu" has no mode in its registry record; ${FIX}`],
    ['another value', { id: 'edge', mode: 'upstream' }, `cluster "edge" has mode "upstream" in its registry record, which is not a mode; ${FIX}`],
    ['a value in another case', { id: 'edge', mode: 'Delegate' }, `cluster "edge" has mode "Delegate" in its registry record, which is not a mode; ${FIX}`],
  ])('refuses a record with %s, naming the cluster and how to fix it; terminal', (_what, record, message) => {
    let thrown: unknown;
    try {
      clusterModeOf(record);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ClusterModeError);
    expect((thrown as ClusterModeError).message).toBe(message);
    expect((thrown as ClusterModeError).clusterId).toBe(record.id);
    expect(isRetryable(thrown)).toBe(false);
  });

  it.each(['standalone', 'delegate'] as const)('reads %s', (mode) => {
    expect(clusterModeOf({ id: 'x', mode })).toBe(mode);
  });

  it('words the refusal from one place', () => {
    expect(formatClusterModeProblem('x', undefined)).toBe(`cluster "x" has no mode in its registry record; ${FIX}`);
  });
});

describe('forClusterMode', () => {
  it.each([
    ['standalone', 'S'],
    ['delegate', 'D'],
  ] as const)('runs only the %s use-case', async (mode, expected) => {
    const ran: string[] = [];
    const result = await forClusterMode(
      { mode },
      {
        standalone: async () => (ran.push('S'), 'S'),
        delegate: async () => (ran.push('D'), 'D'),
      },
    );
    expect(result).toBe(expected);
    expect(ran).toEqual([expected]);
  });
});

describe('a registry record without a mode, where records are used', () => {
  const legacy = { id: 'legacy', server: 'https://127.0.0.1:1', credentials: { kind: 'kubeconfig', kubeconfig: 'apiVersion: v1\nkind: Config\n' }, omeNamespace: 'ome' };

  async function contextWith(record: object): Promise<{ app: ReturnType<typeof createAppContext>; connects: string[] }> {
    const stores = createMemoryStores();
    // As an older version wrote it: the table holds no mode.
    await stores.clusters.putCluster(record as ClusterRecord);
    const connects: string[] = [];
    const app = createAppContext({
      config: loadConfig({ TABLE_NAME: 'unused' }),
      stores,
      connectCluster: (found) => {
        connects.push(found.id);
        return { server: found.server, applyTo: async () => undefined };
      },
    });
    return { app, connects };
  }

  it('is refused before any connection: the client, and the mode itself', async () => {
    const { app, connects } = await contextWith(legacy);
    await expect(app.cluster('legacy')).rejects.toThrow(new ClusterModeError('legacy', undefined));
    await expect(app.clusterMode('legacy')).rejects.toBeInstanceOf(ClusterModeError);
    expect(connects).toEqual([]);
  });

  it('gives a handle that carries the mode once the record names one', async () => {
    const { app, connects } = await contextWith({ ...legacy, mode: 'delegate' });
    expect((await app.cluster('legacy')).mode).toBe('delegate');
    expect(await app.clusterMode('legacy')).toBe('delegate');
    expect(connects).toEqual(['legacy']);
  });
});

describe('the mode the admission webhook asks for on every review', () => {
  it('is read from the registry once a minute per cluster at most; a failed read is not kept', async () => {
    // Prepare: a registry that counts its reads, and a clock the test moves
    const stores = createMemoryStores();
    let now = 1_000_000;
    let reads = 0;
    const getCluster = stores.clusters.getCluster.bind(stores.clusters);
    stores.clusters.getCluster = async (id) => ((reads += 1), getCluster(id));
    const app = createAppContext({ config: loadConfig({ TABLE_NAME: 'unused' }), stores, clock: { now: () => now } });
    await stores.clusters.putCluster({ id: 'edge', server: 'https://127.0.0.1:1', credentials: { kind: 'kubeconfig', kubeconfig: '' }, omeNamespace: 'ome', mode: 'standalone' });

    // Act: a hundred reviews, an operator's switch to delegate, the minute passing
    const first = await Promise.all(Array.from({ length: 100 }, () => app.clusterMode('edge')));
    const readsForHundred = reads;
    await stores.clusters.putCluster({ id: 'edge', server: 'https://127.0.0.1:1', credentials: { kind: 'kubeconfig', kubeconfig: '' }, omeNamespace: 'ome', mode: 'delegate' });
    const withinMinute = await app.clusterMode('edge');
    now += 60_001;
    const afterMinute = await app.clusterMode('edge');
    const unknown = await app.clusterMode('nowhere').catch((error: unknown) => error);
    const readsBeforeRetry = reads;
    await app.clusterMode('nowhere').catch(() => undefined);

    // Assess
    expect(new Set(first)).toEqual(new Set(['standalone']));
    expect(readsForHundred).toBe(1);
    expect(withinMinute).toBe('standalone');
    expect(afterMinute).toBe('delegate');
    expect(String(unknown)).toContain('cluster nowhere is not registered');
    expect(reads).toBe(readsBeforeRetry + 1);
  });
});
