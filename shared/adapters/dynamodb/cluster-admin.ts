import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ClusterRecord, ForwarderError } from '../../ports/store';
import { DynamoCheckpointStore } from './checkpoint-store';
import { DynamoClusterRegistry } from './cluster-registry';
import { DynamoFleetStore } from './fleet-store';
import type { SyncWave } from '../../domain/fleet/sync-wave';
import { mapDynamoError } from './errors';
import { queryPartition } from './query';
import { CHECKPOINTS_SORT_KEY, DEFAULT_TABLE_NAME, FORWARDER_ERROR_SORT_KEY, checkpointItemKey, clusterItemKey, leaseItemKey } from './table';
import type { CheckpointItem, DynamoStoreOptions, LeaseItem } from './table';

/** One forwarder checkpoint as stored: the resourceVersion and when it was written. */
export interface CheckpointState {
  resource: string;
  resourceVersion: string;
  /** Epoch ms of the write. */
  updatedAt: number;
  /** The lease it was written under: its shard's, or the cluster's own. */
  leaseKey?: string;
}

/** Who holds a lease and until when (epoch ms); no holder when free. */
export interface LeaseState {
  holder?: string;
  expiresAt: number;
}

/**
 * What `kubectl ome admin cluster` reads and writes beyond the registry the functions use:
 * a cluster's checkpoints and forwarder lease, for describe, and removal of the record
 * with its checkpoints, for deregister. Leases stay: their fencing counters must never go
 * back, so a cluster registered again under the same id keeps fencing out old holders.
 */
export class DynamoClusterAdmin extends DynamoClusterRegistry {
  private readonly table: string;
  private readonly checkpointStore: DynamoCheckpointStore;
  private readonly fleetStore: DynamoFleetStore;

  constructor(
    private readonly documents: DynamoDBDocumentClient,
    options: DynamoStoreOptions = {},
  ) {
    super(documents, options);
    this.table = options.tableName ?? DEFAULT_TABLE_NAME;
    this.checkpointStore = new DynamoCheckpointStore(documents, undefined, options);
    this.fleetStore = new DynamoFleetStore(documents, options);
  }

  /** The fleet sync waves, for the dashboard (a Query of the FLEET partition). */
  listWaves(): Promise<SyncWave[]> {
    return this.fleetStore.listWaves();
  }

  /** The forwarder's latest warning or error for the cluster, if one was recorded. */
  loadForwarderError(clusterId: string): Promise<ForwarderError | undefined> {
    return this.checkpointStore.loadForwarderError(clusterId);
  }

  /** Each resource's checkpoint: from the cluster's checkpoints item, else from the earlier layout's item of its own. */
  async listCheckpoints(clusterId: string): Promise<CheckpointState[]> {
    const byResource = new Map<string, CheckpointState>();
    for (const item of await this.checkpointItems(clusterId)) {
      const lease = item.leaseKey ? { leaseKey: item.leaseKey } : {};
      if (item.sk === CHECKPOINTS_SORT_KEY) {
        for (const [resource, resourceVersion] of Object.entries(item.checkpoints ?? {})) byResource.set(resource, { resource, resourceVersion, updatedAt: item.updatedAt, ...lease });
      } else if (item.sk !== FORWARDER_ERROR_SORT_KEY && item.resourceVersion !== undefined && !byResource.has(item.sk)) {
        byResource.set(item.sk, { resource: item.sk, resourceVersion: item.resourceVersion, updatedAt: item.updatedAt, ...lease });
      }
    }
    return [...byResource.values()];
  }

  /** Every item of the cluster's checkpoint partition: its checkpoints, the earlier layout's, its forwarder error. */
  private checkpointItems(clusterId: string): Promise<CheckpointItem[]> {
    const query = { tableName: this.table, partition: checkpointItemKey(clusterId, '').pk };
    return queryPartition<CheckpointItem>(this.documents, query, `list checkpoints of ${clusterId}`);
  }

  async readLease(key: string): Promise<LeaseState | undefined> {
    try {
      const output = await this.documents.send(new GetCommand({ TableName: this.table, Key: leaseItemKey(key), ConsistentRead: true }));
      const item = output.Item as LeaseItem | undefined;
      if (!item) return undefined;
      return { ...(item.holder ? { holder: item.holder } : {}), expiresAt: item.leaseExpiry };
    } catch (error) {
      throw mapDynamoError(error, `read lease ${key}`);
    }
  }

  /** Deletes the record, the cluster's checkpoints and its recorded forwarder error; a missing record is not an error. */
  async deleteCluster(record: Pick<ClusterRecord, 'id'>): Promise<void> {
    const items = await this.checkpointItems(record.id);
    try {
      for (const item of items) {
        await this.documents.send(new DeleteCommand({ TableName: this.table, Key: checkpointItemKey(record.id, item.sk) }));
      }
      await this.documents.send(new DeleteCommand({ TableName: this.table, Key: clusterItemKey(record.id) }));
    } catch (error) {
      throw mapDynamoError(error, `delete cluster ${record.id}`);
    }
  }
}
