/** Duration flags (`--timeout`, `--poll-interval`, `--request-timeout`) read Go durations; a bare number counts seconds, as kubectl's. */
import { describe, expect, it } from 'vitest';
import { parseDurationFlag } from '../../cli/args';
import { CliError } from '../../cli/errors';

describe('Function: parseDurationFlag', () => {
  it.each([
    ['45s', 45_000],
    ['1m30s', 90_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['300ms', 300],
    ['.5s', 500],
    ['5', 5_000],
    ['0', 0],
  ])('--timeout %s is %d ms', (text, ms) => {
    expect(parseDurationFlag('timeout', text)).toBe(ms);
  });

  it.each(['', '1d', '-5s', '5 s', 'soon'])('refuses --timeout %j, naming the flag', (text) => {
    expect(() => parseDurationFlag('timeout', text)).toThrow(
      new CliError(`invalid argument "${text}" for "--timeout" flag: use a duration such as 30s, 1m or 1h30m`),
    );
  });
});
