/** The logging the forwarder needs; Powertools' Logger and `console` both fit. */
export interface ForwarderLogger {
  debug?(message: string, ...details: Array<Record<string, unknown>>): void;
  info(message: string, ...details: Array<Record<string, unknown>>): void;
  warn(message: string, ...details: Array<Record<string, unknown>>): void;
  error(message: string, ...details: Array<Record<string, unknown>>): void;
}
