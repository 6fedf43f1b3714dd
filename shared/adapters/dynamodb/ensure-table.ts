import { CreateTableCommand, DescribeTableCommand, DescribeTimeToLiveCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mapDynamoError } from './errors';
import { DEFAULT_TABLE_NAME, createTableInput, timeToLiveInput } from './table';

type AnyDynamoClient = DynamoDBClient | DynamoDBDocumentClient;

function errorName(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null ? (error as { name?: string }).name : undefined;
}

async function waitUntilActive(client: DynamoDBClient, tableName: string): Promise<void> {
  for (let attempt = 0; attempt < 120; attempt += 1) {
    const output = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (output.Table?.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`table ${tableName} did not become ACTIVE within 60 s`);
}

/**
 * Creates the store's table and enables TTL on it, if not done yet. Safe to call on every
 * start and from several processes at once. Meant for DynamoDB Local and tests; in AWS the
 * table comes from serverless.yml.
 */
export async function ensureTable(anyClient: AnyDynamoClient, tableName: string = DEFAULT_TABLE_NAME): Promise<void> {
  // A document client shares the base client's stack and sends base commands unchanged.
  const client = anyClient as DynamoDBClient;
  try {
    try {
      await client.send(new DescribeTableCommand({ TableName: tableName }));
    } catch (error) {
      if (errorName(error) !== 'ResourceNotFoundException') throw error;
      try {
        await client.send(new CreateTableCommand(createTableInput(tableName)));
      } catch (createError) {
        // Someone else created it between our describe and create.
        if (errorName(createError) !== 'ResourceInUseException') throw createError;
      }
    }
    await waitUntilActive(client, tableName);
    const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
    const status = ttl.TimeToLiveDescription?.TimeToLiveStatus;
    if (status !== 'ENABLED' && status !== 'ENABLING') {
      await client.send(new UpdateTimeToLiveCommand(timeToLiveInput(tableName)));
    }
  } catch (error) {
    throw mapDynamoError(error, `ensure table ${tableName}`);
  }
}
