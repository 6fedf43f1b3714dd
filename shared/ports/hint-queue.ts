/**
 * Putting a hint back on the queue it came from, to be received again after a delay: the
 * hint handler does it for a hint that met its object's lease held (docs/decisions.md,
 * decision 20). The SQS adapter implements it; tests pass a recording fake or mock the
 * SQS client.
 */

export interface RequeuedHint {
  /** The queue the hint was received from (the record's `eventSourceARN`); the copy goes to it and nowhere else. */
  queueArn: string;
  /** The record's body, unchanged: the EventBridge event the rule put on the queue. */
  body: string;
  /** Whole seconds before the copy can be received, 0 to 900 (SQS's per-message delay). */
  delaySeconds: number;
  /** Numeric message attributes the copy carries (the handler's lease-busy bookkeeping). */
  attributes: Record<string, number>;
}

/** Sends the copy; resolves once the queue has accepted it, rejects when it may not have. */
export type RequeueHint = (hint: RequeuedHint) => Promise<void>;
