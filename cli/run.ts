/** Runs one command and turns a failure into `error: <message>` on stderr and its exit code. */
import type { CliIO } from './env';
import { CliError, ExitCode } from './errors';

export async function runReportingErrors(io: CliIO, command: () => Promise<number>): Promise<number> {
  try {
    return await command();
  } catch (error) {
    if (error instanceof CliError) {
      io.stderr.write(`error: ${error.message}\n${error.detail === undefined ? '' : `${error.detail}\n`}`);
      return error.exitCode;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(`error: ${message}\n`);
    return ExitCode.error;
  }
}
