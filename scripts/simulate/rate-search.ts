/**
 * The search for the highest sustained rate with none late (`simulate --find-rate`): windows
 * at increasing rates on one set-up fleet, doubling from the start rate until a window fails,
 * then bisecting between the highest that passed and the lowest that failed. Pure: the
 * simulation runs the windows and asks here for the next rate.
 */

/** One window of the search. */
export interface RateTrial {
  /** Changes per second offered. */
  rate: number;
  /** No change late, none refused, and (nearly) every tick found a free cluster. */
  passed: boolean;
}

export interface RateSearchLimits {
  /** The first window's rate. */
  start: number;
  /** No window above it; a pass there ends the search. */
  max: number;
  /** No window below it; a failure there ends the search. */
  min: number;
  /** Windows at most. */
  maxTrials: number;
  /** The search ends once the lowest failure is within this fraction above the highest pass. */
  precision: number;
}

export const DEFAULT_RATE_SEARCH: Omit<RateSearchLimits, 'start'> = { max: 400, min: 1, maxTrials: 8, precision: 0.1 };

/** A rate as the search offers it: whole changes per second from 10 up, tenths below. */
function roundRate(rate: number): number {
  return rate >= 10 ? Math.round(rate) : Math.round(rate * 10) / 10;
}

/** The highest passed rate below every failed one, and the lowest failed rate (undefined for none). */
export function bracketOf(trials: readonly RateTrial[]): { passed: number | undefined; failed: number | undefined } {
  const failed = trials.filter((trial) => !trial.passed).reduce<number | undefined>((low, trial) => (low === undefined || trial.rate < low ? trial.rate : low), undefined);
  const passed = trials
    .filter((trial) => trial.passed && (failed === undefined || trial.rate < failed))
    .reduce<number | undefined>((high, trial) => (high === undefined || trial.rate > high ? trial.rate : high), undefined);
  return { passed, failed };
}

/**
 * The next window's rate, or undefined when the search is done: up by doubling while every
 * window passed (to `max`), down by halving while none did (to `min`), then the midpoint of
 * the bracket until it is within `precision` or `maxTrials` windows ran.
 */
export function nextRate(trials: readonly RateTrial[], limits: RateSearchLimits): number | undefined {
  if (trials.length === 0) return roundRate(Math.min(limits.max, Math.max(limits.min, limits.start)));
  if (trials.length >= limits.maxTrials) return undefined;
  const { passed, failed } = bracketOf(trials);
  const tried = new Set(trials.map((trial) => trial.rate));
  let next: number | undefined;
  if (failed === undefined) {
    next = passed !== undefined && passed < limits.max ? Math.min(limits.max, passed * 2) : undefined;
  } else if (passed === undefined) {
    next = failed > limits.min ? Math.max(limits.min, failed / 2) : undefined;
  } else if (failed > passed * (1 + limits.precision)) {
    next = (passed + failed) / 2;
  }
  if (next === undefined) return undefined;
  const rounded = roundRate(next);
  return tried.has(rounded) ? undefined : rounded;
}
