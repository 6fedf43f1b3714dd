import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LeaseLostError } from '../../domain/errors';
import type { Clock } from '../../ports/clock';
import { systemClock } from '../../ports/clock';
import type { Lease, LeaseStore } from '../../ports/store';
import { isConditionalCheckFailed, mapDynamoError } from './errors';
import { DEFAULT_TABLE_NAME, leaseItemKey } from './table';
import type { DynamoStoreOptions, LeaseItem } from './table';

/**
 * Leases with fencing tokens in one item per key. Timeline: A acquires (token n) and renews
 * while it works; if A stalls past its expiry, B's acquire succeeds with token n+1, and every
 * later renew or fenced write by A fails its condition on token n.
 */
export class DynamoLeaseStore implements LeaseStore {
  private readonly tableName: string;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly clock: Clock = systemClock,
    options: DynamoStoreOptions = {},
  ) {
    this.tableName = options.tableName ?? DEFAULT_TABLE_NAME;
  }

  async acquire(key: string, holder: string, ttlMs: number): Promise<Lease | undefined> {
    const outcome = await this.tryAcquire(key, holder, ttlMs);
    return 'lease' in outcome ? outcome.lease : undefined;
  }

  async tryAcquire(key: string, holder: string, ttlMs: number): Promise<{ lease: Lease } | { heldUntil: number | undefined }> {
    const now = this.clock.now();
    try {
      // One conditional update: free, expired or already ours. ADD bumps the token
      // atomically with the take, so two winners can never share a token. The item is
      // never deleted (no TTL), so the counter never restarts.
      const output = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: leaseItemKey(key),
          UpdateExpression: 'SET holder = :holder, leaseExpiry = :expiry ADD fencingToken :one',
          ConditionExpression: 'attribute_not_exists(holder) OR leaseExpiry < :now OR holder = :holder',
          ExpressionAttributeValues: { ':holder': holder, ':expiry': now + ttlMs, ':now': now, ':one': 1 },
          // The item as it was before this very update: ADD made the token exactly one more,
          // and the old holder tells a takeover (never released) from a free lease.
          ReturnValues: 'ALL_OLD',
          // A refusal carries the holder's expiry, so a waiter can time its retry without a GetItem.
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      const before = output.Attributes as Partial<LeaseItem> | undefined;
      const takenOver = before?.holder !== undefined && before.holder !== holder;
      return { lease: { key, holder, fencingToken: Number(before?.fencingToken ?? 0) + 1, expiresAt: now + ttlMs, ...(takenOver ? { takenOver } : {}) } };
    } catch (error) {
      if (isConditionalCheckFailed(error)) return { heldUntil: leaseExpiryOf(error) };
      throw mapDynamoError(error, `acquire lease ${key}`);
    }
  }

  async renew(lease: Lease, ttlMs: number): Promise<Lease> {
    const expiresAt = this.clock.now() + ttlMs;
    try {
      // Holder and token both: the same holder re-acquiring also bumps the token, which
      // retires the older Lease value it may still hold somewhere.
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: leaseItemKey(lease.key),
          UpdateExpression: 'SET leaseExpiry = :expiry',
          ConditionExpression: 'holder = :holder AND fencingToken = :token',
          ExpressionAttributeValues: { ':holder': lease.holder, ':token': lease.fencingToken, ':expiry': expiresAt },
        }),
      );
      return { ...lease, expiresAt };
    } catch (error) {
      if (isConditionalCheckFailed(error)) {
        throw new LeaseLostError(`lease ${lease.key} (token ${lease.fencingToken}) is no longer held by ${lease.holder}`, { cause: error });
      }
      throw mapDynamoError(error, `renew lease ${lease.key}`);
    }
  }

  async release(lease: Lease): Promise<void> {
    try {
      // Free the lease but keep the item: it carries the fencing counter.
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: leaseItemKey(lease.key),
          UpdateExpression: 'REMOVE holder SET leaseExpiry = :zero',
          ConditionExpression: 'holder = :holder AND fencingToken = :token',
          ExpressionAttributeValues: { ':holder': lease.holder, ':token': lease.fencingToken, ':zero': 0 },
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) return;
      throw mapDynamoError(error, `release lease ${lease.key}`);
    }
  }
}

/**
 * The `leaseExpiry` of the item a refused condition returned (ReturnValuesOnConditionCheckFailure):
 * the document client leaves that item marshalled (`{ N: '…' }`).
 */
function leaseExpiryOf(error: unknown): number | undefined {
  const attribute = (error as { Item?: Record<string, unknown> }).Item?.leaseExpiry;
  const value = typeof attribute === 'object' && attribute !== null && 'N' in attribute ? Number((attribute as { N: unknown }).N) : Number(attribute);
  return Number.isFinite(value) && attribute !== undefined ? value : undefined;
}
