/**
 * Serialises plain JSON values the way Go's `encoding/json` marshals a typed struct,
 * driven by a schema that mirrors the Go declaration: fields in declaration order,
 * `omitempty` honoured, unknown keys dropped (a Go decode ignores them), durations
 * round-tripped through `time.Duration`, map keys sorted, and `<`, `>`, `&`, U+2028,
 * U+2029 escaped as Go's HTML-safe encoder does. Byte equality with upstream is the
 * point: digests computed here and by the in-cluster controller must agree.
 */
import { InvalidInputError } from '../errors';
import { compareGoStrings, quoteGoString } from '../go-string';
import { normalizeGoDuration } from '../go-duration';

/** One Go field: its json tag name, its type, and whether the tag says omitempty. */
export interface GoField {
  readonly name: string;
  readonly type: GoType;
  readonly omitempty?: boolean;
}

/** The Go types the rollout structs use. `pointer` distinguishes `*T` from `T`. */
export type GoType =
  | { readonly kind: 'string' }
  | { readonly kind: 'int' }
  | { readonly kind: 'bool' }
  | { readonly kind: 'duration' }
  | { readonly kind: 'intOrString' }
  | { readonly kind: 'struct'; readonly fields: readonly GoField[] }
  | { readonly kind: 'pointer'; readonly to: GoType }
  | { readonly kind: 'slice'; readonly of: GoType }
  | { readonly kind: 'map'; readonly of: GoType };

export const goString: GoType = { kind: 'string' };
export const goInt: GoType = { kind: 'int' };
export const goBool: GoType = { kind: 'bool' };
export const goDuration: GoType = { kind: 'duration' };
export const goIntOrString: GoType = { kind: 'intOrString' };
export const goStruct = (fields: readonly GoField[]): GoType => ({ kind: 'struct', fields });
export const goPointer = (to: GoType): GoType => ({ kind: 'pointer', to });
export const goSlice = (of: GoType): GoType => ({ kind: 'slice', of });
export const goMap = (of: GoType): GoType => ({ kind: 'map', of });

/** Marshals `value` as Go would marshal the typed struct decoded from it. */
export function marshalGoJson(value: unknown, type: GoType): string {
  return encode(value, type, '$');
}

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null;
}

/** Go's omitempty test, applied to the value as Go would hold it after decoding. */
function isEmpty(value: unknown, type: GoType): boolean {
  switch (type.kind) {
    case 'pointer':
      return isAbsent(value);
    case 'slice':
      return isAbsent(value) || (Array.isArray(value) && value.length === 0);
    case 'map':
      return isAbsent(value) || (typeof value === 'object' && Object.keys(value as object).length === 0);
    case 'string':
      return isAbsent(value) || value === '';
    case 'int':
      return isAbsent(value) || value === 0;
    case 'bool':
      return isAbsent(value) || value === false;
    case 'duration':
      // metav1.Duration is a struct: omitempty never omits a non-pointer struct.
      return false;
    case 'intOrString':
    case 'struct':
      return false;
  }
}

function encode(value: unknown, type: GoType, path: string): string {
  switch (type.kind) {
    case 'string':
      if (isAbsent(value)) return '""';
      if (typeof value !== 'string') throw typeError(path, 'a string', value);
      return quoteGoString(value);
    case 'int':
      return encodeInt(value, path);
    case 'bool':
      if (isAbsent(value)) return 'false';
      if (typeof value !== 'boolean') throw typeError(path, 'a boolean', value);
      return value ? 'true' : 'false';
    case 'duration':
      if (isAbsent(value)) return '"0s"';
      if (typeof value !== 'string') throw typeError(path, 'a duration string', value);
      return quoteGoString(normalizeGoDuration(value));
    case 'intOrString':
      if (isAbsent(value)) return '0';
      if (typeof value === 'string') return quoteGoString(value);
      return encodeInt(value, path);
    case 'pointer':
      return isAbsent(value) ? 'null' : encode(value, type.to, path);
    case 'slice':
      return encodeSlice(value, type.of, path);
    case 'map':
      return encodeMap(value, type.of, path);
    case 'struct':
      return encodeStruct(value, type.fields, path);
  }
}

function encodeInt(value: unknown, path: string): string {
  if (isAbsent(value)) return '0';
  if (typeof value !== 'number' || !Number.isInteger(value)) throw typeError(path, 'an integer', value);
  return String(value);
}

function encodeSlice(value: unknown, of: GoType, path: string): string {
  if (isAbsent(value)) return 'null';
  if (!Array.isArray(value)) throw typeError(path, 'a list', value);
  return `[${value.map((item, i) => encode(item, of, `${path}[${i}]`)).join(',')}]`;
}

function encodeMap(value: unknown, of: GoType, path: string): string {
  if (isAbsent(value)) return 'null';
  if (typeof value !== 'object' || Array.isArray(value)) throw typeError(path, 'an object', value);
  const record = value as Record<string, unknown>;
  // Go sorts map keys by their UTF-8 bytes.
  const keys = Object.keys(record).sort(compareGoStrings);
  return `{${keys.map((k) => `${quoteGoString(k)}:${encode(record[k], of, `${path}.${k}`)}`).join(',')}}`;
}

function encodeStruct(value: unknown, fields: readonly GoField[], path: string): string {
  if (!isAbsent(value) && (typeof value !== 'object' || Array.isArray(value))) {
    throw typeError(path, 'an object', value);
  }
  const record = (value ?? {}) as Record<string, unknown>;
  const parts: string[] = [];
  for (const field of fields) {
    const fieldValue = record[field.name];
    if (field.omitempty && isEmpty(fieldValue, field.type)) continue;
    parts.push(`${quoteGoString(field.name)}:${encode(fieldValue, field.type, `${path}.${field.name}`)}`);
  }
  return `{${parts.join(',')}}`;
}

function typeError(path: string, expected: string, value: unknown): InvalidInputError {
  return new InvalidInputError(`${path}: expected ${expected}, got ${JSON.stringify(value)}`);
}

