import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mapDynamoError } from './errors';

/** One partition of the table, optionally narrowed to sort keys starting with `sortPrefix`. */
export interface PartitionQuery {
  tableName: string;
  partition: string;
  sortPrefix?: string;
}

/**
 * Every item of a partition (or of a sort-key prefix in it), following
 * `LastEvaluatedKey` across pages, read consistently.
 * @throws the mapped store error, naming `action`
 */
export async function queryPartition<T>(client: DynamoDBDocumentClient, query: PartitionQuery, action: string): Promise<T[]> {
  const items: T[] = [];
  const byPrefix = query.sortPrefix !== undefined;
  let startKey: Record<string, unknown> | undefined;
  try {
    do {
      const output = await client.send(
        new QueryCommand({
          TableName: query.tableName,
          KeyConditionExpression: byPrefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
          ExpressionAttributeValues: byPrefix ? { ':pk': query.partition, ':prefix': query.sortPrefix } : { ':pk': query.partition },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      items.push(...((output.Items ?? []) as T[]));
      startKey = output.LastEvaluatedKey;
    } while (startKey !== undefined);
  } catch (error) {
    throw mapDynamoError(error, action);
  }
  return items;
}
