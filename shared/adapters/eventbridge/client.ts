import { EventBridgeClient } from '@aws-sdk/client-eventbridge';

export interface EventBridgeClientOptions {
  region: string;
  /** The local bus or another endpoint override; credentials default to static local ones. */
  endpoint?: string;
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
    maxAttempts: 3,
    retryMode: 'standard',
  });
}
