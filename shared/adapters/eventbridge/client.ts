import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { boundedRequestHandler } from '../aws-request-handler';

export interface EventBridgeClientOptions {
  region: string;
  /** The local bus or another endpoint override; credentials default to static local ones. */
  endpoint?: string;
  /** How long one PutEvents may wait for its answer, in ms; then it fails and is retried. Default 5000. */
  requestTimeoutMs?: number;
  /** Attempts per call including the first. Default 3. */
  maxAttempts?: number;
}

/**
 * Creates the EventBridge client the publisher takes. Create it once per process so
 * connections are reused across invocations. The publisher does its own per-entry
 * resends, so the SDK retries only whole-call failures.
 */
export function createEventBridgeClient(options: EventBridgeClientOptions): EventBridgeClient {
  return new EventBridgeClient({
    region: options.region,
    ...(options.endpoint === undefined
      ? {}
      : { endpoint: options.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
    maxAttempts: options.maxAttempts ?? 3,
    retryMode: 'standard',
    requestHandler: boundedRequestHandler({ connectionTimeoutMs: 1_000, requestTimeoutMs: options.requestTimeoutMs ?? 5_000 }),
  });
}
