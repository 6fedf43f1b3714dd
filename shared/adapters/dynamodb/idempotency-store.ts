import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConflictError, IdempotencyPayloadMismatchError } from '../../domain/errors';
import type { Clock } from '../../ports/clock';
import { systemClock } from '../../ports/clock';
import type { ClaimOptions, IdempotencyClaim, IdempotencyStore } from '../../ports/store';
import { boundInProgressTtl } from '../../domain/idempotency-rules';
import { isConditionalCheckFailed, mapDynamoError } from './errors';
import { DEFAULT_TABLE_NAME, IDEMPOTENCY_COMPLETED, IDEMPOTENCY_IN_PROGRESS, idempotencyItemKey } from './table';
import type { DynamoStoreOptions, IdempotencyItem } from './table';

/** The stored record as the store reasons about it, whichever call returned it. */
interface ExistingRecord {
  status?: string;
  result?: string;
  payloadHash?: string;
}

/** Reads `status` and `result` from a raw (marshalled) item, as ConditionalCheckFailed carries one. */
function fromRawItem(item: Record<string, unknown> | undefined): ExistingRecord | undefined {
  if (item === undefined) return undefined;
  const text = (name: string): string | undefined => {
    const value = item[name] as { S?: string } | undefined;
    return value?.S;
  };
  return { status: text('status'), result: text('result'), payloadHash: text('payloadHash') };
}

function toClaim(record: ExistingRecord): IdempotencyClaim {
  if (record.status === IDEMPOTENCY_COMPLETED) {
    return { state: 'completed', result: record.result === undefined ? undefined : (JSON.parse(record.result) as unknown) };
  }
  return { state: 'in-progress' };
}

const NAMES = { '#status': 'status', '#result': 'result' };

/**
 * At-most-once records. The claim is a single conditional put that also returns the record
 * it collided with, so a duplicate learns "completed (with result)" or "in progress"
 * without a second read that could race with the first worker.
 */
export class DynamoIdempotencyStore implements IdempotencyStore {
  private readonly tableName: string;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly clock: Clock = systemClock,
    options: DynamoStoreOptions = {},
  ) {
    this.tableName = options.tableName ?? DEFAULT_TABLE_NAME;
  }

  async claim(key: string, options: ClaimOptions): Promise<IdempotencyClaim> {
    const nowMs = this.clock.now();
    const nowSeconds = Math.floor(nowMs / 1000);
    const item: IdempotencyItem = {
      ...idempotencyItemKey(key),
      status: IDEMPOTENCY_IN_PROGRESS,
      inProgressExpiry: nowMs + boundInProgressTtl(options.inProgressTtlMs, options.remainingTimeMs),
      expiresAt: nowSeconds + options.recordTtlSeconds,
      recordTtlSeconds: options.recordTtlSeconds,
      ...(options.payloadHash === undefined ? {} : { payloadHash: options.payloadHash }),
      ...(options.owner === undefined ? {} : { owner: options.owner }),
    };
    // Absent, past its TTL (TTL deletes lazily, so the item may linger), an in-progress
    // claim whose worker died, or our own in-progress claim (a retry of this very put whose
    // reply was lost): anything else belongs to someone and is returned as ALL_OLD.
    const ownClaim = options.owner === undefined ? '' : ' OR (#status = :inProgress AND #owner = :owner)';
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: `attribute_not_exists(pk) OR expiresAt < :now OR (#status = :inProgress AND inProgressExpiry < :nowMs)${ownClaim}`,
          ExpressionAttributeNames: { '#status': 'status', ...(options.owner === undefined ? {} : { '#owner': 'owner' }) },
          ExpressionAttributeValues: {
            ':now': nowSeconds,
            ':nowMs': nowMs,
            ':inProgress': IDEMPOTENCY_IN_PROGRESS,
            ...(options.owner === undefined ? {} : { ':owner': options.owner }),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { state: 'claimed' };
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw mapDynamoError(error, `claim idempotency key ${key}`);
      const existing = fromRawItem((error as { Item?: Record<string, unknown> }).Item) ?? (await this.read(key));
      if (existing === undefined) return { state: 'in-progress' };
      if (options.payloadHash !== undefined && existing.payloadHash !== undefined && existing.payloadHash !== options.payloadHash) {
        throw new IdempotencyPayloadMismatchError(key, { cause: error });
      }
      return toClaim(existing);
    }
  }

  async complete(key: string, result: unknown): Promise<void> {
    const nowSeconds = Math.floor(this.clock.now() / 1000);
    const serialised = JSON.stringify(result);
    try {
      // The record lives for its TTL from completion, not from the claim.
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: idempotencyItemKey(key),
          UpdateExpression:
            serialised === undefined
              ? 'SET #status = :completed, expiresAt = recordTtlSeconds + :now REMOVE inProgressExpiry, #result'
              : 'SET #status = :completed, #result = :result, expiresAt = recordTtlSeconds + :now REMOVE inProgressExpiry',
          ConditionExpression: '#status = :inProgress',
          ExpressionAttributeNames: NAMES,
          ExpressionAttributeValues: {
            ':completed': IDEMPOTENCY_COMPLETED,
            ':inProgress': IDEMPOTENCY_IN_PROGRESS,
            ':now': nowSeconds,
            ...(serialised === undefined ? {} : { ':result': serialised }),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw mapDynamoError(error, `complete idempotency key ${key}`);
      const existing = fromRawItem((error as { Item?: Record<string, unknown> }).Item);
      // Another worker that reclaimed a stale claim finished first: its outcome stands.
      if (existing?.status === IDEMPOTENCY_COMPLETED) return;
      throw new ConflictError(`idempotency key ${key} has no claim to complete`, { cause: error });
    }
  }

  async abandon(key: string, owner?: string): Promise<void> {
    try {
      // Only an in-progress claim (a completed record must keep answering duplicates), and
      // with an owner only that owner's: a claim another worker took over stays.
      await this.client.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: idempotencyItemKey(key),
          ConditionExpression: owner === undefined ? '#status = :inProgress' : '#status = :inProgress AND #owner = :owner',
          ExpressionAttributeNames: { '#status': 'status', ...(owner === undefined ? {} : { '#owner': 'owner' }) },
          ExpressionAttributeValues: { ':inProgress': IDEMPOTENCY_IN_PROGRESS, ...(owner === undefined ? {} : { ':owner': owner }) },
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) return;
      throw mapDynamoError(error, `abandon idempotency key ${key}`);
    }
  }

  private async read(key: string): Promise<ExistingRecord | undefined> {
    try {
      const output = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: idempotencyItemKey(key), ConsistentRead: true }),
      );
      return output.Item as ExistingRecord | undefined;
    } catch (error) {
      throw mapDynamoError(error, `read idempotency key ${key}`);
    }
  }
}
