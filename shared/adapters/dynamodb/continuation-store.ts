import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../../domain/errors';
import type { Continuation, ContinuationStore } from '../../ports/store';
import { isConditionalCheckFailed, mapDynamoError } from './errors';
import { DEFAULT_TABLE_NAME, continuationItemKey } from './table';
import type { ContinuationItem, DynamoStoreOptions } from './table';

/** An abandoned continuation (its work superseded or its cluster gone) stays this long after its last write. */
export const CONTINUATION_RETENTION_SECONDS = 24 * 3600;

function moved(continuation: { clusterId: string; work: string }, version: number, cause: unknown): ConflictError {
  return new ConflictError(`continuation ${continuation.work} of cluster ${continuation.clusterId} moved since version ${version} was read`, { cause });
}

/**
 * Continuations in the `CONTINUATION#<cluster>` partitions. Each write is conditional on
 * the version read (`attribute_not_exists(pk)` for the first), so a duplicate or
 * superseded resumer loses with ConflictError instead of overwriting newer progress.
 */
export class DynamoContinuationStore implements ContinuationStore {
  private readonly tableName: string;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    options: DynamoStoreOptions = {},
  ) {
    this.tableName = options.tableName ?? DEFAULT_TABLE_NAME;
  }

  async loadContinuation(clusterId: string, work: string): Promise<Continuation | undefined> {
    try {
      const output = await this.client.send(new GetCommand({ TableName: this.tableName, Key: continuationItemKey(clusterId, work), ConsistentRead: true }));
      const item = output.Item as ContinuationItem | undefined;
      return item === undefined ? undefined : { ...(JSON.parse(item.continuation) as Continuation), version: Number(item.version) };
    } catch (error) {
      throw mapDynamoError(error, `load continuation ${work} of cluster ${clusterId}`);
    }
  }

  async saveContinuation(continuation: Continuation): Promise<Continuation> {
    const saved = { ...continuation, version: continuation.version + 1 };
    const item: ContinuationItem = {
      ...continuationItemKey(continuation.clusterId, continuation.work),
      continuation: JSON.stringify(saved),
      version: saved.version,
      expiresAt: Math.floor(continuation.updatedAt / 1000) + CONTINUATION_RETENTION_SECONDS,
    };
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          ...(continuation.version === 0
            ? { ConditionExpression: 'attribute_not_exists(pk)' }
            : { ConditionExpression: 'version = :read', ExpressionAttributeValues: { ':read': continuation.version } }),
        }),
      );
      return saved;
    } catch (error) {
      if (isConditionalCheckFailed(error)) throw moved(continuation, continuation.version, error);
      throw mapDynamoError(error, `save continuation ${continuation.work} of cluster ${continuation.clusterId}`);
    }
  }

  async deleteContinuation(clusterId: string, work: string, version: number): Promise<void> {
    try {
      await this.client.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: continuationItemKey(clusterId, work),
          ConditionExpression: 'version = :read',
          ExpressionAttributeValues: { ':read': version },
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) throw moved({ clusterId, work }, version, error);
      throw mapDynamoError(error, `delete continuation ${work} of cluster ${clusterId}`);
    }
  }
}
