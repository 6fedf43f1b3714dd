/**
 * The embedded API server under load, each figure beside a baseline from the same run:
 * listing 10,000 objects over HTTP against JSON-serialising the same objects; a write
 * reaching 10 HTTP watchers against reaching one; get and patch requests per second
 * against a trivial endpoint (`/healthz`) of the same server.
 */
import http from 'node:http';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startEmbeddedCluster, type EmbeddedCluster } from '../local/cluster';
import type { ResourceType } from '../shared/ports/cluster';
import { benchSize, compare, medianMs } from './harness';
import type { BenchResult, BenchSuite } from './harness';

const OBJECTS = benchSize(10_000, 200);
const NS = 'bench';
const CONFIGMAPS: ResourceType = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/** The operator's bearer token: the embedded API server authenticates every request, as a real one does. */
let adminToken = '';

function request(url: string, method = 'GET', body?: string, contentType?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = { authorization: `Bearer ${adminToken}`, ...(contentType ? { 'Content-Type': contentType } : {}) };
    const req = http.request(url, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ((res.statusCode ?? 500) < 300 ? resolve(Buffer.concat(chunks).toString()) : reject(new Error(`${method} ${url}: ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Requests per second of `count` requests issued by `concurrency` loops. */
async function throughput(count: number, concurrency: number, issue: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next;
        next += 1;
        await issue(i);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return count / seconds;
}

/** Opens `n` watches and resolves a function that waits until each has seen `events` lines. */
async function openWatches(url: string, n: number): Promise<{ until(events: number): Promise<void>; close(): void }> {
  const counts = new Array<number>(n).fill(0);
  const requests: http.ClientRequest[] = [];
  await Promise.all(
    Array.from({ length: n }, (_, i) => new Promise<void>((resolve, reject) => {
      const req = http.get(url, { headers: { authorization: `Bearer ${adminToken}` } }, (res) => {
        // A refused watch never sees an event: fail rather than wait for one.
        if (res.statusCode !== 200) {
          reject(new Error(`watch ${url}: ${res.statusCode}`));
          return;
        }
        res.on('data', (chunk: Buffer) => {
          for (const byte of chunk) if (byte === 10) counts[i] = (counts[i] ?? 0) + 1;
        });
        resolve();
      });
      req.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(error)));
      requests.push(req);
    })),
  );
  return {
    async until(events: number): Promise<void> {
      while (counts.some((c) => c < events)) await new Promise((resolve) => setImmediate(resolve));
    },
    close(): void {
      for (const req of requests) req.destroy();
    },
  };
}

async function watchFanOut(cluster: EmbeddedCluster, watchers: number, writes: number): Promise<number> {
  const list = JSON.parse(await request(`${cluster.url}/api/v1/namespaces/${NS}/configmaps?limit=1`)) as { metadata: { resourceVersion: string } };
  const watches = await openWatches(`${cluster.url}/api/v1/namespaces/${NS}/configmaps?watch=true&resourceVersion=${list.metadata.resourceVersion}&fieldSelector=metadata.name%3Dcm-0`, watchers);
  const start = process.hrtime.bigint();
  for (let i = 0; i < writes; i += 1) {
    await cluster.client.patch(CONFIGMAPS, NS, 'cm-0', { data: { step: String(i) } }, { type: 'merge' });
  }
  await watches.until(writes);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  watches.close();
  return ms;
}

async function run(): Promise<BenchResult[]> {
  const cluster = await startEmbeddedCluster({ crdDir: join(tmpdir(), 'no-crds-for-the-bench'), namespaces: ['default', NS], watchWindow: 20_000 });
  adminToken = cluster.adminToken;
  try {
    for (let i = 0; i < OBJECTS; i += 1) {
      await cluster.client.create(CONFIGMAPS, {
        apiVersion: 'v1', kind: 'ConfigMap',
        metadata: { name: `cm-${i}`, namespace: NS, labels: { app: 'bench', shard: String(i % 10) } },
        data: { key: `value-${i}`, config: 'x'.repeat(200) },
      });
    }
    const results: BenchResult[] = [];
    const listUrl = `${cluster.url}/api/v1/namespaces/${NS}/configmaps`;
    const listed = (JSON.parse(await request(listUrl)) as { items: unknown[] }).items;
    const listMs = await medianMs(() => request(listUrl), 5, 1);
    const serialiseMs = await medianMs(() => JSON.stringify({ items: listed }), 5, 1);
    results.push(compare('cluster', { name: `list ${OBJECTS} ConfigMaps over HTTP`, value: listMs, unit: 'ms' }, { name: 'JSON.stringify same objects', value: serialiseMs, unit: 'ms' }));

    const writes = benchSize(200, 20);
    const one = await medianMs(() => watchFanOut(cluster, 1, writes), 3, 1);
    const ten = await medianMs(() => watchFanOut(cluster, 10, writes), 3, 1);
    results.push(compare('cluster', { name: `${writes} writes reach 10 watchers`, value: ten, unit: 'ms' }, { name: 'reach 1 watcher', value: one, unit: 'ms' }));

    const requests = benchSize(3_000, 100);
    await throughput(500, 8, () => request(`${cluster.url}/healthz`));
    const healthz = await throughput(requests, 8, () => request(`${cluster.url}/healthz`));
    const gets = await throughput(requests, 8, (i) => request(`${listUrl}/cm-${i % OBJECTS}`));
    const patches = await throughput(requests, 8, (i) => request(`${listUrl}/cm-${i % OBJECTS}`, 'PATCH', JSON.stringify({ metadata: { labels: { touched: String(i) } } }), 'application/merge-patch+json'));
    const baseline = { name: 'GET /healthz', value: healthz, unit: 'req/s' };
    results.push(compare('cluster', { name: 'GET a ConfigMap', value: gets, unit: 'req/s' }, baseline, 'throughput: higher is better'));
    results.push(compare('cluster', { name: 'merge-PATCH a ConfigMap', value: patches, unit: 'req/s' }, baseline, 'throughput: higher is better'));
    return results;
  } finally {
    agent.destroy();
    await cluster.stop();
  }
}

const suite: BenchSuite = { name: 'cluster', run };
export default suite;
