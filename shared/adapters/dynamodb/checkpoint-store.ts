import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LeaseLostError } from '../../domain/errors';
import type { Clock } from '../../ports/clock';
import { systemClock } from '../../ports/clock';
import type { CheckpointStore, ForwarderError, Lease } from '../../ports/store';
import { isConditionalCheckFailed, mapDynamoError } from './errors';
import { DEFAULT_TABLE_NAME, checkpointItemKey, forwarderErrorItemKey } from './table';
import type { CheckpointItem, DynamoStoreOptions, ForwarderErrorItem } from './table';

/**
 * Forwarder checkpoints, one item per cluster and resource. Each write stores the writer's
 * fencing token and requires it to be at least the stored one: once a newer lease holder
 * has written, a stalled older forwarder can no longer move the checkpoint back.
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

  async loadCheckpoint(clusterId: string, resource: string): Promise<string | undefined> {
    try {
      const output = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: checkpointItemKey(clusterId, resource), ConsistentRead: true }),
      );
      return (output.Item as CheckpointItem | undefined)?.resourceVersion;
    } catch (error) {
      throw mapDynamoError(error, `load checkpoint ${clusterId}/${resource}`);
    }
  }

  async saveCheckpoint(clusterId: string, resource: string, resourceVersion: string, lease: Lease): Promise<void> {
    const item: CheckpointItem = {
      ...checkpointItemKey(clusterId, resource),
      resourceVersion,
      fencingToken: lease.fencingToken,
      leaseKey: lease.key,
      updatedAt: this.clock.now(),
    };
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          // Fenced per lease: tokens of different leases (a shard's and the next layout's, or
          // a cluster's own) are not comparable, and either forwarder's position is safe to
          // resume from (it passes only hints that forwarder published).
          ConditionExpression: 'attribute_not_exists(pk) OR leaseKey <> :key OR fencingToken <= :token',
          ExpressionAttributeValues: { ':token': lease.fencingToken, ':key': lease.key },
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) {
        throw new LeaseLostError(
          `checkpoint ${clusterId}/${resource} was written under a newer lease than ${lease.key} token ${lease.fencingToken}`,
          { cause: error },
        );
      }
      throw mapDynamoError(error, `save checkpoint ${clusterId}/${resource}`);
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
