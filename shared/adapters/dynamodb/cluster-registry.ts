import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ClusterRecord, ClusterRegistry } from '../../ports/store';
import { mapDynamoError } from './errors';
import { queryPartition } from './query';
import { CLUSTER_SORT_PREFIX, DEFAULT_TABLE_NAME, REGISTRY_PARTITION, clusterItemKey } from './table';
import type { ClusterItem, DynamoStoreOptions } from './table';

/** The registry of clusters the control plane serves, in one partition (a handful of items). */
export class DynamoClusterRegistry implements ClusterRegistry {
  private readonly tableName: string;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    options: DynamoStoreOptions = {},
  ) {
    this.tableName = options.tableName ?? DEFAULT_TABLE_NAME;
  }

  async getCluster(id: string): Promise<ClusterRecord | undefined> {
    try {
      const output = await this.client.send(new GetCommand({ TableName: this.tableName, Key: clusterItemKey(id), ConsistentRead: true }));
      return (output.Item as ClusterItem | undefined)?.record as ClusterRecord | undefined;
    } catch (error) {
      throw mapDynamoError(error, `get cluster ${id}`);
    }
  }

  /** Every registered cluster, ordered by id. */
  async listClusters(): Promise<ClusterRecord[]> {
    const query = { tableName: this.tableName, partition: REGISTRY_PARTITION, sortPrefix: CLUSTER_SORT_PREFIX };
    const items = await queryPartition<ClusterItem>(this.client, query, 'list clusters');
    return items.map((item) => item.record as unknown as ClusterRecord);
  }

  /** Creates or replaces the record. */
  async putCluster(record: ClusterRecord): Promise<void> {
    const item: ClusterItem = { ...clusterItemKey(record.id), record: { ...record } };
    try {
      await this.client.send(new PutCommand({ TableName: this.tableName, Item: item }));
    } catch (error) {
      throw mapDynamoError(error, `put cluster ${record.id}`);
    }
  }
}
