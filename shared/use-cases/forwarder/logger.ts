/** The logging the forwarder needs; the functions' Logger (shared/app/logger.ts) and `console` both fit. */
export interface ForwarderLogger {
  debug?(message: string, ...details: Array<Record<string, unknown>>): void;
  info(message: string, ...details: Array<Record<string, unknown>>): void;
  warn(message: string, ...details: Array<Record<string, unknown>>): void;
  error(message: string, ...details: Array<Record<string, unknown>>): void;
}

/**
 * The forwarder's logger, also keeping its latest warning or error in the store (the
 * message and the `error` detail), so `kubectl ome admin cluster describe` can show it.
 * Recording never blocks or fails the forwarder.
 */
export function recordingLogger(logger: ForwarderLogger, record: (message: string) => Promise<void>): ForwarderLogger {
  const keep = (message: string, details: Array<Record<string, unknown>>): void => {
    const error = details.find((detail) => detail.error !== undefined)?.error;
    let detail = '';
    if (error instanceof Error) detail = error.message;
    else if (error !== undefined) detail = typeof error === 'string' ? error : JSON.stringify(error);
    const text = detail === '' ? message : `${message}: ${detail}`;
    record(text).catch(() => undefined);
  };
  return {
    ...(logger.debug ? { debug: (message: string, ...details: Array<Record<string, unknown>>) => logger.debug?.(message, ...details) } : {}),
    info: (message, ...details) => logger.info(message, ...details),
    warn: (message, ...details) => {
      logger.warn(message, ...details);
      keep(message, details);
    },
    error: (message, ...details) => {
      logger.error(message, ...details);
      keep(message, details);
    },
  };
}
