/**
 * Go's encoding/json string rules, used by the Go-JSON encoder (shared/domain/go-json.ts) for
 * runtime specs and rollout progressions: hashes and digests computed here must equal
 * upstream's byte for byte.
 */

const HEX = '0123456789abcdef';

/** Quotes a string exactly as Go's encoding/json does with HTML escaping on. */
export function quoteGoString(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    switch (char) {
      case '"':
        out += '\\"';
        continue;
      case '\\':
        out += '\\\\';
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\r':
        out += '\\r';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '\b':
        out += '\\b';
        continue;
      case '\f':
        out += '\\f';
        continue;
      default:
    }
    if (code < 0x20 || char === '<' || char === '>' || char === '&') {
      out += `\\u00${HEX[code >> 4]}${HEX[code & 0xf]}`;
    } else if (code === 0x2028 || code === 0x2029) {
      out += `\\u${code.toString(16)}`;
    } else if (code >= 0xd800 && code <= 0xdfff) {
      // A lone surrogate is invalid UTF-8 to Go, which writes the replacement character.
      out += '\\ufffd';
    } else {
      out += char;
    }
  }
  return `${out}"`;
}

/** Go's code-point (UTF-8 byte) order, which differs from UTF-16 order above U+FFFF. */
export function compareGoStrings(a: string, b: string): number {
  const left = Array.from(a, (c) => c.codePointAt(0) ?? 0);
  const right = Array.from(b, (c) => c.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(left.length, right.length); i += 1) {
    const diff = (left[i] ?? 0) - (right[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return left.length - right.length;
}
