/**
 * Rules both idempotency stores (DynamoDB and memory) apply the same way: how long a claim
 * stays in progress, and the payload hash that tells two requests under one key apart.
 */
import { createHash } from 'node:crypto';

/** A claim is never in progress for less than this: a zero expiry would let a duplicate run beside the first worker. */
export const MIN_IN_PROGRESS_MS = 1_000;
/** Nor longer than Lambda's 15-minute maximum run plus a minute: a dead worker's claim always lapses. */
export const MAX_IN_PROGRESS_MS = 16 * 60_000;

function usable(value: number | undefined): value is number {
  return value !== undefined && Number.isFinite(value) && value > 0;
}

/**
 * How long a new claim stays in progress. The invocation's remaining time says best when
 * its worker is surely gone; when it is 0, negative or missing (Powertools once stored an
 * expiry of "now" for 0, making every claim instantly stale), the configured TTL stands.
 * The result is always within [MIN_IN_PROGRESS_MS, MAX_IN_PROGRESS_MS].
 */
export function boundInProgressTtl(inProgressTtlMs: number, remainingTimeMs?: number): number {
  const chosen = usable(remainingTimeMs) ? remainingTimeMs : usable(inProgressTtlMs) ? inProgressTtlMs : MAX_IN_PROGRESS_MS;
  return Math.min(MAX_IN_PROGRESS_MS, Math.max(MIN_IN_PROGRESS_MS, Math.round(chosen)));
}

/** Canonical JSON: object keys sorted, so equal payloads hash equally whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The payload hash stored with an idempotency record: sha256 (hex) of the payload's canonical JSON. */
export function hashIdempotencyPayload(payload: unknown): string {
  return createHash('sha256').update(canonical(payload), 'utf8').digest('hex');
}
