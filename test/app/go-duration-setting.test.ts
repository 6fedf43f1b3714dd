/**
 * The one duration syntax of every configured duration: Go's `time.ParseDuration`
 * (accepted forms and rejections as in Go's own table, src/time/time_test.go), as
 * milliseconds, with the setting named in every refusal.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../shared/domain/errors';
import { parseDurationSetting } from '../../shared/domain/go-duration';

describe('Function: parseDurationSetting', () => {
  it.each([
    ['0', 0],
    ['5s', 5_000],
    ['30s', 30_000],
    ['1478s', 1_478_000],
    ['+5s', 5_000],
    ['5.0s', 5_000],
    ['5.6s', 5_600],
    ['5.s', 5_000],
    ['.5s', 500],
    ['1.004s', 1_004],
    ['300ms', 300],
    ['1500us', 1],
    ['1500µs', 1],
    ['10ns', 0],
    ['90s', 90_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['3h30m10.5s', 12_610_500],
    ['24h', 86_400_000],
    ['10m0s', 600_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDurationSetting('SETTING', text)).toBe(ms);
  });

  it.each([
    ['', 'time: invalid duration ""'],
    ['3', 'time: missing unit in duration "3"'],
    ['-', 'time: invalid duration "-"'],
    ['s', 'time: invalid duration "s"'],
    ['.', 'time: invalid duration "."'],
    ['-.', 'time: invalid duration "-."'],
    ['.s', 'time: invalid duration ".s"'],
    ['+.s', 'time: invalid duration "+.s"'],
    ['1d', 'time: unknown unit "d" in duration "1d"'],
    ['1h 30m', 'time: unknown unit "h " in duration "1h 30m"'],
    ['9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'],
  ])('refuses %j naming the setting and Go\'s reason', (text, reason) => {
    expect(() => parseDurationSetting('LEASE_TTL', text)).toThrow(
      new InvalidInputError(`LEASE_TTL=${JSON.stringify(text)} is not a duration (${reason}); use Go duration syntax such as 30s, 5m, 1h30m, 1.5h or 300ms`),
    );
  });

  it('refuses a negative duration, which Go accepts but no setting can use', () => {
    expect(() => parseDurationSetting('ADMISSION_TIME_BUDGET', '-1.5s')).toThrow(
      new InvalidInputError('ADMISSION_TIME_BUDGET="-1.5s" is negative; use a duration such as 30s, 5m, 1h30m, 1.5h or 300ms'),
    );
  });
});
