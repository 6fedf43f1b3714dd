/**
 * Event-loop delay as the simulation reports it: perf_hooks.monitorEventLoopDelay, read as
 * p50, p99 and max in milliseconds. A delayed loop is work waiting for its turn: a timer,
 * a socket's data or a promise's continuation that ran that much later than it could have.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { IntervalHistogram } from 'node:perf_hooks';
import type { LoopDelay } from './protocol';

/** The histogram's resolution (ms): its timer fires this often, so finer costs more. */
export const LOOP_DELAY_RESOLUTION_MS = 10;

/** A running delay histogram of this process's event loop. */
export function startLoopDelay(): IntervalHistogram {
  const histogram = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  histogram.enable();
  return histogram;
}

/**
 * The histogram's p50, p99 and max in milliseconds (it records nanoseconds; an empty one
 * reads 0). Each sample includes the resolution's own timer interval, which is taken off.
 */
export function loopDelayOf(histogram: Pick<IntervalHistogram, 'percentile' | 'max' | 'count'>): LoopDelay {
  const ms = (nanos: number): number => (histogram.count > 0 && Number.isFinite(nanos) ? Math.max(0, nanos / 1e6 - LOOP_DELAY_RESOLUTION_MS) : 0);
  return { p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max) };
}
