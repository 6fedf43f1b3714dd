/**
 * The three patch formats of the API server: JSON merge patch (RFC 7386), JSON patch
 * (RFC 6902, with `test`), and strategic merge patch for built-in kinds, which merges
 * the lists our code touches by their merge keys (containers and env by `name`, ports
 * by `containerPort`, conditions by `type`, …) and honours the `$patch`, `$retainKeys`,
 * `$setElementOrder` and `$deleteFromPrimitiveList` directives that kubectl sends.
 */
import jsonPatch, { type Operation } from 'fast-json-patch';
import { badRequest, unprocessable } from './api-errors';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/**
 * Merge keys by field path, list indexes elided: `spec.template.spec.containers` →
 * `{ mergeKey: 'name' }`; `metadata.finalizers` → `{ primitiveMerge: true }`.
 */
export type StrategicMergeKeys = Record<string, { mergeKey?: string; primitiveMerge?: boolean }>;

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Sets a key as an own data property. A patch's `__proto__` key (JSON.parse makes it an
 * own property) must stay a plain key, as in Go's maps, where validation then refuses
 * it; `object[key] = value` would instead replace the object's prototype.
 */
function setOwn(object: JsonObject, key: string, value: Json): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

/** RFC 7386: objects merge key by key, `null` deletes, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else setOwn(result, key, applyMergePatch(Object.hasOwn(result, key) ? result[key] : undefined, value) as Json);
  }
  return result;
}

interface JsonPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  from?: string;
  value?: unknown;
}

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/** Checks the shape of a JSON patch document; 400 BadRequest when it is not one. */
export function decodeJsonPatch(patch: unknown): JsonPatchOperation[] {
  if (!Array.isArray(patch)) {
    const jsonKind = typeof patch === 'boolean' ? 'bool' : typeof patch === 'string' || typeof patch === 'number' ? typeof patch : 'object';
    throw badRequest(`error decoding patch: json: cannot unmarshal ${jsonKind} into Go value of type []handlers.jsonPatchOp`);
  }
  return patch.map((raw: unknown) => {
    if (!isObject(raw) || typeof raw.op !== 'string' || !OPS.has(raw.op)) {
      throw badRequest(`Unexpected kind: ${isObject(raw) && typeof raw.op === 'string' ? raw.op : 'unknown'}`);
    }
    if (typeof raw.path !== 'string') throw badRequest(`${raw.op} operation does not apply: doc is missing path: "${String(raw.path)}"`);
    const op: JsonPatchOperation = { op: raw.op as JsonPatchOperation['op'], path: raw.path };
    if ('value' in raw) op.value = raw.value;
    if (typeof raw.from === 'string') op.from = raw.from;
    if ((op.op === 'add' || op.op === 'replace' || op.op === 'test') && !('value' in raw)) {
      throw badRequest(`${op.op} operation does not apply: doc is missing value`);
    }
    if ((op.op === 'move' || op.op === 'copy') && op.from === undefined) {
      throw badRequest(`${op.op} operation does not apply: doc is missing from path`);
    }
    return op;
  });
}

/**
 * RFC 6902, applied by fast-json-patch with its prototype guard on: a path through
 * `__proto__` or `constructor/prototype` is refused instead of reaching the process's
 * Object.prototype. An operation that does not apply (missing path, failed `test`, a
 * banned path) is 422 as on a real server; the target is never modified.
 */
export function applyJsonPatch(target: unknown, patch: unknown): unknown {
  const ops = decodeJsonPatch(patch);
  try {
    return jsonPatch.applyPatch(structuredClone(target), ops as Operation[], true, true, true).newDocument;
  } catch {
    throw unprocessable();
  }
}

const SET_ORDER = '$setElementOrder/';
const DELETE_FROM_PRIMITIVE = '$deleteFromPrimitiveList/';

/**
 * The order apimachinery's strategic merge gives a merged list (`normalizeElementOrder`):
 * the items the patch names, in the patch's order, interleaved with the items only the
 * server had, in their old order, each server item placed before the first patch item
 * it preceded on the server. A new item thus comes before the server's items that follow it.
 */
function inPatchOrder(merged: Json[], patch: Json[], original: Json[], keyOf: (item: Json) => string): Json[] {
  const patchKeys = patch.map(keyOf);
  const serverKeys = original.map(keyOf);
  const byOrder = (order: string[]) => (a: Json, b: Json): number => {
    const ia = order.indexOf(keyOf(a));
    const ib = order.indexOf(keyOf(b));
    return ia >= 0 && ib >= 0 ? ia - ib : 0;
  };
  const fromPatch = merged.filter((item) => patchKeys.includes(keyOf(item))).sort(byOrder(patchKeys));
  const serverOnly = merged.filter((item) => !patchKeys.includes(keyOf(item))).sort(byOrder(serverKeys));
  const result: Json[] = [];
  let left = 0;
  let right = 0;
  while (left < serverOnly.length || right < fromPatch.length) {
    const server = serverOnly[left];
    const patched = fromPatch[right];
    if (patched === undefined || (server !== undefined && serverKeys.indexOf(keyOf(server)) >= 0 && serverKeys.indexOf(keyOf(patched)) >= 0 && serverKeys.indexOf(keyOf(server)) < serverKeys.indexOf(keyOf(patched)))) {
      result.push(server as Json);
      left += 1;
    } else {
      result.push(patched);
      right += 1;
    }
  }
  return result;
}

class StrategicMerger {
  constructor(private readonly keys: StrategicMergeKeys) {}

  mergeMap(original: JsonObject | undefined, patch: JsonObject, path: string): JsonObject | undefined {
    if (patch.$patch === 'replace') {
      const replaced = { ...patch };
      delete replaced.$patch;
      return replaced;
    }
    if (patch.$patch === 'delete') return undefined;
    const result: JsonObject = { ...(original ?? {}) };
    const retain = patch.$retainKeys;
    if (Array.isArray(retain)) {
      for (const key of Object.keys(result)) if (!retain.includes(key) && !(key in patch)) delete result[key];
    }
    const orders: Array<[string, Json[]]> = [];
    for (const [key, value] of Object.entries(patch)) {
      if (key === '$patch' || key === '$retainKeys') continue;
      if (key.startsWith(SET_ORDER)) {
        if (Array.isArray(value)) orders.push([key.slice(SET_ORDER.length), value]);
        continue;
      }
      if (key.startsWith(DELETE_FROM_PRIMITIVE)) {
        const field = key.slice(DELETE_FROM_PRIMITIVE.length);
        const current = result[field];
        if (Array.isArray(current) && Array.isArray(value)) result[field] = current.filter((item) => !value.includes(item));
        continue;
      }
      this.mergeField(result, key, value, path === '' ? key : `${path}.${key}`);
    }
    for (const [field, order] of orders) this.applyOrder(result, field, order, path === '' ? field : `${path}.${field}`);
    return result;
  }

  private mergeField(result: JsonObject, key: string, value: Json, childPath: string): void {
    if (value === null) {
      delete result[key];
      return;
    }
    const current = Object.hasOwn(result, key) ? result[key] : undefined;
    if (isObject(value)) {
      const merged = this.mergeMap(isObject(current) ? current : undefined, value, childPath);
      if (merged === undefined) delete result[key];
      else setOwn(result, key, merged);
      return;
    }
    if (Array.isArray(value)) {
      setOwn(result, key, this.mergeList(Array.isArray(current) ? current : [], value, childPath));
      return;
    }
    setOwn(result, key, value);
  }

  private mergeList(original: Json[], patch: Json[], path: string): Json[] {
    const rule = this.keys[path];
    if (patch.some((item) => isObject(item) && item.$patch === 'replace')) {
      return patch.filter((item) => !(isObject(item) && item.$patch === 'replace'));
    }
    if (rule?.primitiveMerge) {
      const result = [...original];
      for (const item of patch) if (!result.some((existing) => JSON.stringify(existing) === JSON.stringify(item))) result.push(item);
      return inPatchOrder(result, patch, original, (item) => JSON.stringify(item));
    }
    const mergeKey = rule?.mergeKey;
    if (!mergeKey) return patch.map((item) => (isObject(item) ? this.stripDirectives(item, path) : item));
    const result = this.mergeByKey(original, patch, path, mergeKey);
    const keyOf = (item: Json): string => JSON.stringify(isObject(item) ? item[mergeKey] : item);
    return inPatchOrder(result, patch.filter((item) => !(isObject(item) && item.$patch === 'delete')), original, keyOf);
  }

  private mergeByKey(original: Json[], patch: Json[], path: string, mergeKey: string): Json[] {
    const result = [...original];
    for (const item of patch) {
      if (!isObject(item)) continue;
      const index = result.findIndex((existing) => isObject(existing) && existing[mergeKey] === item[mergeKey]);
      if (item.$patch === 'delete') {
        if (index >= 0) result.splice(index, 1);
        continue;
      }
      if (index >= 0) {
        const merged = this.mergeMap(result[index] as JsonObject, item, path);
        if (merged === undefined) result.splice(index, 1);
        else result[index] = merged;
      } else {
        result.push(this.stripDirectives(item, path));
      }
    }
    return result;
  }

  private stripDirectives(item: JsonObject, path: string): JsonObject {
    return this.mergeMap(undefined, item, path) ?? {};
  }

  private applyOrder(result: JsonObject, field: string, order: Json[], path: string): void {
    const list = result[field];
    if (!Array.isArray(list)) return;
    const mergeKey = this.keys[path]?.mergeKey;
    const keyOf = (item: Json): string =>
      JSON.stringify(mergeKey && isObject(item) ? item[mergeKey] : item);
    const wanted = order.map((item) => keyOf(item));
    const position = (item: Json): number => {
      const at = wanted.indexOf(keyOf(item));
      return at === -1 ? Number.MAX_SAFE_INTEGER : at;
    };
    result[field] = list
      .map((item, index) => ({ item, index }))
      .sort((a, b) => position(a.item) - position(b.item) || a.index - b.index)
      .map(({ item }) => item);
  }
}

/** Strategic merge patch for a built-in kind; lists without a merge key are replaced. */
export function applyStrategicMergePatch(target: unknown, patch: unknown, keys: StrategicMergeKeys): unknown {
  if (!isObject(patch)) throw badRequest('the request body for a strategic merge patch must be a JSON object');
  const merged = new StrategicMerger(keys).mergeMap(isObject(target) ? structuredClone(target) : {}, patch, '');
  return merged ?? {};
}
