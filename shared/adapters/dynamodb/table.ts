/**
 * The single-table design shared by every store (see docs/storage.md). serverless.yml and
 * the local bootstrap create the table from `createTableInput`, so there is one definition.
 *
 * | item        | pk                   | sk              | TTL (`expiresAt`)          |
 * | ----------- | -------------------- | --------------- | -------------------------- |
 * | lease       | `LEASE#<key>`        | `LEASE`         | none: it holds the fencing counter |
 * | idempotency | `IDEMPOTENCY#<key>`  | `IDEMPOTENCY`   | claim time + record TTL    |
 * | checkpoints | `CHECKPOINT#<cluster>` | `#checkpoints` | none: every resource's, overwritten |
 * | checkpoint (earlier layout, read only) | `CHECKPOINT#<cluster>` | `<resource>` | none |
 * | forwarder error | `CHECKPOINT#<cluster>` | `#forwarder-error` | none (overwritten)  |
 * | cluster     | `REGISTRY`           | `CLUSTER#<id>`  | none                       |
 * | sync wave   | `FLEET`              | `WAVE#<id>`     | 90 days after it finished  |
 * | drift report| `FLEET`              | `DRIFT#<cluster>` | none                     |
 * | freeze window | `FLEET`            | `FREEZE#<name>` | none                       |
 * | continuation| `CONTINUATION#<cluster>` | `<work>`    | last write + 1 day         |
 */
import type { CreateTableCommandInput, UpdateTimeToLiveCommandInput } from '@aws-sdk/client-dynamodb';

export const DEFAULT_TABLE_NAME = 'ome-control-plane';

/** Partition and sort key attribute names (both strings). */
export const PARTITION_KEY = 'pk';
export const SORT_KEY = 'sk';
/** The table's TTL attribute: epoch seconds, as DynamoDB TTL requires. */
export const TTL_ATTRIBUTE = 'expiresAt';

export interface ItemKey {
  pk: string;
  sk: string;
}

export function leaseItemKey(key: string): ItemKey {
  return { pk: `LEASE#${key}`, sk: 'LEASE' };
}

export function idempotencyItemKey(key: string): ItemKey {
  return { pk: `IDEMPOTENCY#${key}`, sk: 'IDEMPOTENCY' };
}

const CHECKPOINT_PARTITION_PREFIX = 'CHECKPOINT#';

export function checkpointItemKey(clusterId: string, resource: string): ItemKey {
  return { pk: `${CHECKPOINT_PARTITION_PREFIX}${clusterId}`, sk: resource };
}

/** The cluster whose checkpoint partition `pk` is. */
export function checkpointClusterOf(pk: string): string {
  return pk.slice(CHECKPOINT_PARTITION_PREFIX.length);
}

/** Every resource's checkpoint of a cluster in one item; items of one resource each are the earlier layout, still read. */
export const CHECKPOINTS_SORT_KEY = '#checkpoints';

export function checkpointsItemKey(clusterId: string): ItemKey {
  return checkpointItemKey(clusterId, CHECKPOINTS_SORT_KEY);
}

/** The forwarder's latest error sits beside the cluster's checkpoints; `#` sorts before every resource name. */
export const FORWARDER_ERROR_SORT_KEY = '#forwarder-error';

export function forwarderErrorItemKey(clusterId: string): ItemKey {
  return checkpointItemKey(clusterId, FORWARDER_ERROR_SORT_KEY);
}

export interface ForwarderErrorItem extends ItemKey {
  message: string;
  at: number;
}

/** All cluster records share one partition so listing them is one Query, not a table scan. */
export const REGISTRY_PARTITION = 'REGISTRY';
export const CLUSTER_SORT_PREFIX = 'CLUSTER#';

export function clusterItemKey(id: string): ItemKey {
  return { pk: REGISTRY_PARTITION, sk: `${CLUSTER_SORT_PREFIX}${id}` };
}

/** Sync waves, drift reports and freeze windows share one partition: a handful of items, listed with one Query. */
export const FLEET_PARTITION = 'FLEET';
export const WAVE_SORT_PREFIX = 'WAVE#';
export const DRIFT_SORT_PREFIX = 'DRIFT#';
export const FREEZE_SORT_PREFIX = 'FREEZE#';

export function freezeWindowItemKey(name: string): ItemKey {
  return { pk: FLEET_PARTITION, sk: `${FREEZE_SORT_PREFIX}${name}` };
}

export function waveItemKey(id: string): ItemKey {
  return { pk: FLEET_PARTITION, sk: `${WAVE_SORT_PREFIX}${id}` };
}

export function driftReportItemKey(clusterId: string): ItemKey {
  return { pk: FLEET_PARTITION, sk: `${DRIFT_SORT_PREFIX}${clusterId}` };
}

/** Where a long piece of work left off, one partition per cluster (docs/storage.md). */
export const CONTINUATION_PARTITION_PREFIX = 'CONTINUATION#';

export function continuationItemKey(clusterId: string, work: string): ItemKey {
  return { pk: `${CONTINUATION_PARTITION_PREFIX}${clusterId}`, sk: work };
}

/** A continuation: `continuation` is the record as JSON text; `version` is the condition of every write. */
export interface ContinuationItem extends ItemKey {
  continuation: string;
  version: number;
  /** Epoch seconds: a continuation nobody resumed for a day ages out. */
  expiresAt: number;
}

/** A wave: `wave` is the record as JSON text; `version` is the condition of every write. */
export interface WaveItem extends ItemKey {
  wave: string;
  version: number;
  waveState: string;
  /** Epoch seconds; set once the wave finished, so finished waves age out. */
  expiresAt?: number;
}

export interface DriftReportItem extends ItemKey {
  report: string;
}

/** A freeze window: `window` is the record as JSON text. */
export interface FreezeWindowItem extends ItemKey {
  window: string;
}

/** Lease item: `holder` is absent while free; `leaseExpiry` is epoch ms (not the TTL attribute). */
export interface LeaseItem extends ItemKey {
  holder?: string;
  fencingToken: number;
  leaseExpiry: number;
}

export const IDEMPOTENCY_IN_PROGRESS = 'INPROGRESS';
export const IDEMPOTENCY_COMPLETED = 'COMPLETED';

/** Idempotency item: `result` is the JSON text of the outcome, so any value round-trips. */
export interface IdempotencyItem extends ItemKey {
  status: typeof IDEMPOTENCY_IN_PROGRESS | typeof IDEMPOTENCY_COMPLETED;
  /** Epoch ms after which an in-progress claim counts as abandoned. */
  inProgressExpiry?: number;
  /** Epoch seconds; TTL. Reads treat a past value as absent, since TTL deletes lazily. */
  expiresAt: number;
  recordTtlSeconds: number;
  result?: string;
  /** sha256 of the request the key stands for; a live record with another hash refuses the claim. */
  payloadHash?: string;
  /** The request id that claimed it: its own retry may claim again, and only it may abandon. */
  owner?: string;
}

/** A cluster's checkpoints (sort key CHECKPOINTS_SORT_KEY), or one resource's in the earlier layout. */
export interface CheckpointItem extends ItemKey {
  /** Per resource, the last resourceVersion forwarded. */
  checkpoints?: Record<string, string>;
  /** The earlier layout's one resource. */
  resourceVersion?: string;
  /** Fencing token of the lease the last writer held. */
  fencingToken: number;
  leaseKey: string;
  updatedAt: number;
}

export interface ClusterItem extends ItemKey {
  record: Record<string, unknown>;
}

/** CreateTable input for the store's table: on-demand, string `pk`/`sk`. */
export function createTableInput(tableName: string = DEFAULT_TABLE_NAME): CreateTableCommandInput {
  return {
    TableName: tableName,
    AttributeDefinitions: [
      { AttributeName: PARTITION_KEY, AttributeType: 'S' },
      { AttributeName: SORT_KEY, AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: PARTITION_KEY, KeyType: 'HASH' },
      { AttributeName: SORT_KEY, KeyType: 'RANGE' },
    ],
    BillingMode: 'PAY_PER_REQUEST',
  };
}

/** UpdateTimeToLive input enabling TTL on `expiresAt`. */
export function timeToLiveInput(tableName: string = DEFAULT_TABLE_NAME): UpdateTimeToLiveCommandInput {
  return {
    TableName: tableName,
    TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
  };
}

/** Options every DynamoDB store takes. */
export interface DynamoStoreOptions {
  tableName?: string;
  /** How long checkpoint saves are gathered into one write (`CHECKPOINT_SAVE_WINDOW_MS` by default; 0: the saves of one turn). */
  checkpointSaveWindowMs?: number;
}
