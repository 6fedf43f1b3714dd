import { InvalidInputError } from '../errors';
import {
  goBool,
  goFloat,
  goInt,
  goIntOrString,
  goMap,
  goPointer,
  goRaw,
  goSlice,
  goString,
  goStruct,
  goTypeName,
  marshalGoJson as marshalTyped,
  type GoDecoding,
  type GoField,
  type GoType,
  type JsonValue,
} from '../go-json';
import { quoteGoString } from '../go-string';
import { GO_ALIASES, GO_STRUCTS, type GoFieldSpec } from './go-types';
import { canonicalizeQuantity } from './quantity';

/**
 * The runtime's Go types for the one Go-JSON encoder (shared/domain/go-json.ts). Upstream OME
 * hashes `json.Marshal(ServingRuntimeSpec)`, so to agree on revision names the schema
 * comes from the type table in `go-types.ts`: struct fields in declaration order,
 * embedded (`inline`) structs promoted in place with Go's rule that a shallower or
 * tagged field hides a clashing one, quantities canonicalised. Input keys match
 * case-insensitively and a value that cannot decode is reported in Go's own words, as
 * the controller's decoder would.
 */

export type { JsonValue } from '../go-json';

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

/** `resource.Quantity`, a struct: always written, in its canonical form. */
const GO_QUANTITY: GoType = {
  kind: 'scalar',
  name: 'resource.Quantity',
  zero: '"0"',
  encode: (value, fail) => (typeof value === 'string' || typeof value === 'number' ? quoteGoString(canonicalizeQuantity(value)) : fail()),
};

/** `metav1.Time`, a struct: a nil time is written as `null`. */
const GO_TIME: GoType = {
  kind: 'scalar',
  name: 'metav1.Time',
  zero: 'null',
  encode: (value, fail) => (typeof value === 'string' ? quoteGoString(value) : fail()),
};

/** `[]byte`, base64 text in JSON: empty when nil or of length zero. */
const GO_BYTES: GoType = {
  kind: 'scalar',
  name: '[]byte',
  zero: 'null',
  encode: (value, fail) => (typeof value === 'string' ? quoteGoString(value) : fail()),
  isEmpty: (value) => value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0),
};

const SCALARS: Readonly<Record<string, GoType>> = {
  string: goString,
  bool: goBool,
  int: goInt,
  float: goFloat,
  quantity: GO_QUANTITY,
  intstr: goIntOrString,
  time: GO_TIME,
  bytes: GO_BYTES,
  raw: goRaw,
};

const compiled = new Map<string, GoType>();

/** The encoder's type for a type expression of the table (`[]core.Container`, `*int`, …). */
function goTypeOf(expression: string): GoType {
  const type = resolveGoType(expression);
  const cached = compiled.get(type);
  if (cached) return cached;
  let result: GoType;
  if (type.startsWith('*')) result = goPointer(goTypeOf(type.slice(1)));
  else if (type.startsWith('[]')) result = goSlice(goTypeOf(type.slice(2)));
  else if (type.startsWith('map[string]')) result = goMap(goTypeOf(type.slice('map[string]'.length)));
  else {
    let fields: readonly GoField[] | undefined;
    const flatten = (): readonly GoField[] =>
      (fields ??= flattenGoStruct(type).map((field) => ({ name: field.json, type: goTypeOf(field.type), omitempty: field.omitEmpty })));
    result = SCALARS[type] ?? goStruct(flatten, type);
  }
  compiled.set(type, result);
  return result;
}

/** Go's decoder: keys folded for case, and its `json: cannot unmarshal` wording. */
const GO_DECODING: GoDecoding = {
  root: '',
  foldKeyCase: true,
  message: (path, type, value) => `json: cannot unmarshal ${JSON.stringify(value)} into ${path || 'value'} of type ${goTypeName(type)}`,
};

/**
 * Returns the exact bytes (as a string) that Go's `json.Marshal` writes for `value`
 * decoded into the Go type `type` (default: a ServingRuntimeSpec).
 * @throws InvalidInputError when a value cannot decode into its Go field type
 */
export function marshalGoJson(value: unknown, type: string = SERVING_RUNTIME_SPEC_TYPE): string {
  return marshalTyped(value, goTypeOf(type), GO_DECODING);
}

/**
 * Returns `value` as Go would round-trip it: unknown keys dropped, zero values of
 * non-omitempty fields filled in, quantities canonical. The result is what upstream
 * stores in a revision's `data`.
 */
export function normalizeGoJson(value: unknown, type: string = SERVING_RUNTIME_SPEC_TYPE): JsonValue {
  return JSON.parse(marshalGoJson(value, type)) as JsonValue;
}
