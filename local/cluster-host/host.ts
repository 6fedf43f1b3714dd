/**
 * A cluster host: a child process running a share of the plane's embedded API servers, so
 * that their work does not share the plane's event loop (the fleet simulation measures the
 * plane's functions and forwarders apart from the servers they call). It starts the clusters
 * the parent names, serves them over HTTP as usual, and answers over the IPC channel for
 * their in-process clients, watches, request counters and access logs
 * (local/cluster-host/protocol.ts). It stops when asked or when the parent goes away.
 */
import { startEmbeddedCluster } from '../cluster';
import type { EmbeddedCluster } from '../cluster';
import type { ClusterClient } from '../../shared/ports/cluster';
import { ControlPlaneError } from '../../shared/domain/errors';
import { CLIENT_METHODS } from './protocol';
import { loopDelayOf, startLoopDelay } from './loop-delay';
import type { HostMessage, HostRequest, HostRequestMessage, HostStats, SerializedError } from './protocol';

const clusters = new Map<number, EmbeddedCluster>();
const watches = new Map<number, AbortController>();
let loopDelay = startLoopDelay();
let stopping: Promise<void> | undefined;

function send(message: HostMessage): void {
  process.send?.(message);
}

function serializeError(error: unknown): SerializedError {
  if (error instanceof ControlPlaneError) return { name: error.name, message: error.message, retryable: error.retryable };
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: 'Error', message: String(error) };
}

function clusterOf(index: number): EmbeddedCluster {
  const cluster = clusters.get(index);
  if (!cluster) throw new Error(`this host runs no cluster ${index}`);
  return cluster;
}

function statsOf(resetLoopDelay: boolean): HostStats {
  const cpu = process.cpuUsage();
  const stats: HostStats = {
    pid: process.pid,
    clusters: clusters.size,
    cpuUserMicros: cpu.user,
    cpuSystemMicros: cpu.system,
    rssBytes: process.memoryUsage().rss,
    loopDelayMs: loopDelayOf(loopDelay),
  };
  if (resetLoopDelay) {
    loopDelay.disable();
    loopDelay = startLoopDelay();
  }
  return stats;
}

async function stopAll(): Promise<void> {
  for (const controller of watches.values()) controller.abort();
  watches.clear();
  loopDelay.disable();
  await Promise.allSettled([...clusters.values()].map((cluster) => cluster.stop()));
  clusters.clear();
}

async function answer(request: HostRequest, id: number): Promise<unknown> {
  switch (request.kind) {
    case 'start': {
      for (const spec of request.clusters) {
        const began = Date.now();
        const cluster = await startEmbeddedCluster(spec.options);
        clusters.set(spec.index, cluster);
        await cluster.writeKubeconfig(spec.kubeconfigPath);
        await cluster.writeIdentityKubeconfig(spec.identityKubeconfigPath);
        send({ kind: 'clusterStarted', info: { index: spec.index, url: cluster.url, httpsUrl: cluster.httpsUrl, caData: cluster.caData, metricsTarget: cluster.engineMetrics.target, startMs: Date.now() - began } });
      }
      return undefined;
    }
    case 'call': {
      if (!CLIENT_METHODS.includes(request.method)) throw new Error(`unknown client method ${String(request.method)}`);
      const client = clusterOf(request.cluster).client as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      return client[request.method]!(...request.args);
    }
    case 'watch': {
      const controller = new AbortController();
      watches.set(id, controller);
      const client: ClusterClient = clusterOf(request.cluster).client;
      try {
        await client.watch(request.type, { ...request.options, signal: controller.signal }, (event) => send({ kind: 'watchEvent', id, event }));
      } finally {
        watches.delete(id);
      }
      return undefined;
    }
    case 'unwatch':
      watches.get(request.watch)?.abort();
      return undefined;
    case 'requestCounts':
      return clusterOf(request.cluster).requestCounts();
    case 'accessLog': {
      const log = clusterOf(request.cluster).accessLog();
      return { records: log.slice(request.from), length: log.length };
    }
    case 'prunedWrites':
      return [...clusterOf(request.cluster).prunedWrites()];
    case 'stats':
      return statsOf(request.resetLoopDelay);
    case 'stop':
      stopping ??= stopAll();
      await stopping;
      return undefined;
  }
}

process.on('message', (message: HostRequestMessage) => {
  answer(message, message.id).then(
    (value) => {
      send({ kind: 'reply', id: message.id, ok: true, value });
      if (message.kind === 'stop') process.disconnect();
    },
    (error: unknown) => send({ kind: 'reply', id: message.id, ok: false, error: serializeError(error) }),
  );
});

// The parent is gone (or has let go): stop the servers so the process can end.
process.on('disconnect', () => {
  stopping ??= stopAll();
  void stopping.finally(() => process.exit(0));
});
