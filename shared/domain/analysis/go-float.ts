/**
 * Go's float text, as upstream reads thresholds and sample values (strconv.ParseFloat)
 * and writes `metricResults[].value` (strconv.FormatFloat(v, 'g', 6, 64)). Matching the
 * output byte for byte keeps status identical to upstream's for the same sample.
 */

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const SPECIAL = /^([+-]?)(inf|infinity|nan)$/i;

/** strconv.ParseFloat(text, 64) for decimal, exponent, Inf and NaN forms; undefined where Go errors. */
export function parseGoFloat(text: string): number | undefined {
  if (DECIMAL.test(text)) return Number(text);
  const special = SPECIAL.exec(text);
  if (!special) return undefined;
  if ((special[2] ?? '').toLowerCase() === 'nan') return special[1] === '' ? Number.NaN : undefined;
  return special[1] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
}

/** The significant digits Go's 'g' format keeps. */
const PRECISION = 6;

/**
 * strconv.FormatFloat(value, 'g', 6, 64): six significant digits, trailing zeros dropped,
 * `%e` form (`1.23457e+06`, `1e-05`) when the exponent is below -4 or at least the
 * precision, `%f` form otherwise.
 */
export function formatGoFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const sign = value < 0 ? '-' : '';
  const { digits, decimalPoint } = roundDigits(exactDecimal(Math.abs(value)), PRECISION);
  const exponent = decimalPoint - 1;
  let eprec = PRECISION;
  if (eprec > digits.length && digits.length >= decimalPoint) eprec = digits.length;
  if (exponent < -4 || exponent >= eprec) {
    const kept = digits.slice(0, Math.min(PRECISION, digits.length));
    const fraction = kept.length > 1 ? `.${kept.slice(1)}` : '';
    const magnitude = String(Math.abs(exponent)).padStart(2, '0');
    return `${sign}${kept.charAt(0)}${fraction}e${exponent < 0 ? '-' : '+'}${magnitude}`;
  }
  const precision = PRECISION > decimalPoint ? digits.length : PRECISION;
  return sign + fixed(digits, decimalPoint, Math.max(precision - decimalPoint, 0));
}

/** A positive finite double's exact decimal expansion: value = 0.<digits> × 10^decimalPoint. */
function exactDecimal(value: number): { digits: string; decimalPoint: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const exponent = biased === 0 ? -1074 : biased - 1075;
  if (exponent >= 0) {
    const text = (mantissa << BigInt(exponent)).toString();
    return { digits: text.replace(/0+$/, ''), decimalPoint: text.length };
  }
  // m × 2^-k = m × 5^k / 10^k: exact, so ties round as Go rounds them (half to even).
  const text = (mantissa * 5n ** BigInt(-exponent)).toString();
  return { digits: text.replace(/0+$/, ''), decimalPoint: text.length + exponent };
}

/** Rounds to `precision` significant digits, half to even, dropping trailing zeros. */
function roundDigits(exact: { digits: string; decimalPoint: number }, precision: number): { digits: string; decimalPoint: number } {
  const { digits, decimalPoint } = exact;
  if (digits.length <= precision) return exact;
  const next = digits.charAt(precision);
  const rest = digits.slice(precision + 1);
  const last = Number(digits.charAt(precision - 1));
  const up = next > '5' || (next === '5' && (/[1-9]/.test(rest) || last % 2 === 1));
  let kept = digits.slice(0, precision);
  if (!up) return { digits: kept.replace(/0+$/, ''), decimalPoint };
  const bumped = (BigInt(kept) + 1n).toString();
  if (bumped.length > kept.length) return { digits: '1', decimalPoint: decimalPoint + 1 };
  kept = bumped;
  return { digits: kept.replace(/0+$/, ''), decimalPoint };
}

/** Go's fmtF over a digit string with its decimal point position. */
function fixed(digits: string, decimalPoint: number, decimals: number): string {
  let whole = '0';
  if (decimalPoint > 0) whole = digits.slice(0, decimalPoint).padEnd(decimalPoint, '0');
  if (decimals === 0) return whole;
  let fraction = '';
  for (let i = 1; i <= decimals; i += 1) {
    const j = decimalPoint + i - 1;
    fraction += j >= 0 && j < digits.length ? digits.charAt(j) : '0';
  }
  return `${whole}.${fraction}`;
}
