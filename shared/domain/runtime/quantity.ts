import { InvalidInputError } from '../errors';

/**
 * Kubernetes resource quantities (`10`, `30Gi`, `500m`) in the canonical form that
 * apimachinery's `Quantity.MarshalJSON` writes. Go re-serialises every quantity it
 * decodes, so `1000m` is stored and hashed as `1`, and `1.5Gi` as `1536Mi`; a hash over
 * the runtime spec only matches upstream's when we canonicalise the same way.
 */

type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

const BINARY_SUFFIXES: Readonly<Record<string, number>> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DECIMAL_SUFFIX_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIXES).map(([suffix, exp]) => [exp, suffix]));
const BINARY_SUFFIX_BY_POWER = new Map(Object.entries(BINARY_SUFFIXES).map(([suffix, pow]) => [pow, suffix]));

const QUANTITY_PATTERN = /^([+-]?)(\d*)(?:\.(\d*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

/**
 * The longest quantity we parse. apimachinery has no explicit limit (the request size
 * bounds it), but its arithmetic grows with the digits given; real quantities are a few
 * characters. Beyond this the runtime fails to pin with a clear error instead of costing
 * time and memory on every pin and drift evaluation.
 */
export const MAX_QUANTITY_LENGTH = 256;

/** apimachinery reads an `e<n>` exponent as an int32 (`strconv.ParseInt(s, 10, 32)`). */
const MAX_EXPONENT = 2 ** 31 - 1;
const MIN_EXPONENT = -(2 ** 31);

/** apimachinery's `maxAllowed`: 2^63 - 1. */
const MAX_ALLOWED = 2n ** 63n - 1n;

/** The smallest scale apimachinery keeps: nano. Anything finer rounds up, away from zero. */
const NANO_SCALE = -9;

const FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const SUFFIX_ERROR = "unable to parse quantity's suffix";

/** An exact value `mantissa × 10^scale`, with the format its suffix implies. */
interface ParsedQuantity {
  mantissa: bigint;
  scale: number;
  format: QuantityFormat;
}

function pow10(exponent: number): bigint {
  return 10n ** BigInt(exponent);
}

function quote(text: string): string {
  return text.length <= 64 ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, 64))}… (${text.length} characters)`;
}

/** The suffix's power of ten, or its power of 1024 for a binary suffix. */
function interpretSuffix(text: string, suffix: string): { format: QuantityFormat; exponent: number } {
  if (suffix in BINARY_SUFFIXES) return { format: 'BinarySI', exponent: BINARY_SUFFIXES[suffix] ?? 0 };
  if (!/^[eE]/.test(suffix)) return { format: 'DecimalSI', exponent: DECIMAL_SUFFIXES[suffix] ?? 0 };
  // At most 256 characters, so Number() is exact enough to tell an int32 from anything larger.
  const exponent = Number(suffix.slice(1));
  if (!Number.isInteger(exponent) || exponent > MAX_EXPONENT || exponent < MIN_EXPONENT) throw new InvalidInputError(`${SUFFIX_ERROR}: ${quote(text)}`);
  return { format: 'DecimalExponent', exponent };
}

/**
 * Parses a quantity exactly, at a cost bounded by its length whatever its exponent: the
 * digits are trimmed as text (zeros move into the scale), a value below one nano becomes
 * one nano without ever forming 10^|exponent|, and a large exponent stays an exponent.
 * `1e-300000000` is one nano (`1e-9`), as apimachinery rounds it, after a handful of steps.
 */
function parseQuantity(text: string): ParsedQuantity {
  if (text.length > MAX_QUANTITY_LENGTH) throw new InvalidInputError(`quantity ${quote(text)} is longer than ${MAX_QUANTITY_LENGTH} characters`);
  const match = QUANTITY_PATTERN.exec(text);
  const whole = match?.[2] ?? '';
  const fraction = match?.[3] ?? '';
  if (!match || whole.length + fraction.length === 0) throw new InvalidInputError(`${FORMAT_ERROR}: ${quote(text)}`);
  const negative = match[1] === '-';
  const { format, exponent } = interpretSuffix(text, match[4] ?? '');

  // The significant digits, with zeros on either side folded into the scale.
  let digits = (whole + fraction).replace(/^0+/, '');
  const significant = digits.replace(/0+$/, '');
  let scale = -fraction.length + (digits.length - significant.length) + (format === 'BinarySI' ? 0 : exponent);
  digits = significant;
  if (digits === '') return { mantissa: 0n, scale: 0, format };

  let mantissa = BigInt(digits);
  if (format === 'BinarySI') mantissa *= 1024n ** BigInt(exponent);
  if (scale < NANO_SCALE) {
    if (digits.length + scale <= NANO_SCALE && format !== 'BinarySI') {
      // Below one nano: apimachinery rounds any such value up to exactly 1n.
      mantissa = 1n;
    } else {
      // Fewer digits are dropped than the input has, so the divisor is bounded by its length.
      const divisor = pow10(NANO_SCALE - scale);
      mantissa = (mantissa + divisor - 1n) / divisor;
    }
    scale = NANO_SCALE;
  }
  // apimachinery caps binary quantities (only those) at the largest int64.
  if (format === 'BinarySI' && (scale >= 0 ? mantissa * pow10(scale) : mantissa) > (scale >= 0 ? MAX_ALLOWED : MAX_ALLOWED * pow10(-scale))) {
    mantissa = MAX_ALLOWED;
    scale = 0;
  }
  return { mantissa: negative ? -mantissa : mantissa, scale, format };
}

function formatDecimal({ mantissa, scale }: ParsedQuantity, format: QuantityFormat): string {
  let amount = mantissa;
  let exponent = scale;
  while (amount % 10n === 0n) {
    amount /= 10n;
    exponent += 1;
  }
  const remainder = exponent % 3;
  if (remainder === 1 || remainder === -2) {
    amount *= 10n;
    exponent -= 1;
  } else if (remainder === 2 || remainder === -1) {
    amount *= 100n;
    exponent -= 2;
  }
  const suffix =
    format === 'DecimalSI' && DECIMAL_SUFFIX_BY_EXPONENT.has(exponent)
      ? DECIMAL_SUFFIX_BY_EXPONENT.get(exponent)
      : exponent === 0
        ? ''
        : `e${exponent}`;
  return `${amount}${suffix}`;
}

function formatBinary(integer: bigint): string {
  let amount = integer;
  let power = 0;
  while (power < 6 && amount % 1024n === 0n) {
    amount /= 1024n;
    power += 1;
  }
  return `${amount}${BINARY_SUFFIX_BY_POWER.get(power) ?? ''}`;
}

/**
 * Returns the canonical string for a quantity given as a string or a JSON number, as
 * Go's `resource.Quantity` marshals it.
 * @throws InvalidInputError when the text is not a quantity
 */
export function canonicalizeQuantity(input: string | number): string {
  const parsed = parseQuantity(typeof input === 'number' ? String(input) : input);
  if (parsed.mantissa === 0n) return '0';
  if (parsed.format === 'BinarySI') {
    const isInteger = parsed.scale >= 0 || parsed.mantissa % pow10(-parsed.scale) === 0n;
    const integer = parsed.scale >= 0 ? parsed.mantissa * pow10(parsed.scale) : parsed.mantissa / pow10(-parsed.scale);
    // Small or fractional binary values print in decimal so no precision is lost.
    if (isInteger && (integer <= -1024n || integer >= 1024n)) return formatBinary(integer);
    return formatDecimal(parsed, 'DecimalSI');
  }
  return formatDecimal(parsed, parsed.format);
}
