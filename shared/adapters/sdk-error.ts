/**
 * What the AWS SDK's errors carry, read without trusting their type: every adapter that
 * maps SDK failures to the control plane's typed errors reads these same fields.
 */

/** Socket-level failures: the service was not reached, so a retry may succeed. */
export const NETWORK_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** The fields of an SDK (or Node network) error the mappers decide on. */
export interface SdkErrorShape {
  name?: string;
  code?: string;
  message?: string;
  $fault?: 'client' | 'server';
  $metadata?: { httpStatusCode?: number };
}

/** The error's fields, or none when it is not an object. */
export function sdkErrorShape(error: unknown): SdkErrorShape {
  return typeof error === 'object' && error !== null ? (error as SdkErrorShape) : {};
}
