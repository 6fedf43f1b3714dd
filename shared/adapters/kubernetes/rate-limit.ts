/**
 * The client-side rate limit of one cluster, as client-go's token bucket: `qps` requests
 * per second on average, up to `burst` at once after a quiet spell. One bucket serves every
 * request to the cluster from the process (see createAppContext), so a fan-out and the
 * forwarder share the budget instead of each pressing the API server at full speed. A 429
 * from the server pauses the whole bucket for its Retry-After: the server spoke for the
 * cluster, not for one request.
 *
 * Two priorities share the bucket (docs/decisions.md): user work (sync tokens, repins,
 * promotes, everything by default) reserves tokens as client-go does, queueing behind one
 * another; sweep work (a drift fan-out, a GC sweep) never queues: it takes a token only
 * while more than a reserve of the burst is left and otherwise waits for the bucket to
 * refill past it, so a waiting user request always goes first.
 */
import type { ApiStatus } from './errors';

export interface RateLimitSettings {
  /** Average requests per second. */
  qps: number;
  /** Requests allowed at once after a quiet spell; also the bucket's size. */
  burst: number;
}

/** How long to wait when a 429 names no Retry-After (client-go waits 1 s too). */
export const DEFAULT_RETRY_AFTER_MS = 1_000;

/** Whose request: user work goes ahead of sweeps. */
export type RequestPriority = 'user' | 'sweep';

/** The share of the burst sweeps leave for user work (at least one token when the burst allows). */
export function userReserveOf(burst: number): number {
  return Math.floor(burst / 3);
}

export class TokenBucket {
  private tokens: number;
  private refilledAt: number;
  private pausedUntil = 0;

  constructor(
    readonly settings: RateLimitSettings,
    private readonly now: () => number,
  ) {
    if (!(settings.qps > 0) || !Number.isFinite(settings.qps)) throw new RangeError(`qps must be a number > 0 (got ${settings.qps})`);
    if (!Number.isInteger(settings.burst) || settings.burst < 1) throw new RangeError(`burst must be a whole number >= 1 (got ${settings.burst})`);
    this.tokens = settings.burst;
    this.refilledAt = now();
  }

  /**
   * Takes the next token and says how long (ms) the caller must wait before sending. The
   * token is the caller's from now on (the bucket may go below zero, so later callers
   * queue behind it); `cancel` gives it back when the caller decides not to wait.
   */
  reserve(): number {
    const now = this.now();
    this.refill(now);
    this.tokens -= 1;
    const tokenWait = this.tokens >= 0 ? 0 : Math.ceil((-this.tokens * 1000) / this.settings.qps);
    return Math.max(tokenWait, this.pausedUntil - now, 0);
  }

  /**
   * A sweep's token: 0 when taken; else how long (ms) to wait before asking again, with
   * nothing taken, so user requests arriving meanwhile are served first.
   */
  tryTakeForSweep(): number {
    const now = this.now();
    this.refill(now);
    const floor = userReserveOf(this.settings.burst);
    if (this.tokens - 1 >= floor && this.pausedUntil <= now) {
      this.tokens -= 1;
      return 0;
    }
    const refillWait = Math.ceil(((floor + 1 - this.tokens) * 1000) / this.settings.qps);
    return Math.max(1, refillWait, this.pausedUntil - now);
  }

  /** Gives back a token taken by `reserve` and not used. */
  cancel(): void {
    this.refill(this.now());
    this.tokens = Math.min(this.settings.burst, this.tokens + 1);
  }

  /** Holds every request back until `until` (epoch ms): the server answered 429. */
  pauseUntil(until: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, until);
  }

  private refill(now: number): void {
    const elapsed = Math.max(0, now - this.refilledAt);
    this.tokens = Math.min(this.settings.burst, this.tokens + (elapsed * this.settings.qps) / 1000);
    this.refilledAt = now;
  }
}

/**
 * How long a 429 asks us to wait, in ms: the Retry-After header (seconds, or an HTTP date),
 * else the Status's `details.retryAfterSeconds`, else DEFAULT_RETRY_AFTER_MS. Never negative.
 */
export function parseRetryAfter(header: string | string[] | undefined, status: ApiStatus | undefined, now: number): number {
  const value = Array.isArray(header) ? header[0] : header;
  if (value !== undefined && value.trim() !== '') {
    const trimmed = value.trim();
    if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
    const date = Date.parse(trimmed);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const details = status?.details as { retryAfterSeconds?: unknown } | undefined;
  const seconds = details?.retryAfterSeconds;
  if (typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  return DEFAULT_RETRY_AFTER_MS;
}
