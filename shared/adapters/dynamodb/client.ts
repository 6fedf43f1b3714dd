import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { boundedRequestHandler } from '../aws-request-handler';

export interface DynamoClientOptions {
  region: string;
  /** DynamoDB Local or another endpoint override; credentials default to static local ones. */
  endpoint?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Attempts per call including the first (SDK standard retry with backoff). Default 3. */
  maxAttempts?: number;
  /** How long one request may wait for its answer, in ms; then it fails (and is retried). Default 3000: store calls are single small items. */
  requestTimeoutMs?: number;
  /**
   * How long opening a connection may take, in ms. Default 1000, ample for DynamoDB; DynamoDB
   * Local (one JVM on the developer's machine) can take longer under a burst of new connections.
   */
  connectionTimeoutMs?: number;
  /**
   * Calls in flight at once; the rest wait their turn in this process, in order (lease calls
   * first: `PriorityRequestGate`), before the SDK starts any timer. Unset (the default, and what Lambda uses: one invocation's few
   * concurrent calls never queue) leaves calls to the SDK's socket pool of 50, where a call
   * waiting for a socket counts against `connectionTimeoutMs` and is retried at the back of
   * the queue. Set it for a process that makes hundreds of calls at once against one slow
   * endpoint (the local plane against DynamoDB Local); the socket pool is sized to match.
   */
  maxConcurrentRequests?: number;
}

/** The middleware that holds a call until a slot of `maxConcurrentRequests` is free. */
const REQUEST_GATE_MIDDLEWARE = 'requestConcurrencyGate';

/** A key attribute's text, as the document client passes it (plain) or marshalled (`{ S: '…' }`). */
function keyText(value: unknown): string {
  if (typeof value === 'string') return value;
  return value !== null && typeof value === 'object' && typeof (value as { S?: unknown }).S === 'string' ? (value as { S: string }).S : '';
}

/** True for a call on a lease item (acquire, renew, release): it goes ahead of the queue. */
export function isLeaseCall(input: unknown): boolean {
  const key = (input as { Key?: Record<string, unknown> } | undefined)?.Key;
  return keyText(key?.pk).startsWith('LEASE#');
}

/**
 * At most `max` calls at once; the rest wait in order, lease calls ahead of every other.
 * A lease renewal that queued behind a burst of checkpoint saves or function calls could
 * wait past the lease's expiry: the holder would lose its lease for no fault of its own,
 * and a forwarder that loses its lease stops, waits a TTL and reloads its checkpoints.
 */
export class PriorityRequestGate {
  private running = 0;
  private readonly urgent: Array<() => void> = [];
  private readonly waiting: Array<() => void> = [];

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`a concurrency limit must be a whole number of at least 1 (got ${max})`);
  }

  /** Runs `task` once a slot is free (before every ordinary waiter when `ahead`); the slot is given back however it ends. */
  async run<T>(task: () => Promise<T>, ahead = false): Promise<T> {
    if (this.running >= this.max) await new Promise<void>((resolve) => (ahead ? this.urgent : this.waiting).push(resolve));
    else this.running += 1;
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, so `running` counts it all along.
      const next = this.urgent.shift() ?? this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}

/**
 * Creates the document client the stores take. Create it once per process (outside the
 * Lambda handler) so connections are reused across invocations.
 */
export function createDynamoClient(options: DynamoClientOptions): DynamoDBDocumentClient {
  const credentials =
    options.credentials ?? (options.endpoint === undefined ? undefined : { accessKeyId: 'local', secretAccessKey: 'local' });
  const gate = options.maxConcurrentRequests === undefined ? undefined : new PriorityRequestGate(options.maxConcurrentRequests);
  const client = new DynamoDBClient({
    region: options.region,
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    ...(credentials === undefined ? {} : { credentials }),
    maxAttempts: options.maxAttempts ?? 3,
    retryMode: 'standard',
    requestHandler: {
      ...boundedRequestHandler({ connectionTimeoutMs: options.connectionTimeoutMs ?? 1_000, requestTimeoutMs: options.requestTimeoutMs ?? 3_000 }),
      // One socket per slot: a call let through the gate never waits for a socket.
      ...(gate === undefined ? {} : { httpAgent: { maxSockets: gate.max, keepAlive: true }, httpsAgent: { maxSockets: gate.max, keepAlive: true } }),
    },
  });
  if (gate !== undefined) {
    // Outermost step, so a call holds its slot across the SDK's retries and no timer runs while it waits.
    client.middlewareStack.add((next) => (args) => gate.run(() => next(args), isLeaseCall(args.input)), { step: 'initialize', priority: 'high', name: REQUEST_GATE_MIDDLEWARE });
  }
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true },
  });
}
