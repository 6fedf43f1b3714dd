/**
 * `-v=6` and above: one line per API request on stderr, as kubectl's round tripper logs
 * them (`GET <url> 403 Forbidden in 3 milliseconds`), so the request that failed and its
 * status are visible. Below 6 nothing is logged.
 */
import { STATUS_CODES } from 'node:http';

import type { TextSink } from './env';

/** kubectl logs each request's method, URL and status from this level on. */
export const REQUEST_LOG_LEVEL = 6;

export interface RequestRecord {
  method: string;
  url: string;
  status?: number;
  error?: string;
  elapsedMs: number;
}

/** klog's header: `I1201 17:40:02.123456`. */
function klogHeader(now: Date): string {
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  return `I${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())} ${pad(now.getUTCHours())}:${pad(now.getUTCMinutes())}:${pad(now.getUTCSeconds())}.${pad(now.getUTCMilliseconds(), 3)}000`;
}

export function formatRequestLog(record: RequestRecord, now: Date): string {
  const outcome = record.status === undefined ? `failed: ${record.error ?? 'no answer'}` : `${record.status} ${STATUS_CODES[record.status] ?? ''}`.trimEnd();
  return `${klogHeader(now)} kubectl-ome] ${record.method} ${record.url} ${outcome} in ${record.elapsedMs} milliseconds\n`;
}

/** The logger `main` hands the client, or none below the level. */
export function requestLogger(verbosity: number, sink: TextSink, now: () => Date): ((record: RequestRecord) => void) | undefined {
  if (verbosity < REQUEST_LOG_LEVEL) return undefined;
  return (record) => sink.write(formatRequestLog(record, now()));
}
