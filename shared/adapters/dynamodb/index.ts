import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../../ports/clock';
import { systemClock } from '../../ports/clock';
import type { Stores } from '../../ports/store';
import { DynamoCheckpointStore } from './checkpoint-store';
import { DynamoClusterRegistry } from './cluster-registry';
import { DynamoContinuationStore } from './continuation-store';
import { DynamoFleetStore } from './fleet-store';
import { DynamoIdempotencyStore } from './idempotency-store';
import { DynamoLeaseStore } from './lease-store';
import type { DynamoStoreOptions } from './table';

export { createDynamoClient } from './client';
export type { DynamoClientOptions } from './client';
export { isConditionalCheckFailed, mapDynamoError } from './errors';
export * from './table';
export { DynamoCheckpointStore, DynamoClusterRegistry, DynamoContinuationStore, DynamoFleetStore, DynamoIdempotencyStore, DynamoLeaseStore };

/** All stores over one document client and table. */
export function createDynamoStores(client: DynamoDBDocumentClient, options: DynamoStoreOptions & { clock?: Clock } = {}): Stores {
  const clock = options.clock ?? systemClock;
  return {
    leases: new DynamoLeaseStore(client, clock, options),
    idempotency: new DynamoIdempotencyStore(client, clock, options),
    checkpoints: new DynamoCheckpointStore(client, clock, options),
    clusters: new DynamoClusterRegistry(client, options),
    fleet: new DynamoFleetStore(client, options),
    continuations: new DynamoContinuationStore(client, options),
  };
}
export { ensureTable } from './ensure-table';
export { DynamoClusterAdmin } from './cluster-admin';
export type { CheckpointState, LeaseState } from './cluster-admin';
