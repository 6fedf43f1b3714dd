/**
 * Embedded API servers in child processes of their own (cluster hosts, host.ts), for a
 * process that must measure its own work apart from theirs: the fleet simulation. Each host
 * runs a share of the clusters (round-robin by index); the plane reaches them over HTTP as
 * any API server, and the in-process client, the watches, the request counters and the
 * access logs reach them over the IPC channel.
 *
 * Why processes and not worker threads: `process.cpuUsage()` counts every thread of a
 * process, so with the servers in threads the plane's CPU time would still include theirs;
 * a process also has its own heap and its own scheduling on the machine's cores.
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  AlreadyExistsError,
  ConflictError,
  ControlPlaneError,
  ExpiredError,
  InvalidInputError,
  NotFoundError,
  ThrottledError,
  UnavailableError,
} from '../../shared/domain/errors';
import type {
  ClusterClient,
  DeleteOptions,
  KubeObject,
  ListOptions,
  ListPage,
  PatchOptions,
  ResourceType,
  WatchEvent,
  WatchOptions,
  WriteOptions,
} from '../../shared/ports/cluster';
import { waitForExit } from '../child-process';
import type { AccessLogPage, ClientMethod, HostedClusterInfo, HostedClusterSpec, HostMessage, HostRequest, HostStats, PruneRecord, RequestCounts, SerializedError } from './protocol';

export type { AccessLogPage, HostedClusterInfo, HostedClusterSpec, HostStats, LoopDelay } from './protocol';
export { loopDelayOf, startLoopDelay } from './loop-delay';

const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const HOST_ENTRY = join(repositoryRoot, 'local', 'cluster-host', 'host.ts');
const STOP_WAIT_MS = 10_000;

/**
 * What the plane reads of an embedded cluster besides its API: the counters and the log
 * the simulation's figures come from, alike for a cluster in this process or in a host.
 */
export interface ClusterObservation {
  /** Requests received over HTTP since start (the in-process client is not counted). */
  requestCounts(): Promise<RequestCounts>;
  /** The access log (who did what) from index `from`, and its length now. */
  accessLog(from?: number): Promise<AccessLogPage>;
  prunedWrites(): Promise<PruneRecord[]>;
}

/** A cluster a host runs, as the plane sees it. */
export interface HostedCluster extends HostedClusterInfo {
  client: ClusterClient;
  observe: ClusterObservation;
}

export interface ClusterHosts {
  /** By index, as asked. */
  clusters: HostedCluster[];
  /** Each host's figures; `resetLoopDelay` starts each a new delay histogram. */
  stats(resetLoopDelay?: boolean): Promise<HostStats[]>;
  stop(): Promise<void>;
}

const ERRORS: Record<string, new (message: string) => ControlPlaneError> = {
  NotFoundError,
  ConflictError,
  AlreadyExistsError,
  ThrottledError,
  UnavailableError,
  InvalidInputError,
  ExpiredError,
};

/** The typed error a host's answer names, as the in-process client would have thrown it. */
export function errorOf(error: SerializedError): Error {
  const known = ERRORS[error.name];
  if (known) return new known(error.message);
  if (error.name === 'ControlPlaneError') return new ControlPlaneError(error.message, { retryable: error.retryable ?? false });
  const plain = new Error(error.message);
  plain.name = error.name;
  return plain;
}

/** One host process and its channel: requests by id, watch events by their request's id. */
class HostChannel {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private readonly watchers = new Map<number, (event: WatchEvent) => void>();
  private exited: Error | undefined;

  constructor(
    readonly child: ChildProcess,
    onStarted: (info: HostedClusterInfo) => void,
  ) {
    child.on('message', (message: HostMessage) => {
      if (message.kind === 'clusterStarted') onStarted(message.info);
      else if (message.kind === 'watchEvent') this.watchers.get(message.id)?.(message.event);
      else {
        const waiting = this.pending.get(message.id);
        this.pending.delete(message.id);
        this.watchers.delete(message.id);
        if (message.ok) waiting?.resolve(message.value);
        else waiting?.reject(errorOf(message.error));
      }
    });
    child.once('exit', (code, signal) => {
      this.exited = new Error(`cluster host ${child.pid} exited (${signal ?? `code ${code}`})`);
      for (const waiting of this.pending.values()) waiting.reject(this.exited);
      this.pending.clear();
      this.watchers.clear();
    });
  }

  request<T>(request: HostRequest, onEvent?: (event: WatchEvent) => void): { id: number; reply: Promise<T> } {
    const id = this.nextId;
    this.nextId += 1;
    const reply = new Promise<T>((resolveReply, reject) => {
      if (this.exited) {
        reject(this.exited);
        return;
      }
      this.pending.set(id, { resolve: resolveReply as (value: unknown) => void, reject });
      if (onEvent) this.watchers.set(id, onEvent);
      this.child.send({ ...request, id }, (error) => {
        if (!error) return;
        this.pending.delete(id);
        this.watchers.delete(id);
        reject(error);
      });
    });
    return { id, reply };
  }

  call<T>(request: HostRequest): Promise<T> {
    return this.request<T>(request).reply;
  }
}

/** The ClusterClient port of a cluster in a host: its in-process client, over the channel. */
export class HostedClusterClient implements ClusterClient {
  constructor(
    private readonly channel: HostChannel,
    private readonly cluster: number,
  ) {}

  private call<T>(method: ClientMethod, args: unknown[]): Promise<T> {
    return this.channel.call<T>({ kind: 'call', cluster: this.cluster, method, args });
  }

  get<T extends KubeObject>(type: ResourceType, namespace: string | undefined, name: string): Promise<T> {
    return this.call('get', [type, namespace, name]);
  }

  list<T extends KubeObject>(type: ResourceType, options?: ListOptions): Promise<ListPage<T>> {
    return this.call('list', [type, options]);
  }

  create<T extends KubeObject>(type: ResourceType, object: T, options?: WriteOptions): Promise<T> {
    return this.call('create', [type, object, options]);
  }

  replace<T extends KubeObject>(type: ResourceType, object: T, options?: WriteOptions): Promise<T> {
    return this.call('replace', [type, object, options]);
  }

  replaceStatus<T extends KubeObject>(type: ResourceType, object: T, options?: WriteOptions): Promise<T> {
    return this.call('replaceStatus', [type, object, options]);
  }

  patch<T extends KubeObject>(type: ResourceType, namespace: string | undefined, name: string, patch: unknown, options: PatchOptions): Promise<T> {
    return this.call('patch', [type, namespace, name, patch, options]);
  }

  delete(type: ResourceType, namespace: string | undefined, name: string, options?: DeleteOptions): Promise<void> {
    return this.call('delete', [type, namespace, name, options]);
  }

  /** Events arrive in order; `onEvent` is not awaited across the channel (the host does not wait for it). */
  async watch<T extends KubeObject>(type: ResourceType, options: WatchOptions, onEvent: (event: WatchEvent<T>) => void | Promise<void>): Promise<void> {
    const { signal, ...rest } = options;
    if (signal?.aborted) return;
    let failure: unknown;
    let chain: Promise<void> = Promise.resolve();
    const { id, reply } = this.channel.request<void>({ kind: 'watch', cluster: this.cluster, type, options: rest }, (event) => {
      chain = chain.then(async () => {
        if (failure === undefined) await onEvent(event as WatchEvent<T>);
      }).catch((error: unknown) => {
        failure ??= error;
        this.channel.call({ kind: 'unwatch', watch: id }).catch(() => undefined);
      });
    });
    const abort = (): void => void this.channel.call({ kind: 'unwatch', watch: id }).catch(() => undefined);
    signal?.addEventListener('abort', abort, { once: true });
    try {
      await reply;
      await chain;
    } finally {
      signal?.removeEventListener('abort', abort);
    }
    if (failure !== undefined) throw failure;
  }
}

function observationOf(channel: HostChannel, cluster: number): ClusterObservation {
  return {
    requestCounts: () => channel.call<RequestCounts>({ kind: 'requestCounts', cluster }),
    accessLog: (from = 0) => channel.call<AccessLogPage>({ kind: 'accessLog', cluster, from }),
    prunedWrites: () => channel.call<PruneRecord[]>({ kind: 'prunedWrites', cluster }),
  };
}

/**
 * Starts `processes` hosts (at most one per cluster) and in them the clusters of `specs`,
 * spread round-robin; each host starts its share one after another, the hosts side by side.
 * `onStarted` hears of each cluster as it comes up. On a failure every host is stopped.
 */
export async function startClusterHosts(specs: HostedClusterSpec[], processes: number, onStarted: (info: HostedClusterInfo) => void = () => undefined): Promise<ClusterHosts> {
  const count = Math.max(1, Math.min(processes, specs.length));
  const infos = new Map<number, HostedClusterInfo>();
  const started = (info: HostedClusterInfo): void => {
    infos.set(info.index, info);
    onStarted(info);
  };
  const channels = Array.from({ length: count }, () => {
    const child = fork(HOST_ENTRY, [], { cwd: repositoryRoot, execArgv: ['--import', 'tsx'], serialization: 'advanced', stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    return new HostChannel(child, started);
  });
  const shareOf = (host: number): HostedClusterSpec[] => specs.filter((_, position) => position % count === host);
  const stop = async (): Promise<void> => {
    await Promise.all(
      channels.map(async (channel) => {
        await channel.call({ kind: 'stop' }).catch(() => undefined);
        if (!(await waitForExit(channel.child, STOP_WAIT_MS))) channel.child.kill('SIGKILL');
      }),
    );
  };
  const hostOf = new Map<number, HostChannel>();
  const collect = channels.map((channel, host) => {
    const share = shareOf(host);
    for (const spec of share) hostOf.set(spec.index, channel);
    return channel.call({ kind: 'start', clusters: share });
  });
  try {
    await Promise.all(collect);
  } catch (error) {
    await stop();
    throw error;
  }
  const clusters = specs.map((spec) => {
    const channel = hostOf.get(spec.index) as HostChannel;
    const info = infos.get(spec.index);
    if (!info) throw new Error(`cluster ${spec.index} was not reported started`);
    return { ...info, client: new HostedClusterClient(channel, spec.index), observe: observationOf(channel, spec.index) };
  });
  return {
    clusters,
    stats: (resetLoopDelay = false) => Promise.all(channels.map((channel) => channel.call<HostStats>({ kind: 'stats', resetLoopDelay }))),
    stop,
  };
}
