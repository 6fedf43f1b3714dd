/**
 * The functions' loggers: one JSON line per entry, as Powertools' Logger wrote them with this
 * plane's compact format (docs/decisions.md, decision 24), without the fields every line of a
 * function's log group would repeat. CloudWatch Logs already names the function (the log
 * group) and its version (the log stream), and Lambda's own REPORT line gives its memory, so
 * a line keeps the level, message, time, service, the request id (to find the invocation),
 * the cold start when it is one, the X-Ray trace when there is one, and what the line itself
 * says:
 *
 *   {"level":"INFO","message":"drift checked","timestamp":"2026-12-05T06:00:00.000Z","service":"drift-check","function_request_id":"…","cluster":"prod-eu-1","report":{…}}
 *
 * As with Powertools: the level comes from AWS_LAMBDA_LOG_LEVEL (Lambda's advanced logging
 * controls), else POWERTOOLS_LOG_LEVEL or LOG_LEVEL, else INFO; POWERTOOLS_LOGGER_SAMPLE_RATE
 * logs that share of invocations at DEBUG; POWERTOOLS_LOGGER_LOG_EVENT=true logs each event;
 * POWERTOOLS_DEV=true indents the JSON. WARN and above go to stderr, the rest to stdout.
 * Attributes that are empty (undefined, null, '') are left out; errors anywhere in a line are
 * written as `{name, location, message, stack, cause, …}`; `level`, `message`, `service`,
 * `timestamp` and `sampling_rate` cannot be overwritten.
 */
import type { MiddlewareObj } from '@middy/core';

export const LOG_LEVELS = { TRACE: 6, DEBUG: 8, INFO: 12, WARN: 16, ERROR: 20, CRITICAL: 24, SILENT: 28 } as const;
export type LogLevel = keyof typeof LOG_LEVELS;

export type LogAttributes = Record<string, unknown>;
/** What a line takes after its message: attributes; an Error, written as `error`; a string, written as `extra`. */
export type LogExtra = LogAttributes | Error | string | null | undefined;

const RESERVED_KEYS = new Set(['level', 'message', 'sampling_rate', 'service', 'timestamp']);

type Env = Record<string, string | undefined>;

/** What a logger and its children share: the level, and what the invocation middleware learned. */
interface LoggerState {
  readonly service: string;
  /** The level read at start, and the one in force (DEBUG in a sampled invocation). */
  readonly initialLevel: number;
  level: number;
  /** The level AWS_LAMBDA_LOG_LEVEL imposes: neither sampling nor anything else changes it. */
  readonly imposed: boolean;
  readonly sampleRate: number;
  readonly logEvent: boolean;
  readonly indent: number;
  invocations: number;
  requestId?: string;
  coldStart?: boolean;
}

const envFlag = (env: Env, name: string, values: readonly string[] = ['true']): boolean => values.includes(env[name]?.trim().toLowerCase() ?? '');
const isDevMode = (env: Env): boolean => envFlag(env, 'POWERTOOLS_DEV', ['1', 'y', 'yes', 't', 'true', 'on']);

function levelOf(name: string | undefined): number | undefined {
  return name !== undefined && Object.hasOwn(LOG_LEVELS, name) ? LOG_LEVELS[name as LogLevel] : undefined;
}

function initialState(service: string, options: { logLevel?: LogLevel }, env: Env): LoggerState {
  const lambdaLevel = env.AWS_LAMBDA_LOG_LEVEL?.trim();
  const imposed = levelOf(lambdaLevel === 'FATAL' ? 'CRITICAL' : lambdaLevel);
  const level = imposed ?? levelOf(options.logLevel) ?? levelOf((env.POWERTOOLS_LOG_LEVEL?.trim() || env.LOG_LEVEL?.trim()) ?? undefined) ?? LOG_LEVELS.INFO;
  const sampleRate = Number(env.POWERTOOLS_LOGGER_SAMPLE_RATE ?? 0);
  return {
    service,
    initialLevel: level,
    level,
    imposed: imposed !== undefined,
    sampleRate: sampleRate >= 0 && sampleRate <= 1 ? sampleRate : 0,
    logEvent: envFlag(env, 'POWERTOOLS_LOGGER_LOG_EVENT'),
    indent: isDevMode(env) ? 4 : 0,
    invocations: 0,
  };
}

/** `file:line` of the first stack frame that names one, as Powertools' `location`. */
function codeLocation(stack: string | undefined): string {
  for (const frame of stack?.split('\n') ?? []) {
    const match = /\(([^()]*?):(\d+?):(\d+?)\)\\?$/.exec(frame);
    if (match) return `${match[1]}:${Number(match[2])}`;
  }
  return '';
}

function formatError(error: Error, devMode: boolean): LogAttributes {
  const { name, message, stack, cause } = error;
  const formatted: LogAttributes = {
    name,
    location: codeLocation(stack),
    message,
    stack: devMode && typeof stack === 'string' ? stack.split('\n') : stack,
    cause: cause instanceof Error ? formatError(cause, devMode) : cause,
  };
  for (const key in error) if (!['name', 'message', 'stack', 'cause'].includes(key)) formatted[key] = (error as unknown as LogAttributes)[key];
  return formatted;
}

/** JSON.stringify's replacer for a line: errors formatted, bigints as strings, a value inside itself left out. */
function lineReplacer(devMode: boolean): (this: unknown, key: string, value: unknown) => unknown {
  const ancestors: unknown[] = [];
  return function replace(this: unknown, _key: string, value: unknown): unknown {
    const replaced = value instanceof Error ? formatError(value, devMode) : value;
    if (typeof replaced === 'bigint') return replaced.toString();
    if (typeof replaced === 'object' && replaced !== null) {
      while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
      if (ancestors.includes(replaced)) return undefined;
      ancestors.push(replaced);
    }
    return replaced;
  };
}

const pad = (value: number): string => String(value).padStart(2, '0');

/** ISO 8601 in UTC, or in TZ's local time with its offset when TZ names another zone (as Powertools). */
function formatTimestamp(date: Date, env: Env): string {
  const zone = env.TZ?.trim();
  if (!zone || zone.includes('UTC')) return date.toISOString();
  const offset = -date.getTimezoneOffset();
  const local = new Date(date.getTime() + offset * 60_000).toISOString().slice(0, -1);
  return `${local}${offset >= 0 ? '+' : '-'}${pad(Math.abs(Math.floor(offset / 60)))}:${pad(Math.abs(offset % 60))}`;
}

/** The X-Ray trace of the invocation, from what Lambda puts in `_X_AMZN_TRACE_ID`. */
function traceIdOf(env: Env): string | undefined {
  const header = env._X_AMZN_TRACE_ID?.trim();
  if (!header) return undefined;
  if (!header.includes('=')) return header;
  return header
    .split(';')
    .map((field) => field.split('='))
    .find(([key]) => key === 'Root')?.[1];
}

export class Logger {
  constructor(
    private readonly state: LoggerState,
    private readonly persistentKeys: LogAttributes = {},
  ) {}

  trace(message: string, ...extra: LogExtra[]): void {
    this.log('TRACE', message, extra);
  }

  debug(message: string, ...extra: LogExtra[]): void {
    this.log('DEBUG', message, extra);
  }

  info(message: string, ...extra: LogExtra[]): void {
    this.log('INFO', message, extra);
  }

  warn(message: string, ...extra: LogExtra[]): void {
    this.log('WARN', message, extra);
  }

  error(message: string, ...extra: LogExtra[]): void {
    this.log('ERROR', message, extra);
  }

  critical(message: string, ...extra: LogExtra[]): void {
    this.log('CRITICAL', message, extra);
  }

  /** A logger whose every line also carries `persistentKeys`; it shares this one's level and invocation. */
  createChild(options: { persistentKeys?: LogAttributes } = {}): Logger {
    const keys = { ...this.persistentKeys };
    this.collect(keys, options.persistentKeys ?? {});
    return new Logger(this.state, keys);
  }

  /** The invocation middleware's hook: the request id, the cold start, the level of a sampled invocation; the event when asked. */
  startInvocation(context: { awsRequestId?: string } | undefined, event: unknown, env: Env = process.env): void {
    const { state } = this;
    state.requestId = context?.awsRequestId;
    state.coldStart = state.invocations === 0 && env.AWS_LAMBDA_INITIALIZATION_TYPE?.trim() === 'on-demand';
    state.invocations += 1;
    if (!state.imposed) {
      const sampled = state.sampleRate > 0 && Math.floor(Math.random() * 100) / 100 <= state.sampleRate && state.initialLevel > LOG_LEVELS.TRACE;
      state.level = sampled ? LOG_LEVELS.DEBUG : state.initialLevel;
      if (sampled) this.debug('Setting log level to DEBUG due to sampling rate');
    }
    if (state.logEvent) this.info('Lambda invocation event', { event });
  }

  /** Copies attributes into `target`, dropping (with a warning) the names a line's own fields use; undefined never overwrites. */
  private collect(target: LogAttributes, attributes: LogAttributes): void {
    for (const [key, value] of Object.entries(attributes)) {
      if (RESERVED_KEYS.has(key)) this.warn(`The key "${key}" is a reserved key and will be dropped.`);
      else if (value !== undefined || !(key in target)) target[key] = value;
    }
  }

  private log(level: LogLevel, message: string, extra: readonly LogExtra[], env: Env = process.env): void {
    const { state } = this;
    if (LOG_LEVELS[level] < state.level) return;
    const attributes: LogAttributes = {};
    this.collect(attributes, this.persistentKeys);
    for (const item of extra) {
      if (item === null || item === undefined) continue;
      if (item instanceof Error) attributes.error = item;
      else if (typeof item === 'string') attributes.extra = item;
      else this.collect(attributes, item);
    }
    const traceId = traceIdOf(env);
    const line: LogAttributes = {
      level,
      message,
      timestamp: formatTimestamp(new Date(), env),
      service: state.service,
      ...(state.coldStart ? { cold_start: true } : {}),
      ...(state.requestId ? { function_request_id: state.requestId } : {}),
      ...(traceId ? { xray_trace_id: traceId } : {}),
    };
    for (const [key, value] of Object.entries(attributes)) if (value !== undefined || line[key] === undefined) line[key] = value;
    for (const [key, value] of Object.entries(line)) if (value === undefined || value === null || value === '') delete line[key];
    const text = JSON.stringify(line, lineReplacer(state.indent > 0), state.indent);
    (LOG_LEVELS[level] >= LOG_LEVELS.WARN ? process.stderr : process.stdout).write(`${text}\n`);
  }
}

/** A function's logger. `logLevel` overrides the environment's (tests), though not Lambda's advanced logging controls. */
export function createLogger(serviceName: string, options: { logLevel?: LogLevel } = {}): Logger {
  return new Logger(initialState(serviceName, options, process.env));
}

/** Middy middleware: the logger's lines carry the invocation's request id (and cold start) from here on. */
export function injectLambdaContext(logger: Logger): MiddlewareObj {
  return {
    before(request) {
      logger.startInvocation(request.context as { awsRequestId?: string } | undefined, request.event);
    },
  };
}
