/**
 * One watched stream of one cluster: list, then watch from where the list (or the
 * checkpoint) left off, resume after dropped connections from the last version seen
 * (bookmarks included), relist after `410 Gone` and announce what changed or
 * disappeared meanwhile.
 */
import { ExpiredError, LeaseLostError } from '../../domain/errors';
import { toHintEvent } from '../../domain/hint-event';
import type { ObservedChange } from '../../domain/hint-event';
import type { Clock } from '../../ports/clock';
import type { ClusterClient, KubeObject, WatchEvent } from '../../ports/cluster';
import { computeChangeTime, recordLag } from './forwarder-lag';
import { decideObservedChange } from './forwarding-policy';
import type { HintBatcher } from './hint-batcher';
import { describeError } from './hint-batcher';
import type { ForwarderLogger } from './logger';
import { ObjectMemory, reconstructPrevious, tombstoneOf } from './object-memory';
import { StreamPosition } from './stream-position';
import { computeBackoff, sleep } from './timing';
import type { WatchedResource } from '../../domain/watched-resources';

/** A watch that ends sooner than this after it started counts towards the backoff. */
const QUICK_WATCH_END_MS = 1_000;

export interface StreamCounters {
  seen: number;
  dropped: number;
  relists: number;
  watchRestarts: number;
  /** The longest a change waited for its hint to reach the bus (see forwarder-lag.ts). */
  maxLagMs: number;
}

export interface ResourceStreamOptions {
  clusterId: string;
  resource: WatchedResource;
  cluster: ClusterClient;
  batcher: HintBatcher;
  clock: Clock;
  counters: StreamCounters;
  listPageSize: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  /** Aborted: stop observing at once. */
  signal: AbortSignal;
  /** Called once the first list (or, after a checkpoint, the priming list) is through and watching begins. */
  onListed?: () => void;
  logger?: ForwarderLogger;
}

export class ResourceStream {
  readonly memory = new ObjectMemory();
  readonly position: StreamPosition;
  /** Where the watch resumes: the last version observed, published or not. */
  private observed: string | undefined;

  constructor(
    private readonly options: ResourceStreamOptions,
    checkpoint: string | undefined,
  ) {
    this.position = new StreamPosition(checkpoint);
    this.observed = checkpoint;
  }

  get name(): string {
    return this.options.resource.name;
  }

  /** Lists and watches until the signal aborts; only a lost lease escapes as an error. */
  async follow(): Promise<void> {
    const { signal } = this.options;
    let failures = 0;
    let primed = this.observed === undefined;
    let announced = false;
    const announce = (): void => {
      if (announced || signal.aborted) return;
      announced = true;
      this.options.onListed?.();
    };
    while (!signal.aborted) {
      try {
        if (this.observed === undefined) {
          await this.relist();
          // From here a change reaches us as a watch event from the list's version.
          announce();
        } else {
          if (!primed) await this.prime();
          primed = true;
          announce();
          const startedAt = this.options.clock.now();
          await this.watchFrom(this.observed);
          if (signal.aborted) return;
          this.options.counters.watchRestarts += 1;
          // A server that keeps closing watches at once is backed off from like a failing one.
          if (this.options.clock.now() - startedAt < QUICK_WATCH_END_MS) {
            failures += 1;
            await sleep(computeBackoff(failures, this.options.retryBaseDelayMs, this.options.retryMaxDelayMs), signal);
            continue;
          }
        }
        failures = 0;
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof LeaseLostError) throw error;
        if (error instanceof ExpiredError) {
          this.options.logger?.info('watch expired (410 Gone); relisting', { resource: this.name });
          this.observed = undefined;
          continue;
        }
        failures += 1;
        this.options.logger?.warn('list or watch failed; retrying', { resource: this.name, error: describeError(error), failures });
        await sleep(computeBackoff(failures, this.options.retryBaseDelayMs, this.options.retryMaxDelayMs), signal);
      }
    }
  }

  /**
   * After a restart from a checkpoint: note which objects exist, so that a later relist
   * can announce the deletes it finds. Nothing is compared with these notes; each such
   * object counts as first seen when it next shows up.
   */
  private async prime(): Promise<void> {
    await this.listAll((object) => this.memory.prime(object));
  }

  private async relist(): Promise<void> {
    const { signal } = this.options;
    const listed = new Set<string>();
    this.options.counters.relists += 1;
    const listVersion = await this.listAll(async (object) => {
      if (object.metadata.uid) listed.add(object.metadata.uid);
      await this.observe('RELISTED', object);
    });
    if (signal.aborted) return;
    // Whatever we knew of and the list no longer holds was deleted while we were not watching.
    for (const entry of [...this.memory.entries()]) {
      if (listed.has(entry.uid)) continue;
      await this.observe('DELETED', tombstoneOf(entry, listVersion));
      if (signal.aborted) return;
    }
    this.position.pass(listVersion);
    this.observed = listVersion;
  }

  /** Pages through the list; returns its resourceVersion. */
  private async listAll(onItem: (object: KubeObject) => void | Promise<void>): Promise<string> {
    const { cluster, resource, signal, listPageSize } = this.options;
    let continueToken: string | undefined;
    let listVersion: string | undefined;
    do {
      const page = await cluster.list(resource.type, {
        ...(resource.namespace ? { namespace: resource.namespace } : {}),
        ...(resource.labelSelector ? { labelSelector: resource.labelSelector } : {}),
        limit: listPageSize,
        ...(continueToken ? { continue: continueToken } : {}),
      });
      listVersion ??= page.resourceVersion;
      for (const item of page.items) {
        if (signal.aborted) return listVersion;
        await onItem(item);
      }
      continueToken = page.continue;
    } while (continueToken && !signal.aborted);
    return listVersion;
  }

  private async watchFrom(resourceVersion: string): Promise<void> {
    const { cluster, resource, signal } = this.options;
    await cluster.watch(
      resource.type,
      {
        ...(resource.namespace ? { namespace: resource.namespace } : {}),
        ...(resource.labelSelector ? { labelSelector: resource.labelSelector } : {}),
        resourceVersion,
        allowWatchBookmarks: true,
        signal,
      },
      (event: WatchEvent) => this.onWatchEvent(event),
    );
  }

  private async onWatchEvent(event: WatchEvent): Promise<void> {
    if (this.options.signal.aborted) return;
    if (event.type === 'BOOKMARK') {
      const version = event.object.metadata?.resourceVersion;
      if (version) {
        this.observed = version;
        this.position.pass(version, { bookmark: true });
      }
      return;
    }
    await this.observe(event.type, event.object);
  }

  /** Decides on one observation, remembers the object, and queues its hint or passes its position. */
  private async observe(change: ObservedChange, object: KubeObject): Promise<void> {
    const { signal, counters, clusterId, clock, logger } = this.options;
    if (signal.aborted) return;
    counters.seen += 1;
    const { uid, resourceVersion } = object.metadata;
    // A relist's items carry no stream position: the list's own version does, once all are through.
    const position = change === 'RELISTED' ? undefined : resourceVersion;
    if (change !== 'RELISTED' && resourceVersion) this.observed = resourceVersion;
    if (!uid || !resourceVersion) {
      logger?.warn('object without uid or resourceVersion ignored', { resource: this.name, name: object.metadata.name });
      counters.dropped += 1;
      this.position.pass(position);
      return;
    }
    const remembered = this.memory.get(uid);
    const previous = reconstructPrevious(remembered, object);
    const decision = decideObservedChange(change, object, previous, remembered);
    if (change === 'DELETED') this.memory.forget(uid);
    else this.memory.remember(object);
    if (!decision.forward) {
      counters.dropped += 1;
      logger?.debug?.('change not forwarded', { resource: this.name, uid, resourceVersion, reason: decision.reason });
      this.position.pass(position);
      return;
    }
    const observedAt = clock.now();
    const event = toHintEvent(clusterId, change, object, previous, {
      observedAt: new Date(observedAt).toISOString(),
      ...(decision.readinessMoved ? { readinessMoved: true } : {}),
    });
    const changedAt = computeChangeTime(change, object, observedAt);
    const ticket = this.position.hold(position, changedAt);
    await this.options.batcher.add({
      event,
      settle: () => {
        this.position.settle(ticket);
        recordLag(counters, changedAt, clock.now());
      },
    });
  }
}
