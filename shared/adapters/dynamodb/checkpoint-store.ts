import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LeaseLostError } from '../../domain/errors';
import type { Clock } from '../../ports/clock';
import { systemClock } from '../../ports/clock';
import type { CheckpointStore, Checkpoints, ForwarderError, Lease } from '../../ports/store';
import { isConditionalCheckFailed, mapDynamoError } from './errors';
import { queryPartition } from './query';
import { CHECKPOINTS_SORT_KEY, DEFAULT_TABLE_NAME, checkpointsItemKey, forwarderErrorItemKey } from './table';
import type { CheckpointItem, DynamoStoreOptions, ForwarderErrorItem } from './table';

/**
 * Forwarder checkpoints, one item per cluster holding every watched resource's: one read
 * when a forwarder starts, one write per save whatever moved. Each write stores the lease
 * it was made under and requires, for that lease, a fencing token at least the stored one:
 * once a newer holder has written, a stalled older forwarder can no longer move the
 * checkpoints back. Tokens of another lease (a shard's after an upgrade or a change of the
 * shard count) are not comparable; either forwarder's checkpoints are safe to resume from.
 */
export class DynamoCheckpointStore implements CheckpointStore {
  private readonly tableName: string;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly clock: Clock = systemClock,
    options: DynamoStoreOptions = {},
  ) {
    this.tableName = options.tableName ?? DEFAULT_TABLE_NAME;
  }

  /** One Query of the cluster's partition: the checkpoints item, over the earlier layout's item per resource. */
  async loadCheckpoints(clusterId: string): Promise<Checkpoints> {
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
