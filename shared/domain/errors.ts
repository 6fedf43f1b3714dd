/**
 * One error family for the whole control plane. Adapters turn every failure of the
 * Kubernetes API, DynamoDB or EventBridge into one of these; handlers acknowledge
 * terminal errors and rethrow retryable ones so the platform redelivers the event.
 */
export class ControlPlaneError extends Error {
  /** True when the same call may succeed later (conflicts, throttling, outages). */
  readonly retryable: boolean;

  constructor(message: string, options: { retryable: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ControlPlaneError';
    this.retryable = options.retryable;
  }
}

/** The object does not exist (HTTP 404). */
export class NotFoundError extends ControlPlaneError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { retryable: false, ...options });
    this.name = 'NotFoundError';
  }
}

/** A write lost a race: stale resourceVersion, failed precondition or condition check (HTTP 409). */
export class ConflictError extends ControlPlaneError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { retryable: true, ...options });
    this.name = 'ConflictError';
  }
}

/** A create found the object already there (HTTP 409 AlreadyExists). */
export class AlreadyExistsError extends ControlPlaneError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { retryable: false, ...options });
    this.name = 'AlreadyExistsError';
  }
}

/** The service asked us to slow down (HTTP 429, DynamoDB throughput, EventBridge throttling). */
export class ThrottledError extends ControlPlaneError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { retryable: true, ...options });
    this.name = 'ThrottledError';
  }
}

/** The service failed or could not be reached (HTTP 5xx, timeouts, connection errors). */
export class UnavailableError extends ControlPlaneError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { retryable: true, ...options });
    this.name = 'UnavailableError';
  }
}

/** Input that will never be valid as it is: a malformed annotation, an unknown revision name. */
export class InvalidInputError extends ControlPlaneError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { retryable: false, ...options });
    this.name = 'InvalidInputError';
  }
}

/**
 * An idempotency key whose live record was made for a different payload: the same key
 * standing for two requests. Terminal, and nothing acts on it (Powertools'
 * IdempotencyValidationError).
 */
export class IdempotencyPayloadMismatchError extends InvalidInputError {
  constructor(key: string, options: { cause?: unknown } = {}) {
    super(`idempotency key ${key} is already recorded for a different payload`, options);
    this.name = 'IdempotencyPayloadMismatchError';
  }
}

/** The caller no longer holds the lease it wrote under; another worker took over. */
export class LeaseLostError extends ControlPlaneError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { retryable: true, ...options });
    this.name = 'LeaseLostError';
  }
}

/** True for errors that a redelivery may cure; unknown errors count as retryable. */
export function isRetryable(error: unknown): boolean {
  return error instanceof ControlPlaneError ? error.retryable : true;
}

/** A watch or list asked for a resourceVersion older than the server keeps (HTTP 410 Gone): relist. */
export class ExpiredError extends ControlPlaneError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { retryable: true, ...options });
    this.name = 'ExpiredError';
  }
}

/**
 * The Deployment to be written exists and is not the plane's (see
 * deploymentOwnershipProblem): nothing was written, and nothing ever will be while it
 * stays so. Terminal: the caller reports it once and goes on.
 */
export class UnownedDeploymentError extends ControlPlaneError {
  constructor(
    readonly namespace: string,
    readonly deploymentName: string,
    /** The Deployment's uid: one report per Deployment object. */
    readonly deploymentUid: string,
    readonly problem: string,
  ) {
    super(`Deployment ${namespace}/${deploymentName} is not owned by the InferenceService: ${problem}`, { retryable: false });
    this.name = 'UnownedDeploymentError';
  }
}
