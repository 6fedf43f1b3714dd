/**
 * Embedded API servers in cluster hosts (local/cluster-host): they answer over HTTP with the
 * injected latency and count what they answered; the in-process client, its typed errors,
 * the watch and the access log reach them over the IPC channel.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startClusterHosts } from '../../local/cluster-host';
import type { ClusterHosts } from '../../local/cluster-host';
import { AlreadyExistsError, NotFoundError } from '../../shared/domain/errors';
import { Resources } from '../../shared/domain/model/resources';
import type { KubeObject, WatchEvent } from '../../shared/ports/cluster';

const LATENCY_MS = 40;
const dir = mkdtempSync(join(tmpdir(), 'cluster-host-'));
let hosts: ClusterHosts;
const started: number[] = [];

beforeAll(async () => {
  const specs = [0, 1, 2].map((index) => ({
    index,
    options: { latencyMs: LATENCY_MS, bookmarkIntervalMs: 200 },
    kubeconfigPath: join(dir, `kubeconfig-${index}`),
    identityKubeconfigPath: join(dir, `identities-${index}`),
  }));
  hosts = await startClusterHosts(specs, 2, (info) => started.push(info.index));
}, 120_000);

afterAll(async () => {
  await hosts?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const tokenOf = (index: number): string => (parse(readFileSync(join(dir, `kubeconfig-${index}`), 'utf8')) as { users: Array<{ user: { token: string } }> }).users[0]?.user.token ?? '';

const namespace = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

describe('Cluster hosts', () => {
  it('start every cluster asked for, in two processes other than this one', async () => {
    expect(started.sort()).toEqual([0, 1, 2]);
    expect(hosts.clusters.map((cluster) => cluster.index)).toEqual([0, 1, 2]);
    const stats = await hosts.stats();
    expect(stats).toHaveLength(2);
    expect(stats.map((host) => host.clusters).sort()).toEqual([1, 2]);
    for (const host of stats) {
      expect(host.pid).not.toBe(process.pid);
      expect(host.cpuUserMicros).toBeGreaterThan(0);
      expect(host.loopDelayMs.max).toBeGreaterThanOrEqual(host.loopDelayMs.p50);
    }
  });

  it('answer HTTP requests after the injected latency, count them and log who made them', async () => {
    // Prepare
    const cluster = hosts.clusters[1]!;
    const before = await cluster.observe.requestCounts();
    const logFrom = (await cluster.observe.accessLog()).length;

    // Act
    const began = Date.now();
    const response = await fetch(`${cluster.url}/api/v1/namespaces/ome`, { headers: { authorization: `Bearer ${tokenOf(1)}` } });

    // Assess
    expect(response.status).toBe(200);
    expect(Date.now() - began).toBeGreaterThanOrEqual(LATENCY_MS);
    const after = await cluster.observe.requestCounts();
    expect(after.requests - before.requests).toBe(1);
    const page = await cluster.observe.accessLog(logFrom);
    expect(page.records).toEqual([expect.objectContaining({ verb: 'get', target: 'namespaces', name: 'ome', allowed: true })]);
    expect(page.length).toBe(logFrom + 1);
  });

  it('serve the in-process client over the channel, uncounted, with the typed errors of the in-process client', async () => {
    // Prepare
    const cluster = hosts.clusters[2]!;
    const before = await cluster.observe.requestCounts();

    // Act
    await cluster.client.create(Resources.namespaces, namespace('hosted'));

    // Assess
    expect((await cluster.client.get<KubeObject>(Resources.namespaces, undefined, 'hosted')).metadata.name).toBe('hosted');
    await expect(cluster.client.create(Resources.namespaces, namespace('hosted'))).rejects.toBeInstanceOf(AlreadyExistsError);
    await expect(cluster.client.get(Resources.namespaces, undefined, 'absent')).rejects.toBeInstanceOf(NotFoundError);
    expect((await cluster.observe.requestCounts()).requests).toBe(before.requests);
    // The other clusters are apart.
    await expect(hosts.clusters[0]!.client.get(Resources.namespaces, undefined, 'hosted')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('stream a watch over the channel until its signal aborts', async () => {
    // Prepare
    const cluster = hosts.clusters[0]!;
    const events: WatchEvent[] = [];
    const abort = new AbortController();
    const watching = cluster.client.watch(Resources.namespaces, { signal: abort.signal, allowWatchBookmarks: true }, (event) => {
      events.push(event);
    });

    // Act
    await new Promise((resolve) => setTimeout(resolve, 100));
    await cluster.client.create(Resources.namespaces, namespace('watched'));
    for (let waited = 0; !events.some((event) => event.object.metadata.name === 'watched') && waited < 5_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    abort.abort();

    // Assess
    await watching;
    expect(events.some((event) => event.type === 'ADDED' && event.object.metadata.name === 'watched')).toBe(true);
  });
});
