import { flattenGoStruct, resolveGoType, SERVING_RUNTIME_SPEC_TYPE, type JsonValue } from './go-json';

/**
 * Kubernetes strategic merge of one JSON document onto another, driven by the patch
 * strategies in the Go type table: lists tagged `merge` merge item by item on their merge
 * key (`name`, `containerPort`, `mountPath`, …), every other list (`command`, `args`,
 * `tolerations`) is replaced, maps and structs merge key by key, scalars are replaced.
 *
 * Item order follows apimachinery: the child's items in the child's order, with the
 * parent-only items woven in where the parent had them, so a child that adds a container
 * puts it before the parent's remaining ones.
 */

type JsonObject = { [key: string]: JsonValue };

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Returns a copy with every null-valued object key removed, as upstream strips the child. */
export function stripJsonNulls(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(stripJsonNulls);
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    if (item !== null) out[key] = stripJsonNulls(item);
  }
  return out;
}

interface FieldInfo {
  type: string;
  mergeStrategy: boolean;
  mergeKey: string | undefined;
}

function fieldInfo(containerType: string | undefined, key: string): FieldInfo | undefined {
  if (!containerType) return undefined;
  const type = resolveGoType(containerType.replace(/^\*/, ''));
  if (type.startsWith('map[string]')) {
    return { type: type.slice('map[string]'.length), mergeStrategy: false, mergeKey: undefined };
  }
  if (type.startsWith('[]') || !/^[a-z]+\./.test(type)) return undefined;
  const field = flattenGoStruct(type).find((f) => f.json === key);
  return field && { type: field.type, mergeStrategy: field.mergeStrategy, mergeKey: field.mergeKey };
}

function elementType(type: string | undefined): string | undefined {
  if (!type) return undefined;
  const resolved = resolveGoType(type.replace(/^\*/, ''));
  return resolved.startsWith('[]') ? resolved.slice(2) : undefined;
}

function sameKey(a: JsonValue, b: JsonValue): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function keyOf(item: JsonValue, mergeKey: string | undefined): JsonValue {
  return mergeKey !== undefined && isObject(item) ? (item[mergeKey] ?? null) : item;
}

/** apimachinery's mergeSortedSlice: weave parent-only items into the child's order. */
function orderMerged(parentOnly: JsonValue[], fromChild: JsonValue[], parent: JsonValue[], mergeKey: string | undefined): JsonValue[] {
  const position = (item: JsonValue): number => parent.findIndex((p) => sameKey(keyOf(p, mergeKey), keyOf(item, mergeKey)));
  const out: JsonValue[] = [];
  let i = 0;
  let j = 0;
  while (i < parentOnly.length || j < fromChild.length) {
    const left = parentOnly[i];
    const right = fromChild[j];
    if (right === undefined || (left !== undefined && position(left) >= 0 && position(right) >= 0 && position(left) < position(right))) {
      out.push(left as JsonValue);
      i += 1;
    } else {
      out.push(right);
      j += 1;
    }
  }
  return out;
}

function mergeList(parent: JsonValue[], child: JsonValue[], itemType: string | undefined, mergeKey: string | undefined): JsonValue[] {
  const scalar = child.every((item) => !isObject(item)) && parent.every((item) => !isObject(item));
  const merged = [...parent];
  if (scalar) {
    for (const item of child) if (!merged.some((m) => sameKey(m, item))) merged.push(item);
  } else {
    for (const item of child) {
      const index = merged.findIndex((m) => sameKey(keyOf(m, mergeKey), keyOf(item, mergeKey)));
      if (index >= 0 && index < parent.length) merged[index] = mergeValues(merged[index] as JsonValue, item, itemType);
      else merged.push(item);
    }
  }
  const key = scalar ? undefined : mergeKey;
  const childKeys = child.map((item) => keyOf(item, key));
  const childIndex = (item: JsonValue) => childKeys.findIndex((k) => sameKey(k, keyOf(item, key)));
  const fromChild = merged.filter((m) => childIndex(m) >= 0).sort((a, b) => childIndex(a) - childIndex(b));
  return orderMerged(merged.filter((m) => childIndex(m) < 0), fromChild, parent, key);
}

/** Merges `child` onto `parent`, where both are values of Go type `type` (when known). */
function mergeValues(parent: JsonValue, child: JsonValue, type: string | undefined): JsonValue {
  if (isObject(parent) && isObject(child)) {
    const out: JsonObject = { ...parent };
    // The child arrives without nulls (strategicMergeSpec strips them), so every key it
    // has sets or merges; a parent value that is missing or not an object is replaced.
    for (const [key, value] of Object.entries(child)) {
      const info = fieldInfo(type, key);
      const existing = out[key];
      if (Array.isArray(existing) && Array.isArray(value)) {
        out[key] = info?.mergeStrategy ? mergeList(existing, value, elementType(info.type), info.mergeKey) : value;
      } else {
        out[key] = mergeValues(existing ?? null, value, info?.type);
      }
    }
    return out;
  }
  return child;
}

/**
 * Overlays a child spec onto its parent as upstream's inheritance does: both are first
 * brought to Go's shape (the caller passes Go-normalised JSON), the child's nulls are
 * stripped so a field the child leaves unset keeps the parent's value, then the child is
 * strategic-merged on top.
 */
export function strategicMergeSpec(parent: JsonValue, child: JsonValue, type: string = SERVING_RUNTIME_SPEC_TYPE): JsonValue {
  return mergeValues(parent, stripJsonNulls(child), type);
}
