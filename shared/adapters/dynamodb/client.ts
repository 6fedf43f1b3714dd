import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConcurrencyLimit } from '../../forwarder/concurrency';

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
  /**
   * Calls in flight at once; the rest wait their turn in this process, in order, before the
   * SDK starts any timer. Unset (the default, and what Lambda uses: one invocation's few
   * concurrent calls never queue) leaves calls to the SDK's socket pool of 50, where a call
   * waiting for a socket counts against `connectionTimeoutMs` and is retried at the back of
   * the queue. Set it for a process that makes hundreds of calls at once against one slow
   * endpoint (the local plane against DynamoDB Local); the socket pool is sized to match.
   */
  maxConcurrentRequests?: number;
}

/** The middleware that holds a call until a slot of `maxConcurrentRequests` is free. */
const REQUEST_GATE_MIDDLEWARE = 'requestConcurrencyGate';

/**
 * Creates the document client the stores take. Create it once per process (outside the
 * Lambda handler) so connections are reused across invocations.
 */
export function createDynamoClient(options: DynamoClientOptions): DynamoDBDocumentClient {
  const credentials =
    options.credentials ?? (options.endpoint === undefined ? undefined : { accessKeyId: 'local', secretAccessKey: 'local' });
  const gate = options.maxConcurrentRequests === undefined ? undefined : new ConcurrencyLimit(options.maxConcurrentRequests);
  const client = new DynamoDBClient({
    region: options.region,
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    ...(credentials === undefined ? {} : { credentials }),
    maxAttempts: options.maxAttempts ?? 3,
    retryMode: 'standard',
    requestHandler: {
      connectionTimeout: options.connectionTimeoutMs ?? 1_000,
      requestTimeout: options.requestTimeoutMs ?? 3_000,
      // One socket per slot: a call let through the gate never waits for a socket.
      ...(gate === undefined ? {} : { httpAgent: { maxSockets: gate.max, keepAlive: true }, httpsAgent: { maxSockets: gate.max, keepAlive: true } }),
    },
  });
  if (gate !== undefined) {
    // Outermost step, so a call holds its slot across the SDK's retries and no timer runs while it waits.
    client.middlewareStack.add((next) => (args) => gate.run(() => next(args)), { step: 'initialize', priority: 'high', name: REQUEST_GATE_MIDDLEWARE });
  }
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true },
  });
}
