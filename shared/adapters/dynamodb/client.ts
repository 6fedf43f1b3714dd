import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export interface DynamoClientOptions {
  region: string;
  /** DynamoDB Local or another endpoint override; credentials default to static local ones. */
  endpoint?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Attempts per call including the first (SDK standard retry with backoff). Default 3. */
  maxAttempts?: number;
  /** Per-request socket timeout in ms. Default 3000: store calls are single small items. */
  requestTimeoutMs?: number;
  /**
   * How long opening a connection may take, in ms. Default 1000, ample for DynamoDB; DynamoDB
   * Local (one JVM on the developer's machine) can take longer under a burst of new connections.
   */
  connectionTimeoutMs?: number;
}

/**
 * Creates the document client the stores take. Create it once per process (outside the
 * Lambda handler) so connections are reused across invocations.
 */
export function createDynamoClient(options: DynamoClientOptions): DynamoDBDocumentClient {
  const credentials =
    options.credentials ?? (options.endpoint === undefined ? undefined : { accessKeyId: 'local', secretAccessKey: 'local' });
  const client = new DynamoDBClient({
    region: options.region,
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    ...(credentials === undefined ? {} : { credentials }),
    maxAttempts: options.maxAttempts ?? 3,
    retryMode: 'standard',
    requestHandler: { connectionTimeout: options.connectionTimeoutMs ?? 1_000, requestTimeout: options.requestTimeoutMs ?? 3_000 },
  });
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true },
  });
}
