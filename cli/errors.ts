/**
 * Exit codes and the one error type the plugin's commands throw. A command never exits the
 * process itself: it throws a CliError (or returns a code) and `main` prints `error: <message>`.
 */
export const ExitCode = {
  ok: 0,
  /** Invalid flag, failed read, refusal, declined prompt, timeout, unknown outcome. */
  error: 1,
  /** `wait` ended without seeing the state it waited for. */
  unmet: 2,
  /** The target changed after the CLI read it; nothing was applied. */
  conflict: 3,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export class CliError extends Error {
  readonly exitCode: ExitCodeValue;
  /** A second line under `error: <message>`: what the API server said, as kubectl prints it. */
  readonly detail: string | undefined;

  constructor(message: string, exitCode: ExitCodeValue = ExitCode.error, options: { cause?: unknown; detail?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CliError';
    this.exitCode = exitCode;
    this.detail = options.detail;
  }
}

/** Messages users see, spelled as OME's documentation spells them. */
export const CliMessage = {
  notConfirmed: 'action not confirmed; noninteractive input requires --yes',
  requestFailed: 'required Kubernetes API request failed; check access and connectivity',
  deadlineExceeded: 'context deadline exceeded',
  guardedRejected: (refresh: string) => `guarded annotation patch rejected; refresh ${refresh} and retry explicitly`,
  repinRefused: (reason: string) => `rollout repin refused: ${reason}`,
  actionRefused: (reason: string) => `action refused: ${reason}`,
  repinOutcomeUnknown: 'rollout repin request outcome unknown; do not replay, check rollout explain',
  syncOutcomeUnknown: 'runtime sync request outcome unknown; check runtime effective; do not replay',
  promoteOutcomeUnknown: 'rollout promote request outcome unknown; do not replay, check rollout explain',
  /** `rollout promote --override-analysis` without `--yes`: upstream's ErrAnalysisOverrideConfirmation. */
  analysisOverrideConfirmation: 'analysis override requires --override-analysis --yes',
} as const;
