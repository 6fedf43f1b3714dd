/**
 * The client-side rate limit and 429 handling against the embedded API server over HTTP,
 * whose fault injection answers 429 as kube-apiserver does (Retry-After header and
 * Status.details.retryAfterSeconds). Waits are recorded on a fake clock, not slept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionFromRecord } from '../../../shared/adapters/kubernetes';
import { TokenBucket } from '../../../shared/adapters/kubernetes/rate-limit';
import { KubeTransport, MAX_THROTTLED_RETRIES } from '../../../shared/adapters/kubernetes/transport';
import type { TransportOptions } from '../../../shared/adapters/kubernetes/transport';
import { createAppContext, runWithinInvocation } from '../../../shared/app/context';
import { loadConfig } from '../../../shared/app/config';
import { ThrottledError } from '../../../shared/domain/errors';
import { createMemoryStores } from '../../../shared/adapters/memory';
import { startEmbeddedCluster } from '../../../local/cluster';
import type { EmbeddedCluster } from '../../../local/cluster';

const NAMESPACES = '/api/v1/namespaces';

let cluster: EmbeddedCluster;

beforeAll(async () => {
  cluster = await startEmbeddedCluster();
});

afterAll(async () => {
  await cluster?.stop();
});

/** A transport to the embedded server whose waits move a fake clock and are recorded. */
function transportWith(options: Partial<TransportOptions> & { qps?: number; burst?: number } = {}): { transport: KubeTransport; waits: number[] } {
  let time = 0;
  const waits: number[] = [];
  const now = (): number => time;
  const connection = connectionFromRecord({ id: 'local', server: cluster.url, omeNamespace: 'ome', credentials: { kind: 'kubeconfig', kubeconfig: cluster.kubeconfig }, mode: 'standalone' });
  const rateLimiter = options.rateLimiter ?? new TokenBucket({ qps: options.qps ?? 20, burst: options.burst ?? 30 }, now);
  const transport = new KubeTransport(connection, {
    requestTimeoutMs: 10_000,
    userAgent: 'throttling-test',
    now,
    sleep: async (ms) => {
      waits.push(ms);
      time += ms;
    },
    ...options,
    rateLimiter,
  });
  return { transport, waits };
}

describe('Kubernetes adapter: client-side rate limit and 429', () => {
  it('spaces requests beyond the burst 1/qps apart', async () => {
    // Prepare
    const { transport, waits } = transportWith({ qps: 10, burst: 2 });

    // Act
    for (let index = 0; index < 5; index += 1) await transport.request({ method: 'GET', path: NAMESPACES });
    transport.close();

    // Assess
    expect(waits).toEqual([100, 100, 100]);
  });

  it('waits the Retry-After of a 429 and sends the request again, until it goes through', async () => {
    // Prepare
    const { transport, waits } = transportWith();
    cluster.faults.inject({ verb: 'list', resource: 'namespaces', count: 2, status: 429 });

    // Act
    const list = await transport.request<{ items: unknown[] }>({ method: 'GET', path: NAMESPACES });
    transport.close();

    // Assess: the embedded server asks for 1 s, as kube-apiserver's max-in-flight filter does
    expect(list.items.length).toBeGreaterThan(0);
    expect(waits).toEqual([1_000, 1_000]);
    expect(cluster.faults.pending()).toBe(0);
  });

  it('pauses every request to the cluster after a 429, not only the one that got it', async () => {
    // Prepare: two transports sharing the cluster's bucket, as two functions' clients do
    let time = 0;
    const bucket = new TokenBucket({ qps: 20, burst: 30 }, () => time);
    const first = transportWith({ rateLimiter: bucket, now: () => time, sleep: async (ms) => void (time += ms), remainingTimeMs: () => 500 });
    const otherWaits: number[] = [];
    const second = transportWith({ rateLimiter: bucket, now: () => time, sleep: async (ms) => (otherWaits.push(ms), void (time += ms)) });
    cluster.faults.inject({ verb: 'list', resource: 'namespaces', count: 1, status: 429 });

    // Act: the first gets the 429 and gives up at once (no time left), leaving the pause behind
    await expect(first.transport.request({ method: 'GET', path: NAMESPACES })).rejects.toThrow(ThrottledError);
    await second.transport.request({ method: 'GET', path: NAMESPACES });
    first.transport.close();
    second.transport.close();

    // Assess
    expect(otherWaits).toEqual([1_000]);
  });

  it(`gives up with ThrottledError after ${MAX_THROTTLED_RETRIES} retries`, async () => {
    // Prepare
    const { transport, waits } = transportWith();
    cluster.faults.inject({ verb: 'list', resource: 'namespaces', count: MAX_THROTTLED_RETRIES + 1, status: 429 });

    // Act
    const failure = await transport.request({ method: 'GET', path: NAMESPACES }).catch((error: unknown) => error);
    transport.close();

    // Assess
    expect(failure).toBeInstanceOf(ThrottledError);
    expect((failure as Error).message).toBe('Too many requests, please try again later.');
    expect(cluster.faults.pending()).toBe(0);
    expect(waits).toEqual(Array.from({ length: MAX_THROTTLED_RETRIES }, () => 1_000));
  });

  it('gives up at once when the Retry-After does not fit in the invocation’s remaining time', async () => {
    // Prepare
    const { transport, waits } = transportWith({ remainingTimeMs: () => 1_500 });
    cluster.faults.inject({ verb: 'list', resource: 'namespaces', count: 1, status: 429 });

    // Act
    const failure = await transport.request({ method: 'GET', path: NAMESPACES }).catch((error: unknown) => error);
    transport.close();

    // Assess
    expect(failure).toBeInstanceOf(ThrottledError);
    expect(waits).toEqual([]);
  });

  it('refuses a wait for the rate limit that would outlast the invocation, and gives the token back', async () => {
    // Prepare: burst 1 at 1 QPS, half a second left
    const { transport, waits } = transportWith({ qps: 1, burst: 1, remainingTimeMs: () => 500 });
    await transport.request({ method: 'GET', path: NAMESPACES });

    // Act
    const failure = await transport.request({ method: 'GET', path: NAMESPACES }).catch((error: unknown) => error);
    transport.close();

    // Assess
    expect(failure).toBeInstanceOf(ThrottledError);
    expect((failure as Error).message).toBe('GET /api/v1/namespaces: the client-side rate limit (1 QPS, burst 1) needs a 1000 ms wait, more than this invocation has left');
    expect(waits).toEqual([]);
  });
});

describe('App context: one rate limit per cluster', () => {
  it('gives clients the configured QPS and burst, shared by every function in the process, capped by the invocation', async () => {
    // Prepare: 1 QPS, burst 2, from the environment as a function reads it
    const config = loadConfig({ TABLE_NAME: 't', KUBE_API_QPS: '1', KUBE_API_BURST: '2' });
    const stores = createMemoryStores();
    await stores.clusters.putCluster({ id: 'limited', server: cluster.url, omeNamespace: 'ome', credentials: { kind: 'kubeconfig', kubeconfig: cluster.kubeconfig }, mode: 'standalone' });
    const app = createAppContext({ config, stores });
    const { client } = await app.cluster('limited');
    const invocation = { getRemainingTimeInMillis: () => 200 };

    // Act: the burst goes through; the third request would wait a second, which the invocation does not have
    const outcomes = await runWithinInvocation(invocation, async () => {
      const results: string[] = [];
      for (let index = 0; index < 3; index += 1) {
        results.push(await client.list({ group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false }).then(
          () => 'ok',
          (error: unknown) => (error instanceof ThrottledError ? 'throttled' : String(error)),
        ));
      }
      return results;
    });

    // Assess
    expect(outcomes).toEqual(['ok', 'ok', 'throttled']);
    expect(config).toMatchObject({ kubeApiQps: 1, kubeApiBurst: 2 });
    expect(loadConfig({ TABLE_NAME: 't' })).toMatchObject({ kubeApiQps: 20, kubeApiBurst: 30 });
  });
});
