/**
 * Turns Secrets Manager, EKS and credential-chain failures into the control plane's typed
 * errors. A missing permission is a deployment mistake a redelivery cannot cure, so it is
 * terminal and names the IAM action to grant.
 */
import { ControlPlaneError, InvalidInputError, NotFoundError, ThrottledError, UnavailableError } from '../../domain/errors';
import { NETWORK_CODES, sdkErrorShape } from '../sdk-error';

const THROTTLING = new Set(['ThrottlingException', 'Throttling', 'TooManyRequestsException', 'RequestLimitExceeded']);
const ACCESS_DENIED = new Set(['AccessDeniedException', 'AccessDenied', 'UnauthorizedOperation', 'UnrecognizedClientException', 'InvalidSignatureException', 'ExpiredTokenException']);
const UNAVAILABLE = new Set(['InternalServiceError', 'ServerException', 'ServiceUnavailableException', 'ServiceUnavailable', 'TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);
const INVALID = new Set(['InvalidParameterException', 'InvalidRequestException', 'ValidationException', 'ClientException', 'BadRequestException']);

export interface AwsCall {
  /** What was being done, for the message: `read secret ome/dev/clusters/prod`. */
  action: string;
  /** The IAM action the function's role needs for it: `secretsmanager:GetSecretValue`. */
  permission: string;
  /** The resource the permission must cover. */
  resource: string;
}

/** Maps any error from a Secrets Manager or EKS call (or the credential chain) to a ControlPlaneError; the original is the cause. */
export function mapAwsError(error: unknown, call: AwsCall): ControlPlaneError {
  if (error instanceof ControlPlaneError) return error;
  const shape = sdkErrorShape(error);
  const name = shape.name ?? '';
  const status = shape.$metadata?.httpStatusCode;
  const detail = `${call.action}: ${name || 'error'}${shape.message ? ` (${shape.message})` : ''}`;
  if (name === 'ResourceNotFoundException' || name === 'NotFoundException') return new NotFoundError(`${detail}: it does not exist`, { cause: error });
  if (THROTTLING.has(name) || status === 429) return new ThrottledError(`throttled on ${detail}`, { cause: error });
  if (ACCESS_DENIED.has(name) || status === 403) {
    return new ControlPlaneError(`${detail}: the function's role needs ${call.permission} on ${call.resource}`, { retryable: false, cause: error });
  }
  if (name === 'DecryptionFailure') {
    return new ControlPlaneError(`${detail}: the function's role needs kms:Decrypt on the secret's KMS key`, { retryable: false, cause: error });
  }
  if (name === 'CredentialsProviderError') return new UnavailableError(`no AWS credentials to ${detail}`, { cause: error });
  if (UNAVAILABLE.has(name) || shape.$fault === 'server' || (status !== undefined && status >= 500)) {
    return new UnavailableError(`AWS unavailable on ${detail}`, { cause: error });
  }
  if (NETWORK_CODES.has(shape.code ?? '') || NETWORK_CODES.has(name)) return new UnavailableError(`AWS unreachable on ${detail}`, { cause: error });
  if (INVALID.has(name)) return new InvalidInputError(`AWS rejected ${detail}`, { cause: error });
  if (shape.$fault === 'client') return new ControlPlaneError(`AWS refused ${detail}`, { retryable: false, cause: error });
  // No service response at all (socket closed, aborted): treat as an outage.
  return new UnavailableError(`AWS call failed on ${detail}`, { cause: error });
}
