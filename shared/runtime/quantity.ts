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

/** An exact value `mantissa × 10^scale`, with the format its suffix implies. */
interface ParsedQuantity {
  mantissa: bigint;
  scale: number;
  format: QuantityFormat;
}

function pow10(exponent: number): bigint {
  return 10n ** BigInt(exponent);
}

function parseQuantity(text: string): ParsedQuantity {
  const match = QUANTITY_PATTERN.exec(text);
  const whole = match?.[2] ?? '';
  const fraction = match?.[3] ?? '';
  if (!match || whole.length + fraction.length === 0) {
    throw new InvalidInputError(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${JSON.stringify(text)}`);
  }
  const sign = match[1] === '-' ? -1n : 1n;
  const suffix = match[4] ?? '';
  let mantissa = sign * BigInt(whole + fraction || '0');
  let scale = -fraction.length;
  let format: QuantityFormat = 'DecimalSI';
  if (suffix in BINARY_SUFFIXES) {
    format = 'BinarySI';
    mantissa *= 1024n ** BigInt(BINARY_SUFFIXES[suffix] ?? 0);
  } else if (/^[eE]/.test(suffix)) {
    format = 'DecimalExponent';
    scale += Number(suffix.slice(1));
  } else {
    scale += DECIMAL_SUFFIXES[suffix] ?? 0;
  }
  // apimachinery keeps nano precision and rounds anything finer away from zero.
  if (scale < -9) {
    const divisor = pow10(-9 - scale);
    const magnitude = mantissa < 0n ? -mantissa : mantissa;
    const rounded = (magnitude + divisor - 1n) / divisor;
    mantissa = mantissa < 0n ? -rounded : rounded;
    scale = -9;
  }
  return { mantissa, scale, format };
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
