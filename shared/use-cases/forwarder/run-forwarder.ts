/**
 * The watch forwarder: per cluster, list and watch the kinds the functions act on and put
 * a hint event on the bus for each change that matters (see `docs/events.md`).
 *
 * Guarantees, per cluster and watched stream: a checkpoint never passes a hint that was
 * not published or deliberately skipped, so a restart (or another forwarder taking over)
 * replays from it and nothing is lost; hints may repeat after a crash between publish and
 * checkpoint, which handlers absorb (they re-read and are idempotent per uid and token).
 * Only the holder of the cluster's lease forwards: its shard's (`forwarder-shard#<count>/<shard>`,
 * held by run-shard.ts and passed in as `sharedLease`), or, run on its own,
 * `forwarder#<clusterId>`.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { LeaseLostError } from '../../domain/errors';
import type { Clock } from '../../ports/clock';
import { systemClock } from '../../ports/clock';
import type { ClusterClient } from '../../ports/cluster';
import type { EventPublisher } from '../../ports/event-publisher';
import type { CheckpointStore, Checkpoints, Lease, LeaseStore } from '../../ports/store';
import type { ConcurrencyLimit } from './concurrency';
import { recordLag } from './forwarder-lag';
import { forwarderLeaseKey, startHeartbeat, waitForLease, type SharedLease } from './forwarder-lease';
import { HintBatcher, describeError } from './hint-batcher';
import type { ForwarderLogger } from './logger';
import { ResourceStream } from './resource-stream';
import { anySignal, computeBackoff, sleep } from './timing';
import { listWatchedResources } from '../../domain/watched-resources';
import type { WatchedResource } from '../../domain/watched-resources';

export interface ForwarderDependencies {
  clusterId: string;
  cluster: ClusterClient;
  publisher: EventPublisher;
  leases: LeaseStore;
  /**
   * The shard's lease, when the forwarder runs under one: it then takes no lease of its
   * own (`leases` is not used), fences its checkpoints with the shard's and stops when the
   * shard loses it.
   */
  sharedLease?: SharedLease;
  checkpoints: CheckpointStore;
  clock?: Clock;
  logger?: ForwarderLogger;
}

export interface ForwarderOptions {
  /** OME's namespace in this cluster, where runtime revisions live. */
  omeNamespace: string;
  /** Who holds the lease; unique per process by default. */
  holderId?: string;
  /** Lease time to live (default 30 s); renewed every third of it. */
  leaseTtlMs?: number;
  /** How often a waiting forwarder tries the lease (default a third of the TTL). */
  leasePollMs?: number;
  /** Hints per publish (default 10, the PutEvents limit). */
  maxBatchSize?: number;
  /** Batches published at once (default 4); each holds the checkpoint until it settles. */
  maxConcurrentPublishes?: number;
  /** How long a partial batch waits for company (default 50 ms). */
  lingerMs?: number;
  /** Items per list page (default 500). */
  listPageSize?: number;
  /**
   * How often the checkpoints are saved when a published hint moved one (default 5 s: a
   * crash republishes at most that much); always once more at the end.
   */
  checkpointIntervalMs?: number;
  /**
   * How often when only observations that needed no hint moved them, and when only
   * bookmarks did, even at the end (default 3 min: well within the API server's compaction
   * window of 5 to 10 min, so a restart resumes with a watch, not a relist).
   */
  idleCheckpointIntervalMs?: number;
  /** Backoff of failed watches, lists and publishes (defaults 100 ms doubling to 5 s). */
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
  /** The streams to follow; defaults to `listWatchedResources(omeNamespace)`. */
  resources?: WatchedResource[];
  /**
   * Shared by the forwarders of one process: bounds how many load their checkpoints at
   * once. A start that fails anyway is retried with backoff.
   */
  startLimit?: ConcurrencyLimit;
  /** Called when a stream's first list is through and it watches (once per stream and tenure). */
  onStreamListed?: (resource: string) => void;
}

export interface ForwarderStats {
  clusterId: string;
  /** Whether the lease was held at any time during the run. */
  leaseAcquired: boolean;
  /** Watch events and relist items observed (bookmarks not counted). */
  seen: number;
  /** Hints accepted by the bus. */
  forwarded: number;
  /** Changes that needed no hint (our own status writes, unchanged relist items). */
  dropped: number;
  /** Hints the publisher refused for good (over the size limit); logged, checkpointed past. */
  skipped: number;
  /** Hints still unpublished when the run ended; the checkpoint stays before them. */
  failed: number;
  /** Hints resent after a failed publish. */
  retries: number;
  /** Publish calls and the mean hints per call. */
  batches: number;
  entriesPerBatch: number;
  relists: number;
  watchRestarts: number;
  leaseLosses: number;
  /**
   * The longest a change waited for its hint to reach the bus, counted from the change's
   * last write as the API server recorded it (see forwarder-lag.ts); hints still pending
   * at the end count up to then.
   */
  maxLagMs: number;
}

export interface LongRunningForwarderInput extends ForwarderDependencies, ForwarderOptions {
  /** Stops the forwarder: it flushes, checkpoints and releases the lease, then resolves. */
  signal: AbortSignal;
  /** How long the final flush may take after `signal` aborts (default 5 s). */
  shutdownGraceMs?: number;
}

export interface BoundedForwarderInput extends ForwarderDependencies, ForwarderOptions {
  /** Total time the run may take, waiting for the lease included. */
  budgetMs: number;
  /** Kept back at the end for the final flush, checkpoint and release (default 20% of the budget, 0.2–5 s). */
  reserveMs?: number;
}

type Counters = Omit<ForwarderStats, 'clusterId' | 'leaseAcquired' | 'entriesPerBatch'> & { entries: number };

interface Settings {
  holderId: string;
  leaseKey: string;
  leaseTtlMs: number;
  leasePollMs: number;
  maxBatchSize: number;
  maxConcurrentPublishes: number;
  lingerMs: number;
  listPageSize: number;
  checkpointIntervalMs: number;
  idleCheckpointIntervalMs: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  resources: WatchedResource[];
  clock: Clock;
  startLimit: ConcurrencyLimit | undefined;
}

function settingsOf(input: ForwarderDependencies & ForwarderOptions): Settings {
  const leaseTtlMs = input.leaseTtlMs ?? 30_000;
  const maxBatchSize = input.maxBatchSize ?? 10;
  if (!Number.isInteger(maxBatchSize) || maxBatchSize < 1 || maxBatchSize > 10) {
    throw new RangeError('maxBatchSize must be an integer from 1 to 10 (the PutEvents limit)');
  }
  return {
    holderId: input.holderId ?? `forwarder-${randomUUID()}`,
    leaseKey: forwarderLeaseKey(input.clusterId),
    leaseTtlMs,
    leasePollMs: input.leasePollMs ?? Math.max(1, Math.floor(leaseTtlMs / 3)),
    maxBatchSize,
    maxConcurrentPublishes: Math.max(1, input.maxConcurrentPublishes ?? 4),
    lingerMs: input.lingerMs ?? 50,
    listPageSize: input.listPageSize ?? 500,
    checkpointIntervalMs: input.checkpointIntervalMs ?? 5_000,
    idleCheckpointIntervalMs: input.idleCheckpointIntervalMs ?? 180_000,
    retryBaseDelayMs: input.retryBaseDelayMs ?? 100,
    retryMaxDelayMs: input.retryMaxDelayMs ?? 5_000,
    resources: input.resources ?? listWatchedResources(input.omeNamespace),
    clock: input.clock ?? systemClock,
    startLimit: input.startLimit,
  };
}

/**
 * A new holder name per tenure: after losing the lease a forwarder must not take it back
 * as "already ours" before it expired. It also waits a whole TTL before contending again
 * (see the callers), so a standby gets its turn.
 */
function holderFor(settings: Settings, tenure: number): string {
  return tenure === 1 ? settings.holderId : `${settings.holderId}#${tenure}`;
}

/** A tenure of the lease: its own, renewed by the session, or the shard's. */
interface Tenure {
  lease: Lease;
  shared?: SharedLease;
}

/**
 * The next tenure, or undefined when `signal` aborted first: its own lease, waited for
 * under a new holder name, or the shard's while the shard holds it.
 */
async function nextTenure(input: ForwarderDependencies, settings: Settings, tenure: number, signal: AbortSignal): Promise<Tenure | undefined> {
  const shared = input.sharedLease;
  if (shared) return shared.lost.aborted || signal.aborted ? undefined : { lease: shared.current(), shared };
  const lease = await waitForLease({
    leases: input.leases,
    key: settings.leaseKey,
    holder: holderFor(settings, tenure),
    ttlMs: settings.leaseTtlMs,
    pollMs: settings.leasePollMs,
    signal,
    ...(input.logger ? { logger: input.logger } : {}),
  });
  return lease && { lease };
}

function newCounters(): Counters {
  return {
    seen: 0,
    forwarded: 0,
    dropped: 0,
    skipped: 0,
    failed: 0,
    retries: 0,
    batches: 0,
    entries: 0,
    relists: 0,
    watchRestarts: 0,
    leaseLosses: 0,
    maxLagMs: 0,
  };
}

function toStats(clusterId: string, leaseAcquired: boolean, counters: Counters): ForwarderStats {
  const { entries, ...rest } = counters;
  return {
    clusterId,
    leaseAcquired,
    ...rest,
    entriesPerBatch: counters.batches === 0 ? 0 : Math.round((entries / counters.batches) * 100) / 100,
  };
}

/** When a session's watching and publishing stop. */
interface SessionSignals {
  /** Stop watching; what is queued is still flushed. */
  stopWatching: AbortSignal;
  /** Stop publishing too (the final flush ran out of time). */
  stopPublishing: AbortSignal;
}

/** `start-failed`: the checkpoints could not be loaded; the lease was given back. */
type SessionEnd = 'stopped' | 'lease-lost' | 'start-failed';

/**
 * Waits after a session ends: a TTL after a lost lease of its own (a shard's lost lease ends
 * the run, the shard decides what next), a growing backoff after failed starts.
 */
async function pauseAfter(end: SessionEnd, failedStarts: number, settings: Settings, signal: AbortSignal): Promise<void> {
  if (end === 'lease-lost') await sleep(settings.leaseTtlMs, signal);
  else if (end === 'start-failed') await sleep(computeBackoff(failedStarts, settings.retryBaseDelayMs, settings.retryMaxDelayMs), signal);
}

/**
 * Runs the forwarder for one cluster until `signal` aborts. While another forwarder
 * holds the cluster's lease it waits; when its own lease is lost it stops watching at
 * once and goes back to waiting. Resolves with the run's stats.
 */
export async function runForwarder(input: LongRunningForwarderInput): Promise<ForwarderStats> {
  const settings = settingsOf(input);
  const counters = newCounters();
  let leaseAcquired = false;
  const graceMs = input.shutdownGraceMs ?? 5_000;
  let failedStarts = 0;
  for (let attempt = 1; !input.signal.aborted; attempt += 1) {
    const tenure = await nextTenure(input, settings, attempt, input.signal);
    if (tenure === undefined) break;
    leaseAcquired = true;
    const stopPublishing = new AbortController();
    const onStop = (): void => {
      setTimeout(() => stopPublishing.abort(), graceMs).unref?.();
    };
    input.signal.addEventListener('abort', onStop, { once: true });
    try {
      const end = await runSession(input, settings, counters, tenure, { stopWatching: input.signal, stopPublishing: stopPublishing.signal });
      // A shard's lease seen lost here (a newer holder's checkpoint) ends the run: taking the same lease again would relist in a loop.
      if (end === 'lease-lost' && tenure.shared) break;
      failedStarts = end === 'start-failed' ? failedStarts + 1 : 0;
      await pauseAfter(end, failedStarts, settings, input.signal);
    } finally {
      input.signal.removeEventListener('abort', onStop);
    }
  }
  return toStats(input.clusterId, leaseAcquired, counters);
}

/**
 * Runs the forwarder for one cluster within `budgetMs`, for a scheduled function: takes
 * the lease (waiting for it within the budget), works until the reserve at the end,
 * flushes, checkpoints, releases the lease and returns the stats. The next run resumes
 * from the checkpoints.
 */
export async function runForwarderFor(input: BoundedForwarderInput): Promise<ForwarderStats> {
  const settings = settingsOf(input);
  const counters = newCounters();
  const reserveMs = input.reserveMs ?? Math.min(5_000, Math.max(200, input.budgetMs * 0.2));
  const workMs = Math.max(0, input.budgetMs - reserveMs);
  const stopWatching = new AbortController();
  const stopPublishing = new AbortController();
  // Publishing may go on into the reserve, leaving the rest of it for checkpoints and release.
  const timers = [
    setTimeout(() => stopWatching.abort(), workMs),
    setTimeout(() => stopPublishing.abort(), workMs + reserveMs / 2),
  ];
  let leaseAcquired = false;
  let failedStarts = 0;
  try {
    for (let attempt = 1; !stopWatching.signal.aborted; attempt += 1) {
      const tenure = await nextTenure(input, settings, attempt, stopWatching.signal);
      if (tenure === undefined) break;
      leaseAcquired = true;
      const end = await runSession(input, settings, counters, tenure, { stopWatching: stopWatching.signal, stopPublishing: stopPublishing.signal });
      if (end === 'lease-lost' && tenure.shared) break;
      failedStarts = end === 'start-failed' ? failedStarts + 1 : 0;
      await pauseAfter(end, failedStarts, settings, stopWatching.signal);
    }
  } finally {
    for (const timer of timers) clearTimeout(timer);
  }
  return toStats(input.clusterId, leaseAcquired, counters);
}

/** One tenure of the lease: follow every stream until told to stop or the lease is lost. */
async function runSession(
  input: ForwarderDependencies & ForwarderOptions,
  settings: Settings,
  counters: Counters,
  tenure: Tenure,
  signals: SessionSignals,
): Promise<SessionEnd> {
  const { clusterId, logger } = input;
  const { lease, shared } = tenure;
  const lost = new AbortController();
  const stopWatching = anySignal(signals.stopWatching, lost.signal);
  const stopPublishing = anySignal(signals.stopPublishing, lost.signal);
  // Every stream's watch and backoff listens on these; that is not a leak.
  setMaxListeners(0, stopWatching, stopPublishing, lost.signal);
  const loseLease = (error: Error): void => {
    if (lost.signal.aborted) return;
    counters.leaseLosses += 1;
    logger?.warn('forwarder lease lost; stopping at once', { lease: lease.key, error: describeError(error) });
    lost.abort(error);
  };
  let heartbeat: { current(): Lease; stop(): void };
  if (shared) {
    const onSharedLost = (): void => loseLease(asError(shared.lost.reason ?? new LeaseLostError(`lease ${lease.key} was lost`)));
    shared.lost.addEventListener('abort', onSharedLost, { once: true });
    heartbeat = { current: () => shared.current(), stop: () => shared.lost.removeEventListener('abort', onSharedLost) };
  } else {
    logger?.info('forwarder lease acquired', { lease: lease.key, fencingToken: lease.fencingToken });
    heartbeat = startHeartbeat({ leases: input.leases, lease, ttlMs: settings.leaseTtlMs, clock: settings.clock, onLost: loseLease, ...(logger ? { logger } : {}) });
  }
  const batcher = new HintBatcher({
    publisher: input.publisher,
    maxBatchSize: settings.maxBatchSize,
    maxInFlight: settings.maxConcurrentPublishes,
    lingerMs: settings.lingerMs,
    retryBaseDelayMs: settings.retryBaseDelayMs,
    retryMaxDelayMs: settings.retryMaxDelayMs,
    signal: stopPublishing,
    counters,
    ...(logger ? { logger } : {}),
  });
  const streams: ResourceStream[] = [];
  const saver = new CheckpointSaver(input.checkpoints, clusterId, streams, heartbeat.current, loseLease, logger, {
    clock: settings.clock,
    hintIntervalMs: settings.checkpointIntervalMs,
    idleIntervalMs: settings.idleCheckpointIntervalMs,
  });
  let saveTimer: NodeJS.Timeout | undefined;
  let startFailed = false;
  try {
    const loadAll = (): Promise<Checkpoints> => input.checkpoints.loadCheckpoints(clusterId);
    const checkpoints = settings.startLimit ? await settings.startLimit.run(loadAll) : await loadAll();
    for (const resource of settings.resources) {
      const checkpoint = checkpoints[resource.name];
      streams.push(
        new ResourceStream(
          {
            clusterId,
            resource,
            cluster: input.cluster,
            batcher,
            clock: settings.clock,
            counters,
            listPageSize: settings.listPageSize,
            retryBaseDelayMs: settings.retryBaseDelayMs,
            retryMaxDelayMs: settings.retryMaxDelayMs,
            signal: stopWatching,
            ...(input.onStreamListed ? { onListed: () => input.onStreamListed?.(resource.name) } : {}),
            ...(logger ? { logger } : {}),
          },
          checkpoint,
        ),
      );
    }
    // Ticks are cheap (no call unless a save is due), so a first hint after a quiet spell is saved within one.
    saveTimer = setInterval(() => void saver.save('due'), Math.min(CHECKPOINT_TICK_MS, settings.checkpointIntervalMs));
    await Promise.all(streams.map((stream) => stream.follow().catch((error: unknown) => loseLease(asError(error)))));
    if (!lost.signal.aborted) await batcher.flushAll();
  } catch (error) {
    // Loading a checkpoint failed: give the lease back and let the caller try again later.
    logger?.error('forwarder session failed', { error: describeError(error) });
    if (error instanceof LeaseLostError) loseLease(error);
    else startFailed = true;
  } finally {
    if (saveTimer !== undefined) clearInterval(saveTimer);
    heartbeat.stop();
  }
  const unsettledByStream = Object.fromEntries(streams.filter((s) => s.position.unsettled > 0).map((s) => [s.name, s.position.unsettled]));
  const unsettled = streams.reduce((sum, stream) => sum + stream.position.unsettled, 0);
  if (unsettled > 0) logger?.warn('hints left unpublished; the checkpoint stays before them', { unsettled: unsettledByStream, queued: batcher.queued });
  counters.failed += unsettled;
  for (const stream of streams) {
    const oldest = stream.position.oldestUnsettledChangedAt;
    if (oldest !== undefined) recordLag(counters, oldest, settings.clock.now());
  }
  if (lost.signal.aborted) {
    batcher.discard();
    return 'lease-lost';
  }
  await saver.save('final');
  batcher.discard();
  // The shard's lease is the shard's to release, once all its clusters stopped.
  if (!shared) {
    try {
      await input.leases.release(heartbeat.current());
    } catch (error) {
      logger?.warn('could not release the forwarder lease; it will expire', { lease: lease.key, error: describeError(error) });
    }
  }
  logger?.info('forwarder stopped', { lease: lease.key, unsettled });
  if (lost.signal.aborted) return 'lease-lost';
  return startFailed ? 'start-failed' : 'stopped';
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** How often the saver looks whether a save is due (at most; never more often than the hint interval). */
const CHECKPOINT_TICK_MS = 1_000;

/**
 * Saves the cluster's checkpoints, all in one write, one save at a time, fenced by the
 * lease, on a tick: at once when a stream has a position and none was ever saved (a
 * restart without one relists the cluster); when a published hint moved one and the last
 * save is `hintIntervalMs` old; when only observations without a hint moved them and it is
 * `idleIntervalMs` old; and at the end when an object's observation moved one (a restarted
 * forwarder would publish it again), or only bookmarks did and it is `idleIntervalMs` old.
 */
class CheckpointSaver {
  private running: Promise<void> | undefined;
  private lastSavedAt: number;

  constructor(
    private readonly checkpoints: CheckpointStore,
    private readonly clusterId: string,
    private readonly streams: readonly ResourceStream[],
    private readonly lease: () => Lease,
    private readonly onLost: (error: Error) => void,
    private readonly logger: ForwarderLogger | undefined,
    private readonly timing: { clock: Clock; hintIntervalMs: number; idleIntervalMs: number },
  ) {
    this.lastSavedAt = timing.clock.now();
  }

  async save(when: 'due' | 'final'): Promise<void> {
    while (this.running) await this.running;
    if (!(when === 'due' ? this.due() : this.dueAtEnd())) return;
    this.running = this.saveMoved().finally(() => {
      this.running = undefined;
    });
    await this.running;
  }

  private dueAtEnd(): boolean {
    if (this.streams.some((stream) => stream.position.neverSaved || stream.position.unsavedEvent)) return true;
    return this.timing.clock.now() - this.lastSavedAt >= this.timing.idleIntervalMs;
  }

  private due(): boolean {
    if (this.streams.some((stream) => stream.position.neverSaved)) return true;
    const sinceSave = this.timing.clock.now() - this.lastSavedAt;
    if (sinceSave >= this.timing.hintIntervalMs && this.streams.some((stream) => stream.position.unsavedHint)) return true;
    return sinceSave >= this.timing.idleIntervalMs;
  }

  private async saveMoved(): Promise<void> {
    if (!this.streams.some((stream) => stream.position.unsaved !== undefined)) return;
    const checkpoints: Checkpoints = {};
    for (const stream of this.streams) {
      const resourceVersion = stream.position.checkpoint;
      if (resourceVersion !== undefined) checkpoints[stream.name] = resourceVersion;
    }
    try {
      await this.checkpoints.saveCheckpoints(this.clusterId, checkpoints, this.lease());
      this.lastSavedAt = this.timing.clock.now();
      for (const stream of this.streams) {
        const saved = checkpoints[stream.name];
        if (saved !== undefined) stream.position.markSaved(saved);
      }
    } catch (error) {
      if (error instanceof LeaseLostError) return this.onLost(error);
      this.logger?.warn('could not save the checkpoints; will retry', { error: describeError(error) });
    }
  }
}
