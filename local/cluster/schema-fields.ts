/**
 * A structural schema as a flat list of field paths, each with a short descriptor of what
 * the API server does there: its type, whether it keeps unknown fields, its enum and how
 * many CEL rules it carries. Two schemas with the same list prune and validate a field
 * the same way, which is what the upstream-parity test compares (docs/upstream-schema.md).
 *
 * Paths use `.` for properties, `*` for the values of an `additionalProperties` map and
 * `[]` for array items: `status.components.*.canary.currentStep`, `status.conditions[].type`.
 */
import type { JsonSchema } from './schema';

/** `path -> descriptor`, e.g. `status.rollout.lastRun.outcome -> string enum(Completed,RolledBack,Superseded)`. */
export type SchemaFieldList = Record<string, string>;

/** What a schema node means to pruning and validation, in one comparable string. */
export function describeSchemaNode(node: JsonSchema): string {
  const parts = [node['x-kubernetes-int-or-string'] === true ? 'int-or-string' : (node.type ?? 'any')];
  if (node['x-kubernetes-preserve-unknown-fields'] === true) parts.push('preserve');
  if (node.enum) parts.push(`enum(${node.enum.map(String).join(',')})`);
  const rules = node['x-kubernetes-validations'];
  if (Array.isArray(rules) && rules.length > 0) parts.push(`rules(${rules.length})`);
  return parts.join(' ');
}

/** True when `path` is `root` or lies below it. */
export function isUnder(path: string, root: string): boolean {
  return path === root || path.startsWith(`${root}.`) || path.startsWith(`${root}[`);
}

/**
 * Every field of `schema` that lies under one of `roots` (paths as above; a root may be a
 * single leaf such as `spec.engine.minReplicas`), sorted by path. The root object itself
 * (an empty path) is never listed.
 */
export function listSchemaFields(schema: JsonSchema, roots: readonly string[]): SchemaFieldList {
  const fields: SchemaFieldList = {};
  const visit = (node: JsonSchema, path: string): void => {
    const selected = roots.some((root) => isUnder(path, root));
    const onTheWay = roots.some((root) => isUnder(root, path));
    if (!selected && !onTheWay) return;
    if (selected) fields[path] = describeSchemaNode(node);
    for (const [key, child] of Object.entries(node.properties ?? {})) visit(child, path === '' ? key : `${path}.${key}`);
    if (typeof node.additionalProperties === 'object') visit(node.additionalProperties, `${path}.*`);
    if (node.items) visit(node.items, `${path}[]`);
  };
  for (const [key, child] of Object.entries(schema.properties ?? {})) visit(child, key);
  return Object.fromEntries(Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
