/**
 * The defaults that OME's runtime CRDs declare, which a real API server writes into every
 * stored ServingRuntime and ClusterServingRuntime. They are part of what upstream hashes:
 * the seed's `590753e8` is the hash of its runtime with `operator: Equal` and `weight: 1`
 * filled in. Applying them before hashing gives the same revision name whether the spec
 * came from a server that defaults (any real cluster) or one that does not.
 */

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function withSelectorDefaults(selector: unknown): unknown {
  if (!isObject(selector)) return selector;
  return { ...selector, operator: selector.operator ?? 'Equal', weight: selector.weight ?? 1 };
}

function withDefaults(value: unknown, key: string | undefined): unknown {
  if (Array.isArray(value)) {
    return value.map((item) => {
      if (key === 'ports' && isObject(item) && 'containerPort' in item) {
        return withDefaults({ ...item, protocol: item.protocol ?? 'TCP' }, undefined);
      }
      if (key === 'supportedModelFormats' && isObject(item)) {
        const entry: JsonObject = { ...item };
        if ('modelFormat' in entry) entry.modelFormat = withSelectorDefaults(entry.modelFormat);
        if ('modelFramework' in entry) entry.modelFramework = withSelectorDefaults(entry.modelFramework);
        return entry;
      }
      return withDefaults(item, undefined);
    });
  }
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [childKey, child] of Object.entries(value)) out[childKey] = withDefaults(child, childKey);
  return out;
}

/**
 * Returns a copy of a runtime spec with the CRD defaults filled in where unset:
 * `supportedModelFormats[].modelFormat/modelFramework.operator` = `Equal` and `.weight` = 1,
 * and `protocol: TCP` on every container port. Values already set are kept.
 */
export function applyRuntimeSpecDefaults<T>(spec: T): T {
  return withDefaults(spec, undefined) as T;
}
