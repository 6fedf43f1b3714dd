/**
 * At-most-once records in memory, with the DynamoDB store's semantics: the check and the
 * claim happen in one synchronous step, as one conditional put does in DynamoDB. Values are
 * copied in and out (the result as JSON), as a network would.
 */
import { ConflictError, IdempotencyPayloadMismatchError } from '../../domain/errors';
import type { Clock } from '../../ports/clock';
import { systemClock } from '../../ports/clock';
import { boundInProgressTtl } from '../../domain/idempotency-rules';
import type { ClaimOptions, IdempotencyClaim, IdempotencyStore } from '../../ports/store';

interface IdempotencyState {
  status: 'INPROGRESS' | 'COMPLETED';
  inProgressExpiry?: number;
  /** Epoch seconds, as the table's TTL attribute. */
  expiresAt: number;
  recordTtlSeconds: number;
  result?: string;
  payloadHash?: string;
  owner?: string;
}

export class MemoryIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly clock: Clock = systemClock,
    private readonly records = new Map<string, IdempotencyState>(),
  ) {}

  /** The same records seen through another clock: a second process whose wall clock differs. */
  withClock(clock: Clock): MemoryIdempotencyStore {
    return new MemoryIdempotencyStore(clock, this.records);
  }

  async claim(key: string, options: ClaimOptions): Promise<IdempotencyClaim> {
    const nowMs = this.clock.now();
    const nowSeconds = Math.floor(nowMs / 1000);
    const existing = this.records.get(key);
    const claimable =
      existing === undefined ||
      existing.expiresAt < nowSeconds ||
      (existing.status === 'INPROGRESS' && ((existing.inProgressExpiry ?? 0) < nowMs || (options.owner !== undefined && existing.owner === options.owner)));
    if (!claimable) {
      if (options.payloadHash !== undefined && existing.payloadHash !== undefined && existing.payloadHash !== options.payloadHash) {
        throw new IdempotencyPayloadMismatchError(key);
      }
      if (existing.status === 'COMPLETED') {
        return { state: 'completed', result: existing.result === undefined ? undefined : (JSON.parse(existing.result) as unknown) };
      }
      return { state: 'in-progress' };
    }
    this.records.set(key, {
      status: 'INPROGRESS',
      inProgressExpiry: nowMs + boundInProgressTtl(options.inProgressTtlMs, options.remainingTimeMs),
      expiresAt: nowSeconds + options.recordTtlSeconds,
      recordTtlSeconds: options.recordTtlSeconds,
      ...(options.payloadHash === undefined ? {} : { payloadHash: options.payloadHash }),
      ...(options.owner === undefined ? {} : { owner: options.owner }),
    });
    return { state: 'claimed' };
  }

  async complete(key: string, result: unknown): Promise<void> {
    const existing = this.records.get(key);
    if (existing?.status === 'COMPLETED') return;
    if (existing === undefined) throw new ConflictError(`idempotency key ${key} has no claim to complete`);
    const serialised = JSON.stringify(result);
    this.records.set(key, {
      status: 'COMPLETED',
      expiresAt: Math.floor(this.clock.now() / 1000) + existing.recordTtlSeconds,
      recordTtlSeconds: existing.recordTtlSeconds,
      ...(serialised === undefined ? {} : { result: serialised }),
      ...(existing.payloadHash === undefined ? {} : { payloadHash: existing.payloadHash }),
    });
  }

  async abandon(key: string, owner?: string): Promise<void> {
    const existing = this.records.get(key);
    if (existing?.status !== 'INPROGRESS') return;
    if (owner !== undefined && existing.owner !== owner) return;
    this.records.delete(key);
  }
}
