/**
 * The one encoder of Go's `encoding/json` marshalling, for every Go type this plane
 * hashes: runtime specs (revision names, shared/domain/runtime) and rollout progressions
 * (portable digests, shared/domain/rollout). Byte equality with upstream is the point: a hash
 * computed here and by the in-cluster controller must agree. Given a schema that mirrors
 * the Go declaration, it writes what `json.Marshal` writes for the value decoded into
 * that type:
 * - struct fields in declaration order (a schema lists embedded fields already promoted),
 *   keys the struct lacks dropped (a Go decode ignores them);
 * - `omitempty` drops false, 0, "", nil pointers and empty slices and maps, but never a
 *   struct value (so `metav1.Duration`, `IntOrString`, `Quantity` are always written);
 * - fields without `omitempty` always written, with Go's zero value when absent (a nil
 *   slice or map as `null`);
 * - map keys sorted as Go sorts their UTF-8 bytes, strings HTML-escaped as Go does
 *   (shared/domain/go-string.ts), floats as Go formats a float64, durations as `Duration.String`.
 *
 * The per-type schemas live with their domain: shared/domain/rollout/schema.ts, and the
 * runtime's Go field table (shared/domain/runtime/go-types.ts, read by shared/domain/runtime/go-json.ts).
 */
import { InvalidInputError } from './errors';
import { compareGoStrings, quoteGoString } from './go-string';
import { normalizeGoDuration } from './go-duration';

/** A JSON value as `JSON.parse` gives it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** One Go field: its json tag name, its type, and whether the tag says omitempty. */
export interface GoField {
  readonly name: string;
  readonly type: GoType;
  readonly omitempty?: boolean;
}

/**
 * A Go scalar the generic kinds do not cover (e.g. `resource.Quantity`, `metav1.Time`):
 * its Go name, the bytes of its zero value, how a value is written, and when
 * `omitempty` drops it (never, for a struct type).
 */
export interface GoScalar {
  readonly kind: 'scalar';
  readonly name: string;
  readonly zero: string;
  readonly encode: (value: unknown, fail: () => never) => string;
  readonly isEmpty?: (value: unknown) => boolean;
}

/**
 * The Go types a schema is made of. `pointer` distinguishes `*T` from `T`; `raw` is a
 * value kept as given (`interface{}`, `RawExtension`). A struct's fields are read
 * lazily, so a table of named structs may refer to itself.
 */
export type GoType =
  | { readonly kind: 'string' }
  | { readonly kind: 'int' }
  | { readonly kind: 'float' }
  | { readonly kind: 'bool' }
  | { readonly kind: 'duration' }
  | { readonly kind: 'intOrString' }
  | { readonly kind: 'raw' }
  | GoScalar
  | { readonly kind: 'struct'; readonly name: string | undefined; readonly fields: () => readonly GoField[] }
  | { readonly kind: 'pointer'; readonly to: GoType }
  | { readonly kind: 'slice'; readonly of: GoType }
  | { readonly kind: 'map'; readonly of: GoType };

export const goString: GoType = { kind: 'string' };
export const goInt: GoType = { kind: 'int' };
export const goFloat: GoType = { kind: 'float' };
export const goBool: GoType = { kind: 'bool' };
export const goDuration: GoType = { kind: 'duration' };
export const goIntOrString: GoType = { kind: 'intOrString' };
export const goRaw: GoType = { kind: 'raw' };
/** A struct: its fields in declaration order, or a thunk giving them (for named, recursive types). */
export const goStruct = (fields: readonly GoField[] | (() => readonly GoField[]), name?: string): GoType => ({
  kind: 'struct',
  name,
  fields: typeof fields === 'function' ? fields : () => fields,
});
export const goPointer = (to: GoType): GoType => ({ kind: 'pointer', to });
export const goSlice = (of: GoType): GoType => ({ kind: 'slice', of });
export const goMap = (of: GoType): GoType => ({ kind: 'map', of });

/** The Go spelling of a type (`[]core.Container`, `map[string]string`), for messages. */
export function goTypeName(type: GoType): string {
  switch (type.kind) {
    case 'pointer':
      return `*${goTypeName(type.to)}`;
    case 'slice':
      return `[]${goTypeName(type.of)}`;
    case 'map':
      return `map[string]${goTypeName(type.of)}`;
    case 'struct':
      return type.name ?? 'struct';
    case 'scalar':
      return type.name;
    case 'float':
      return 'float64';
    case 'intOrString':
      return 'intstr.IntOrString';
    case 'duration':
      return 'metav1.Duration';
    case 'raw':
      return 'json';
    default:
      return type.kind;
  }
}

/**
 * How input keys meet struct fields and how a value that cannot decode is reported:
 * the two things the callers of the encoder differ on, never the bytes written.
 */
export interface GoDecoding {
  /** The name of the root in a path (`$`, or `` for Go's own wording). */
  readonly root: string;
  /** Match a key that differs from the json name only in case, as Go's decoder does. */
  readonly foldKeyCase: boolean;
  /** The message for `value` at `path` that cannot decode into `type`. */
  readonly message: (path: string, type: GoType, value: unknown) => string;
}

const EXPECTED: Partial<Record<GoType['kind'], string>> = {
  string: 'a string',
  bool: 'a boolean',
  int: 'an integer',
  intOrString: 'an integer',
  duration: 'a duration string',
  slice: 'a list',
  map: 'an object',
  struct: 'an object',
};

/** The default: exact keys (what a pruned CRD object carries) and `$.path: expected …` messages. */
export const PATH_DECODING: GoDecoding = {
  root: '$',
  foldKeyCase: false,
  message: (path, type, value) => `${path}: expected ${EXPECTED[type.kind] ?? goTypeName(type)}, got ${JSON.stringify(value)}`,
};

/**
 * Marshals `value` as Go would marshal the typed value decoded from it.
 * @throws InvalidInputError when a value cannot decode into its Go type
 */
export function marshalGoJson(value: unknown, type: GoType, decoding: GoDecoding = PATH_DECODING): string {
  return new GoEncoder(decoding).encode(value, type, decoding.root);
}

function isAbsent(value: unknown): value is null | undefined {
  return value === undefined || value === null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Go's omitempty test, applied to the value as Go would hold it after decoding. */
function isEmpty(value: unknown, type: GoType): boolean {
  switch (type.kind) {
    case 'pointer':
    case 'raw':
      return isAbsent(value);
    case 'slice':
      return isAbsent(value) || (Array.isArray(value) && value.length === 0);
    case 'map':
      return isAbsent(value) || (isObject(value) && Object.keys(value).length === 0);
    case 'string':
      return isAbsent(value) || value === '';
    case 'int':
    case 'float':
      return isAbsent(value) || value === 0;
    case 'bool':
      return isAbsent(value) || value === false;
    case 'scalar':
      return type.isEmpty?.(value) ?? false;
    case 'duration':
    case 'intOrString':
    case 'struct':
      // Struct types: omitempty never omits a non-pointer struct.
      return false;
  }
}

/** Go writes float64 like ECMAScript's Number#toString, including the 1e21/1e-6 switch to exponents. */
function formatGoFloat(value: number): string {
  return Object.is(value, -0) ? '-0' : String(value);
}

class GoEncoder {
  constructor(private readonly decoding: GoDecoding) {}

  private fail(path: string, type: GoType, value: unknown): never {
    throw new InvalidInputError(this.decoding.message(path, type, value));
  }

  encode(value: unknown, type: GoType, path: string): string {
    switch (type.kind) {
      case 'string':
        if (isAbsent(value)) return '""';
        return typeof value === 'string' ? quoteGoString(value) : this.fail(path, type, value);
      case 'int':
        return this.encodeInt(value, type, path);
      case 'float':
        if (isAbsent(value)) return '0';
        return typeof value === 'number' && Number.isFinite(value) ? formatGoFloat(value) : this.fail(path, type, value);
      case 'bool':
        if (isAbsent(value)) return 'false';
        return typeof value === 'boolean' ? String(value) : this.fail(path, type, value);
      case 'duration':
        if (isAbsent(value)) return '"0s"';
        return typeof value === 'string' ? quoteGoString(normalizeGoDuration(value)) : this.fail(path, type, value);
      case 'intOrString':
        return typeof value === 'string' ? quoteGoString(value) : this.encodeInt(value, type, path);
      case 'scalar':
        return isAbsent(value) ? type.zero : type.encode(value, () => this.fail(path, type, value));
      case 'raw':
        return this.encodeRaw(value, path);
      case 'pointer':
        return isAbsent(value) ? 'null' : this.encode(value, type.to, path);
      case 'slice':
        return this.encodeSlice(value, type, path);
      case 'map':
        return this.encodeMap(value, type, path);
      case 'struct':
        return this.encodeStruct(value, type, path);
    }
  }

  private encodeInt(value: unknown, type: GoType, path: string): string {
    if (isAbsent(value)) return '0';
    return typeof value === 'number' && Number.isInteger(value) ? String(value) : this.fail(path, type, value);
  }

  private encodeSlice(value: unknown, type: Extract<GoType, { kind: 'slice' }>, path: string): string {
    if (isAbsent(value)) return 'null';
    if (!Array.isArray(value)) return this.fail(path, type, value);
    return `[${value.map((item, i) => this.encode(item, type.of, `${path}[${i}]`)).join(',')}]`;
  }

  private encodeMap(value: unknown, type: Extract<GoType, { kind: 'map' }>, path: string): string {
    if (isAbsent(value)) return 'null';
    if (!isObject(value)) return this.fail(path, type, value);
    const keys = Object.keys(value).sort(compareGoStrings);
    return `{${keys.map((key) => `${quoteGoString(key)}:${this.encode(value[key], type.of, `${path}.${key}`)}`).join(',')}}`;
  }

  private encodeRaw(value: unknown, path: string): string {
    if (isAbsent(value)) return 'null';
    if (typeof value === 'string') return quoteGoString(value);
    if (typeof value === 'boolean') return String(value);
    if (typeof value === 'number') return this.encode(value, goFloat, path);
    if (Array.isArray(value)) return `[${value.map((item, i) => this.encodeRaw(item, `${path}[${i}]`)).join(',')}]`;
    if (isObject(value)) {
      return `{${Object.entries(value)
        .map(([key, item]) => `${quoteGoString(key)}:${this.encodeRaw(item, `${path}.${key}`)}`)
        .join(',')}}`;
    }
    return this.fail(path, goRaw, value);
  }

  private encodeStruct(value: unknown, type: Extract<GoType, { kind: 'struct' }>, path: string): string {
    if (!isAbsent(value) && !isObject(value)) return this.fail(path, type, value);
    const object = value ?? {};
    const parts: string[] = [];
    for (const field of type.fields()) {
      const key = this.findKey(object, field.name);
      const fieldValue = key === undefined ? undefined : object[key];
      if (field.omitempty && isEmpty(fieldValue, field.type)) continue;
      parts.push(`${quoteGoString(field.name)}:${this.encode(fieldValue, field.type, `${path}.${field.name}`)}`);
    }
    return `{${parts.join(',')}}`;
  }

  private findKey(object: Record<string, unknown>, name: string): string | undefined {
    if (Object.hasOwn(object, name)) return name;
    if (!this.decoding.foldKeyCase) return undefined;
    const folded = name.toLowerCase();
    return Object.keys(object).find((key) => key.toLowerCase() === folded);
  }
}
