/**
 * Go's `time.Duration` text forms, the one duration syntax of the plane. Kubernetes
 * stores `metav1.Duration` fields as the string a user wrote ("10m"), but the OME
 * controller decodes them into nanoseconds and re-encodes them with `Duration.String()`
 * ("10m0s") before hashing, so digests only agree with upstream if we round-trip the
 * same way. Every configured duration (environment, flags, webhook settings) is read
 * with the same parser, so `1h30m`, `1.5h` and `300ms` mean what they mean to OME.
 */
import { InvalidInputError } from './errors';

const NS_PER_UNIT: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n, // U+00B5 micro sign
  'μs': 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const MAX_INT64 = (1n << 63n) - 1n;

/**
 * Parses a duration as Go's `time.ParseDuration` does, into nanoseconds.
 * Throws InvalidInputError for text Go would reject (empty, missing unit, unknown unit).
 */
export function parseGoDuration(text: string): bigint {
  const original = text;
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') throw new InvalidInputError(`time: invalid duration "${original}"`);
  let total = 0n;
  while (rest !== '') {
    const match = /^(\d*)(?:\.(\d*))?/.exec(rest);
    const whole = match?.[1] ?? '';
    const fraction = match?.[2] ?? '';
    if (whole === '' && fraction === '') throw new InvalidInputError(`time: invalid duration "${original}"`);
    rest = rest.slice(match?.[0].length ?? 0);
    const unitMatch = /^[^\d.]+/.exec(rest);
    if (!unitMatch) throw new InvalidInputError(`time: missing unit in duration "${original}"`);
    const unitName = unitMatch[0];
    const unit = NS_PER_UNIT[unitName];
    if (unit === undefined) throw new InvalidInputError(`time: unknown unit "${unitName}" in duration "${original}"`);
    rest = rest.slice(unitName.length);
    let value = BigInt(whole === '' ? '0' : whole) * unit;
    if (fraction !== '') {
      // Go multiplies the fraction in float64 and truncates; do the same so sub-ns
      // rounding of odd inputs ("1.0000000001h") matches byte for byte.
      const digits = fraction.slice(0, 18);
      const scaled = Number(BigInt(digits)) * (Number(unit) / 10 ** digits.length);
      value += BigInt(Math.trunc(scaled));
    }
    total += value;
    if (total > MAX_INT64 + (negative ? 1n : 0n)) throw new InvalidInputError(`time: invalid duration "${original}"`);
  }
  return negative ? -total : total;
}

/** Formats nanoseconds exactly as Go's `Duration.String()` ("1h0m0s", "1.5s", "300ms", "0s"). */
export function formatGoDuration(nanoseconds: bigint): string {
  if (nanoseconds === 0n) return '0s';
  const negative = nanoseconds < 0n;
  let u = negative ? -nanoseconds : nanoseconds;
  let out: string;
  if (u < 1_000_000_000n) {
    // Sub-second values use the largest unit that keeps a non-zero integer part.
    let precision: number;
    let unit: string;
    if (u < 1_000n) {
      return `${negative ? '-' : ''}${u}ns`;
    } else if (u < 1_000_000n) {
      precision = 3;
      unit = 'µs';
    } else {
      precision = 6;
      unit = 'ms';
    }
    out = formatFraction(u, precision) + unit;
  } else {
    const seconds = formatFraction(u % 60_000_000_000n, 9);
    u /= 60_000_000_000n;
    out = `${seconds}s`;
    if (u > 0n) {
      out = `${u % 60n}m${out}`;
      u /= 60n;
      if (u > 0n) out = `${u}h${out}`;
    }
  }
  return negative ? `-${out}` : out;
}

/** `value / 10^precision` printed with trailing fractional zeros (and a bare dot) removed. */
function formatFraction(value: bigint, precision: number): string {
  const scale = 10n ** BigInt(precision);
  const whole = value / scale;
  const fraction = (value % scale).toString().padStart(precision, '0').replace(/0+$/, '');
  return fraction === '' ? `${whole}` : `${whole}.${fraction}`;
}

/** Normalises a duration string the way a decode/encode round trip through Go does. */
export function normalizeGoDuration(text: string): string {
  return formatGoDuration(parseGoDuration(text));
}

/** Go durations as a setting's help names them. */
export const GO_DURATION_EXAMPLES = '30s, 5m, 1h30m, 1.5h or 300ms';

const NS_PER_MS = 1_000_000n;

/**
 * A configured duration in milliseconds (sub-millisecond parts dropped), read as Go's
 * `time.ParseDuration` reads it. Refuses text Go refuses and negative durations, with
 * InvalidInputError naming the setting, the value and Go's reason.
 */
export function parseDurationSetting(setting: string, raw: string): number {
  let nanoseconds: bigint;
  try {
    nanoseconds = parseGoDuration(raw.trim());
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new InvalidInputError(`${setting}=${JSON.stringify(raw)} is not a duration (${reason}); use Go duration syntax such as ${GO_DURATION_EXAMPLES}`);
  }
  if (nanoseconds < 0n) throw new InvalidInputError(`${setting}=${JSON.stringify(raw)} is negative; use a duration such as ${GO_DURATION_EXAMPLES}`);
  return Number(nanoseconds / NS_PER_MS);
}
