/**
 * The messages between a process that runs the plane and a cluster host, a child process
 * running a share of the embedded API servers (local/cluster-host/host.ts). Requests carry
 * an id and get one reply with it; a watch also gets its events under its request's id
 * before that reply. Everything crosses the IPC channel as structured clones.
 */
import type { AccessRecord, EmbeddedClusterOptions, PruneRecord, RequestCounts } from '../cluster';
import type { ResourceType, WatchEvent, WatchOptions } from '../../shared/ports/cluster';

/** The ClusterClient methods a host answers for its clusters' in-process clients. */
export const CLIENT_METHODS = ['get', 'list', 'create', 'replace', 'replaceStatus', 'patch', 'delete'] as const;
export type ClientMethod = (typeof CLIENT_METHODS)[number];

/** One cluster a host starts: its index in the plane's fleet, its options and where its kubeconfigs go. */
export interface HostedClusterSpec {
  index: number;
  options: EmbeddedClusterOptions;
  kubeconfigPath: string;
  identityKubeconfigPath: string;
}

/** What the plane learns of a cluster its host started. */
export interface HostedClusterInfo {
  index: number;
  url: string;
  httpsUrl: string;
  caData: string;
  /** The simulated engine pods' scrape target (`127.0.0.1:<port>`). */
  metricsTarget: string;
  /** Milliseconds the start took. */
  startMs: number;
}

/** A page of a cluster's access log from an index, and the log's length then. */
export interface AccessLogPage {
  records: AccessRecord[];
  length: number;
}

/** Milliseconds of event-loop delay (perf_hooks.monitorEventLoopDelay) since the last reset. */
export interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
}

/** A host's own figures: CPU since it started (microseconds), rss, and its event loop's delay. */
export interface HostStats {
  pid: number;
  clusters: number;
  cpuUserMicros: number;
  cpuSystemMicros: number;
  rssBytes: number;
  loopDelayMs: LoopDelay;
}

export type HostRequest =
  | { kind: 'start'; clusters: HostedClusterSpec[] }
  | { kind: 'call'; cluster: number; method: ClientMethod; args: unknown[] }
  | { kind: 'watch'; cluster: number; type: ResourceType; options: Omit<WatchOptions, 'signal'> }
  | { kind: 'unwatch'; watch: number }
  | { kind: 'requestCounts'; cluster: number }
  | { kind: 'accessLog'; cluster: number; from: number }
  | { kind: 'prunedWrites'; cluster: number }
  /** The host's figures; `resetLoopDelay` starts a new delay histogram after reading it. */
  | { kind: 'stats'; resetLoopDelay: boolean }
  | { kind: 'stop' };

export type HostRequestMessage = HostRequest & { id: number };

/** A typed error of shared/domain/errors.ts, by its name, across the channel. */
export interface SerializedError {
  name: string;
  message: string;
  retryable?: boolean;
}

export type HostMessage =
  | { kind: 'reply'; id: number; ok: true; value?: unknown }
  | { kind: 'reply'; id: number; ok: false; error: SerializedError }
  | { kind: 'watchEvent'; id: number; event: WatchEvent }
  | { kind: 'clusterStarted'; info: HostedClusterInfo };

export type { AccessRecord, PruneRecord, RequestCounts };
