import { InvalidInputError } from '../errors';
import { compareGoStrings, quoteGoString } from '../go-string';
import { GO_ALIASES, GO_STRUCTS, type GoFieldSpec } from './go-types';
import { canonicalizeQuantity } from './quantity';

/**
 * Serialises a value the way Go's `encoding/json` marshals the Go struct it would be
 * decoded into. Upstream OME hashes `json.Marshal(ServingRuntimeSpec)`, so to agree on
 * revision names we reproduce, from the type table in `go-types.ts`:
 * - struct fields in declaration order, embedded (`inline`) structs promoted in place,
 *   with Go's rule that a shallower or tagged field hides a clashing one;
 * - `omitempty` drops false, 0, "", nil pointers and empty slices and maps, but never a
 *   struct value (so a container always carries `"resources":{}`);
 * - fields without `omitempty` are always written: a missing slice as `null`, a missing
 *   string as `""`;
 * - map keys sorted by code point (Go sorts the UTF-8 bytes: same order);
 * - strings escaped as Go does, including `<`, `>`, `&`, U+2028 and U+2029;
 * - quantities canonicalised; keys that the Go struct lacks dropped.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** The root type of a runtime revision's data. */
export const SERVING_RUNTIME_SPEC_TYPE = 'ome.ServingRuntimeSpec';

interface FlatField {
  json: string;
  type: string;
  omitEmpty: boolean;
  mergeKey: string | undefined;
  mergeStrategy: boolean;
}

interface Candidate extends FlatField {
  depth: number;
  tagged: boolean;
}

const flatCache = new Map<string, readonly FlatField[]>();

/** A table of Go structs: for each, its JSON fields in declaration order (see go-types.ts). */
export type GoStructTable = Readonly<Record<string, readonly GoFieldSpec[]>>;

function collectFields(structs: GoStructTable, structName: string, depth: number, out: Candidate[], seen: Set<string>): void {
  const fields = structs[structName];
  if (!fields) throw new InvalidInputError(`unknown Go struct ${structName}`);
  for (const [json, type, flagText = ''] of fields) {
    const [flags = '', mergeKey] = flagText.split(':');
    if (flags.includes('i')) {
      const embedded = type.replace(/^\*/, '');
      // Go stops at an embedded type it has already expanded on this path.
      if (seen.has(embedded)) continue;
      collectFields(structs, embedded, depth + 1, out, new Set([...seen, embedded]));
      continue;
    }
    out.push({
      json,
      type,
      omitEmpty: flags.includes('o'),
      mergeStrategy: flags.includes('m'),
      mergeKey,
      depth,
      tagged: !flags.includes('u'),
    });
  }
}

/**
 * The JSON fields of a struct after Go's promotion of embedded fields, in output order.
 * Go's rule for a name several fields share: the shallowest wins; among equally shallow
 * ones a single tagged field wins; otherwise none is written. Our table has no such
 * clash today, so the rule is checked against small tables passed as `structs`.
 */
export function flattenGoStruct(structName: string, structs: GoStructTable = GO_STRUCTS): readonly FlatField[] {
  const cacheable = structs === GO_STRUCTS;
  const cached = cacheable ? flatCache.get(structName) : undefined;
  if (cached) return cached;
  const candidates: Candidate[] = [];
  collectFields(structs, structName, 0, candidates, new Set([structName]));
  const byName = new Map<string, Candidate[]>();
  for (const candidate of candidates) {
    byName.set(candidate.json, [...(byName.get(candidate.json) ?? []), candidate]);
  }
  const result: FlatField[] = [];
  for (const candidate of candidates) {
    const rivals = byName.get(candidate.json) ?? [];
    const shallowest = Math.min(...rivals.map((r) => r.depth));
    const dominant = rivals.filter((r) => r.depth === shallowest);
    const tagged = dominant.filter((r) => r.tagged);
    const winner = dominant.length === 1 ? dominant[0] : tagged.length === 1 ? tagged[0] : undefined;
    if (winner === candidate) {
      result.push({
        json: candidate.json,
        type: candidate.type,
        omitEmpty: candidate.omitEmpty,
        mergeKey: candidate.mergeKey,
        mergeStrategy: candidate.mergeStrategy,
      });
    }
  }
  if (cacheable) flatCache.set(structName, result);
  return result;
}

/** Resolves a type table alias (`meta.ObjectMeta` → `raw`). */
export function resolveGoType(type: string): string {
  return GO_ALIASES[type] ?? type;
}

/** Splits `map[string]T` into `T`. */
function mapElement(type: string): string {
  return type.slice('map[string]'.length);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(path: string, expected: string, value: unknown): never {
  throw new InvalidInputError(`json: cannot unmarshal ${JSON.stringify(value)} into ${path || 'value'} of type ${expected}`);
}

/** True when Go's `omitempty` would drop this field after decoding `value` into `type`. */
function isEmptyGoValue(value: unknown, type: string): boolean {
  const resolved = resolveGoType(type);
  if (value === undefined || value === null) {
    return resolved.startsWith('*') || resolved.startsWith('[]') || resolved.startsWith('map[') ||
      ['string', 'bool', 'int', 'float', 'bytes', 'raw'].includes(resolved);
  }
  if (resolved.startsWith('[]') || resolved === 'bytes') return Array.isArray(value) ? value.length === 0 : value === '';
  if (resolved.startsWith('map[')) return isObject(value) && Object.keys(value).length === 0;
  if (resolved === 'string') return value === '';
  if (resolved === 'bool') return value === false;
  if (resolved === 'int' || resolved === 'float') return value === 0;
  return false;
}

function findKey(object: Record<string, unknown>, name: string): string | undefined {
  if (Object.hasOwn(object, name)) return name;
  const folded = name.toLowerCase();
  // Go's decoder also accepts a key that differs only in case.
  return Object.keys(object).find((key) => key.toLowerCase() === folded);
}

function encodeRaw(value: unknown, path: string): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return quoteGoString(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return formatGoFloat(value, path);
  if (Array.isArray(value)) return `[${value.map((item, i) => encodeRaw(item, `${path}[${i}]`)).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.entries(value)
      .map(([key, item]) => `${quoteGoString(key)}:${encodeRaw(item, `${path}.${key}`)}`)
      .join(',')}}`;
  }
  return fail(path, 'json', value);
}

/** Go writes float64 like ECMAScript's Number#toString, including the 1e21/1e-6 switch to exponents. */
function formatGoFloat(value: number, path: string): string {
  if (!Number.isFinite(value)) fail(path, 'float64', value);
  return Object.is(value, -0) ? '-0' : String(value);
}

function encodeStruct(value: unknown, structName: string, path: string): string {
  if (value !== undefined && value !== null && !isObject(value)) fail(path, structName, value);
  const object = (value ?? {}) as Record<string, unknown>;
  const parts: string[] = [];
  for (const field of flattenGoStruct(structName)) {
    const key = findKey(object, field.json);
    const fieldValue = key === undefined ? undefined : object[key];
    if (field.omitEmpty && isEmptyGoValue(fieldValue, field.type)) continue;
    parts.push(`${quoteGoString(field.json)}:${encodeGoValue(fieldValue, field.type, `${path}.${field.json}`)}`);
  }
  return `{${parts.join(',')}}`;
}

function encodeGoValue(value: unknown, rawType: string, path: string): string {
  const type = resolveGoType(rawType);
  const absent = value === undefined || value === null;
  if (type.startsWith('*')) return absent ? 'null' : encodeGoValue(value, type.slice(1), path);
  if (type.startsWith('[]')) {
    if (absent) return 'null';
    if (!Array.isArray(value)) return fail(path, type, value);
    return `[${value.map((item, i) => encodeGoValue(item, type.slice(2), `${path}[${i}]`)).join(',')}]`;
  }
  if (type.startsWith('map[')) {
    if (absent) return 'null';
    if (!isObject(value)) return fail(path, type, value);
    const keys = Object.keys(value).sort(compareGoStrings);
    return `{${keys.map((key) => `${quoteGoString(key)}:${encodeGoValue(value[key], mapElement(type), `${path}.${key}`)}`).join(',')}}`;
  }
  const scalar = SCALAR_ENCODERS[type];
  if (scalar) return absent ? scalar.zero : scalar.encode(value, path);
  return type === 'raw' ? encodeRaw(value, path) : encodeStruct(value, type, path);
}

interface ScalarEncoder {
  /** What Go writes for the type's zero value (a field absent from the input). */
  zero: string;
  encode: (value: unknown, path: string) => string;
}

const SCALAR_ENCODERS: Readonly<Record<string, ScalarEncoder>> = {
  string: { zero: '""', encode: (v, p) => (typeof v === 'string' ? quoteGoString(v) : fail(p, 'string', v)) },
  bool: { zero: 'false', encode: (v, p) => (typeof v === 'boolean' ? String(v) : fail(p, 'bool', v)) },
  int: { zero: '0', encode: (v, p) => (typeof v === 'number' && Number.isInteger(v) ? String(v) : fail(p, 'int', v)) },
  float: { zero: '0', encode: (v, p) => (typeof v === 'number' ? formatGoFloat(v, p) : fail(p, 'float64', v)) },
  quantity: {
    zero: '"0"',
    encode: (v, p) => (typeof v === 'string' || typeof v === 'number' ? quoteGoString(canonicalizeQuantity(v)) : fail(p, 'resource.Quantity', v)),
  },
  intstr: {
    zero: '0',
    encode: (v, p) => (typeof v === 'number' && Number.isInteger(v) ? String(v) : typeof v === 'string' ? quoteGoString(v) : fail(p, 'intstr.IntOrString', v)),
  },
  time: { zero: 'null', encode: (v, p) => (typeof v === 'string' ? quoteGoString(v) : fail(p, 'metav1.Time', v)) },
  bytes: { zero: 'null', encode: (v, p) => (typeof v === 'string' ? quoteGoString(v) : fail(p, '[]byte', v)) },
};

/**
 * Returns the exact bytes (as a string) that Go's `json.Marshal` writes for `value`
 * decoded into the Go type `type` (default: a ServingRuntimeSpec).
 * @throws InvalidInputError when a value cannot decode into its Go field type
 */
export function marshalGoJson(value: unknown, type: string = SERVING_RUNTIME_SPEC_TYPE): string {
  return encodeGoValue(value, type, '');
}

/**
 * Returns `value` as Go would round-trip it: unknown keys dropped, zero values of
 * non-omitempty fields filled in, quantities canonical. The result is what upstream
 * stores in a revision's `data`.
 */
export function normalizeGoJson(value: unknown, type: string = SERVING_RUNTIME_SPEC_TYPE): JsonValue {
  return JSON.parse(marshalGoJson(value, type)) as JsonValue;
}
