/**
 * Turns DynamoDB failures into the control plane's typed errors. A failed condition is
 * not mapped here: each store decides what it means (lease taken, duplicate, fenced out).
 */
import { ConflictError, ControlPlaneError, InvalidInputError, ThrottledError, UnavailableError } from '../../domain/errors';
import { NETWORK_CODES, sdkErrorShape } from '../sdk-error';

const THROTTLING = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'Throttling',
  'TooManyRequestsException',
]);

const UNAVAILABLE = new Set([
  'InternalServerError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'ResourceNotFoundException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
]);

/** True when DynamoDB rejected a write because its ConditionExpression did not hold. */
export function isConditionalCheckFailed(error: unknown): boolean {
  return sdkErrorShape(error).name === 'ConditionalCheckFailedException';
}

/**
 * Maps any error from a DynamoDB call to a ControlPlaneError; `action` says what was
 * being done (for example `acquire lease forwarder/local`). The original is kept as `cause`.
 */
export function mapDynamoError(error: unknown, action: string): ControlPlaneError {
  if (error instanceof ControlPlaneError) return error;
  const shape = sdkErrorShape(error);
  const name = shape.name ?? '';
  const status = shape.$metadata?.httpStatusCode;
  const detail = `${action}: ${name || 'error'}${shape.message ? ` (${shape.message})` : ''}`;
  if (THROTTLING.has(name) || status === 429) return new ThrottledError(`DynamoDB throttled ${detail}`, { cause: error });
  if (name === 'ConditionalCheckFailedException' || name === 'TransactionCanceledException' || name === 'TransactionConflictException') {
    return new ConflictError(`DynamoDB condition failed on ${detail}`, { cause: error });
  }
  if (UNAVAILABLE.has(name) || shape.$fault === 'server' || (status !== undefined && status >= 500)) {
    return new UnavailableError(`DynamoDB unavailable on ${detail}`, { cause: error });
  }
  if (NETWORK_CODES.has(shape.code ?? '') || NETWORK_CODES.has(name)) {
    return new UnavailableError(`DynamoDB unreachable on ${detail}`, { cause: error });
  }
  if (name === 'ValidationException' || name === 'ItemCollectionSizeLimitExceededException') {
    return new InvalidInputError(`DynamoDB rejected ${detail}`, { cause: error });
  }
  if (shape.$fault === 'client') {
    // Access denied, bad credentials, unknown operation: a redelivery will not cure it.
    return new ControlPlaneError(`DynamoDB refused ${detail}`, { retryable: false, cause: error });
  }
  // No service response at all (socket closed, aborted): treat as an outage.
  return new UnavailableError(`DynamoDB call failed on ${detail}`, { cause: error });
}
