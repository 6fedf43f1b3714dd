import { BatchGetCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LeaseLostError } from '../../domain/errors';
import type { Clock } from '../../ports/clock';
import { systemClock } from '../../ports/clock';
import type { CheckpointStore, Checkpoints, ForwarderError, Lease } from '../../ports/store';
import { isConditionalCheckFailed, mapDynamoError } from './errors';
import { queryPartition } from './query';
import { CHECKPOINTS_SORT_KEY, DEFAULT_TABLE_NAME, checkpointClusterOf, checkpointsItemKey, forwarderErrorItemKey } from './table';
import type { CheckpointItem, DynamoStoreOptions, ForwarderErrorItem } from './table';

/** Keys per BatchGetItem call: DynamoDB's limit. */
const BATCH_GET_KEYS = 100;
/** Calls for the keys a BatchGetItem left unprocessed (throttling) before they are loaded one by one. */
const BATCH_GET_ATTEMPTS = 4;

interface PendingLoad {
  clusterId: string;
  resolve(checkpoints: Checkpoints): void;
  reject(error: unknown): void;
}

/**
 * Forwarder checkpoints, one item per cluster holding every watched resource's: one read
 * when a forwarder starts, one write per save whatever moved. Each write stores the lease
 * it was made under and requires, for that lease, a fencing token at least the stored one:
 * once a newer holder has written, a stalled older forwarder can no longer move the
 * checkpoints back. Tokens of another lease (a shard's after an upgrade or a change of the
 * shard count) are not comparable; either forwarder's checkpoints are safe to resume from.
 *
 * Loads asked for in the same turn of the event loop (a shard's run starts all its clusters
 * at once) are read together: BatchGetItem of their checkpoints items, 100 keys a call, so
 * a shard's start costs a call per hundred clusters, not one per cluster. A cluster without
 * that item (never saved, or saved only in the earlier layout) is loaded on its own.
 */
export class DynamoCheckpointStore implements CheckpointStore {
  private readonly tableName: string;
  private pending: PendingLoad[] = [];

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly clock: Clock = systemClock,
    options: DynamoStoreOptions = {},
  ) {
    this.tableName = options.tableName ?? DEFAULT_TABLE_NAME;
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

  async saveCheckpoints(clusterId: string, checkpoints: Checkpoints, lease: Lease): Promise<void> {
    const item: CheckpointItem = {
      ...checkpointsItemKey(clusterId),
      checkpoints,
      fencingToken: lease.fencingToken,
      leaseKey: lease.key,
      updatedAt: this.clock.now(),
    };
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: 'attribute_not_exists(pk) OR leaseKey <> :key OR fencingToken <= :token',
          ExpressionAttributeValues: { ':token': lease.fencingToken, ':key': lease.key },
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) {
        throw new LeaseLostError(`checkpoints of ${clusterId} were written under a newer lease than ${lease.key} token ${lease.fencingToken}`, { cause: error });
      }
      throw mapDynamoError(error, `save checkpoints of ${clusterId}`);
    }
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
