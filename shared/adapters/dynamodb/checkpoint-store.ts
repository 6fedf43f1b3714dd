import { BatchGetCommand, BatchWriteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LeaseLostError } from '../../domain/errors';
import type { Clock } from '../../ports/clock';
import { systemClock } from '../../ports/clock';
import type { CheckpointStore, Checkpoints, ForwarderError, Lease } from '../../ports/store';
import { mapDynamoError } from './errors';
import { queryPartition } from './query';
import { CHECKPOINTS_SORT_KEY, DEFAULT_TABLE_NAME, checkpointClusterOf, checkpointsItemKey, forwarderErrorItemKey } from './table';
import type { CheckpointItem, DynamoStoreOptions, ForwarderErrorItem } from './table';

/** Keys per BatchGetItem call: DynamoDB's limit. */
const BATCH_GET_KEYS = 100;
/** Calls for the keys a BatchGetItem left unprocessed (throttling) before they are loaded one by one. */
const BATCH_GET_ATTEMPTS = 4;
/** Items per BatchWriteItem call: DynamoDB's limit. */
const BATCH_WRITE_ITEMS = 25;
/** Calls for the items a BatchWriteItem left unprocessed (throttling) before the saves fail and wait for the next tick. */
const BATCH_WRITE_ATTEMPTS = 4;
/** How long saves are gathered into one BatchWriteItem: a forwarder's clusters each look every second. */
export const CHECKPOINT_SAVE_WINDOW_MS = 1_000;

interface PendingLoad {
  clusterId: string;
  resolve(checkpoints: Checkpoints): void;
  reject(error: unknown): void;
}

interface PendingSave {
  clusterId: string;
  checkpoints: Checkpoints;
  lease: Lease;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Forwarder checkpoints, one item per cluster holding every watched resource's: one read
 * when a forwarder starts, one item written per save whatever moved.
 *
 * Saves asked within `checkpointSaveWindowMs` of the first (1 s by default, less when a
 * lease would run out sooner) are written together, BatchWriteItem of 25 items a call: a shard's clusters cost a call per second
 * at most, not one per cluster and change. A batch has no condition, so the fence is the
 * lease's own expiry, checked when the batch goes out: a save under a lease that has
 * expired is refused (`LeaseLostError`) and writes nothing. A forwarder paused between
 * that check and the write may still move a checkpoint back; resuming from it only
 * publishes hints again (each position passed only hints its forwarder published), which
 * handlers absorb (docs/storage.md, "Checkpoint").
 *
 * Loads asked for in the same turn of the event loop (a shard's run starts all its clusters
 * at once) are read together: BatchGetItem of their checkpoints items, 100 keys a call, so
 * a shard's start costs a call per hundred clusters, not one per cluster. A cluster without
 * that item (never saved, or saved only in the earlier layout) is loaded on its own.
 */
export class DynamoCheckpointStore implements CheckpointStore {
  private readonly tableName: string;
  private readonly saveWindowMs: number;
  private pending: PendingLoad[] = [];
  private saves: PendingSave[] = [];
  private saveTimer: NodeJS.Timeout | undefined;
  private saveDueAt = 0;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly clock: Clock = systemClock,
    options: DynamoStoreOptions = {},
  ) {
    this.tableName = options.tableName ?? DEFAULT_TABLE_NAME;
    this.saveWindowMs = options.checkpointSaveWindowMs ?? CHECKPOINT_SAVE_WINDOW_MS;
  }

  /** The cluster's checkpoints, read with the other loads of this turn (see the class comment). */
  loadCheckpoints(clusterId: string): Promise<Checkpoints> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => void this.loadPending());
      this.pending.push({ clusterId, resolve, reject });
    });
  }

  private async loadPending(): Promise<void> {
    const waiting = new Map<string, PendingLoad[]>();
    for (const load of this.pending) waiting.set(load.clusterId, [...(waiting.get(load.clusterId) ?? []), load]);
    this.pending = [];
    const ids = [...waiting.keys()];
    const chunks: string[][] = [];
    for (let start = 0; start < ids.length; start += BATCH_GET_KEYS) chunks.push(ids.slice(start, start + BATCH_GET_KEYS));
    // Each cluster read once, however many asked; its waiters all get the answer (or the error).
    const settle = async (clusterId: string, read: () => Promise<Checkpoints>): Promise<void> => {
      const loads = waiting.get(clusterId) ?? [];
      try {
        const checkpoints = await read();
        for (const load of loads) load.resolve({ ...checkpoints });
      } catch (error) {
        for (const load of loads) load.reject(error);
      }
    };
    await Promise.all(
      chunks.map(async (chunk) => {
        const found = this.batchGet(chunk);
        await Promise.all(chunk.map((clusterId) => settle(clusterId, async () => (await found).get(clusterId) ?? this.loadPartition(clusterId))));
      }),
    );
  }

  /** The checkpoints items of `clusterIds` that exist, consistent, retrying what DynamoDB left unprocessed. */
  private async batchGet(clusterIds: readonly string[]): Promise<Map<string, Checkpoints>> {
    const found = new Map<string, Checkpoints>();
    let keys = clusterIds.map((clusterId) => checkpointsItemKey(clusterId));
    for (let attempt = 1; keys.length > 0 && attempt <= BATCH_GET_ATTEMPTS; attempt += 1) {
      if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
      let output;
      try {
        output = await this.client.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } } }));
      } catch (error) {
        throw mapDynamoError(error, `load checkpoints of ${clusterIds.length} cluster(s)`);
      }
      for (const item of (output.Responses?.[this.tableName] ?? []) as CheckpointItem[]) found.set(checkpointClusterOf(item.pk), item.checkpoints ?? {});
      keys = (output.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as typeof keys;
    }
    return found;
  }

  /** One Query of the cluster's partition: the checkpoints item, over the earlier layout's item per resource. */
  private async loadPartition(clusterId: string): Promise<Checkpoints> {
    const { pk } = checkpointsItemKey(clusterId);
    const items = await queryPartition<CheckpointItem>(this.client, { tableName: this.tableName, partition: pk }, `load checkpoints of ${clusterId}`);
    const earlier: Checkpoints = {};
    let current: Checkpoints = {};
    for (const item of items) {
      if (item.sk === CHECKPOINTS_SORT_KEY) current = item.checkpoints ?? {};
      else if (!item.sk.startsWith('#') && item.resourceVersion !== undefined) earlier[item.sk] = item.resourceVersion;
    }
    return { ...earlier, ...current };
  }

  /** Written with the other saves of its window (see the class comment). */
  saveCheckpoints(clusterId: string, checkpoints: Checkpoints, lease: Lease): Promise<void> {
    // Refused at once: an expired lease must not hurry the window's write for the others.
    if (lease.expiresAt <= this.clock.now()) return Promise.reject(expiredLeaseError(clusterId, lease));
    return new Promise((resolve, reject) => {
      this.saves.push({ clusterId, checkpoints: { ...checkpoints }, lease, resolve, reject });
      this.scheduleSaves(lease);
    });
  }

  /**
   * The window's write goes out `saveWindowMs` after its first save, or sooner: halfway
   * through the remaining time of the shortest lease it holds, so a save asked under a live
   * lease is not refused for the wait alone.
   */
  private scheduleSaves(lease: Lease): void {
    if (this.saveWindowMs <= 0) {
      if (this.saves.length === 1) setImmediate(() => void this.savePending());
      return;
    }
    const now = this.clock.now();
    const due = Math.min(now + this.saveWindowMs, now + Math.max(0, lease.expiresAt - now) / 2);
    if (this.saveTimer !== undefined && due >= this.saveDueAt) return;
    clearTimeout(this.saveTimer);
    this.saveDueAt = due;
    this.saveTimer = setTimeout(() => void this.savePending(), due - now);
  }

  private async savePending(): Promise<void> {
    const asked = this.saves;
    this.saves = [];
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    const now = this.clock.now();
    // The latest save of a cluster wins; every waiter of it gets its outcome.
    const latest = new Map<string, PendingSave>();
    const waiters = new Map<string, PendingSave[]>();
    for (const save of asked) {
      if (save.lease.expiresAt <= now) {
        save.reject(expiredLeaseError(save.clusterId, save.lease));
        continue;
      }
      latest.set(save.clusterId, save);
      waiters.set(save.clusterId, [...(waiters.get(save.clusterId) ?? []), save]);
    }
    const items = [...latest.values()].map((save): CheckpointItem => ({
      ...checkpointsItemKey(save.clusterId),
      checkpoints: save.checkpoints,
      fencingToken: save.lease.fencingToken,
      leaseKey: save.lease.key,
      updatedAt: now,
    }));
    const chunks: CheckpointItem[][] = [];
    for (let start = 0; start < items.length; start += BATCH_WRITE_ITEMS) chunks.push(items.slice(start, start + BATCH_WRITE_ITEMS));
    await Promise.all(
      chunks.map(async (chunk) => {
        const failed = await this.batchWrite(chunk);
        for (const item of chunk) {
          const clusterId = checkpointClusterOf(item.pk);
          const error = failed.get(clusterId);
          for (const save of waiters.get(clusterId) ?? []) {
            if (error === undefined) save.resolve();
            else save.reject(error);
          }
        }
      }),
    );
  }

  /** Writes `items`, asking again for what DynamoDB left unprocessed; the clusters not written, each with its error. */
  private async batchWrite(items: readonly CheckpointItem[]): Promise<Map<string, unknown>> {
    let left = items.map((item) => ({ PutRequest: { Item: item } }));
    for (let attempt = 1; left.length > 0 && attempt <= BATCH_WRITE_ATTEMPTS; attempt += 1) {
      if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
      try {
        const output = await this.client.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: left } }));
        left = (output.UnprocessedItems?.[this.tableName] ?? []) as typeof left;
      } catch (error) {
        const mapped = mapDynamoError(error, `save checkpoints of ${left.length} cluster(s)`);
        return new Map(left.map((request) => [checkpointClusterOf((request.PutRequest.Item as CheckpointItem).pk), mapped]));
      }
    }
    const unprocessed = new Error(`DynamoDB left the checkpoints of ${left.length} cluster(s) unwritten after ${BATCH_WRITE_ATTEMPTS} calls (throttled); they are saved again at the next tick`);
    return new Map(left.map((request) => [checkpointClusterOf((request.PutRequest.Item as CheckpointItem).pk), unprocessed]));
  }

  /** One item per cluster, overwritten: the latest error only, never a log. */
  async recordForwarderError(clusterId: string, message: string): Promise<void> {
    const item: ForwarderErrorItem = { ...forwarderErrorItemKey(clusterId), message: message.slice(0, 2_000), at: this.clock.now() };
    try {
      await this.client.send(new PutCommand({ TableName: this.tableName, Item: item }));
    } catch (error) {
      throw mapDynamoError(error, `record forwarder error of ${clusterId}`);
    }
  }

  async loadForwarderError(clusterId: string): Promise<ForwarderError | undefined> {
    try {
      const output = await this.client.send(new GetCommand({ TableName: this.tableName, Key: forwarderErrorItemKey(clusterId), ConsistentRead: true }));
      const item = output.Item as ForwarderErrorItem | undefined;
      return item ? { message: item.message, at: item.at } : undefined;
    } catch (error) {
      throw mapDynamoError(error, `load forwarder error of ${clusterId}`);
    }
  }
}

function expiredLeaseError(clusterId: string, lease: Lease): LeaseLostError {
  return new LeaseLostError(`checkpoints of ${clusterId} not saved: lease ${lease.key} token ${lease.fencingToken} expired before the write`);
}
