/**
 * Structural schemas of custom resources, applied the way the apiextensions server does
 * on every write: unknown fields are pruned (reported so `fieldValidation=Strict` can
 * refuse them and `Warn` can return a warning) at every level that does not keep them
 * (`x-kubernetes-preserve-unknown-fields`, which a typed property below it does not
 * inherit), nulls the schema does not allow are dropped, defaults are filled in, then types,
 * `required`, `enum`, bounds and lengths are validated, and the CEL rules of
 * `x-kubernetes-validations` are evaluated with `self` bound to the value (rules outside
 * the evaluator's subset are skipped; `oldSelf` transition rules are not supported).
 */
import { fieldError, OMIT_VALUE, type FieldError } from './api-errors';
import { CelEvaluationError, CelUnsupportedError, compileCel } from './cel';

export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  additionalProperties?: JsonSchema | boolean;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  description?: string;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  [extension: string]: unknown;
}

export interface SchemaOutcome {
  /** Type, required, enum, bound and length errors, in the order the walk meets them. */
  errors: FieldError[];
  /** Failed `x-kubernetes-validations` rules; reported only when nothing blocks them (see `validationErrors`). */
  ruleErrors: FieldError[];
  /** Whether the schema declares any `x-kubernetes-validations` rule (kube-apiserver then builds a CEL validator). */
  hasRules: boolean;
  /** Paths of fields dropped because the schema does not declare them, e.g. `spec.foo`, sorted. */
  unknownFields: string[];
}

/** Errors that keep kube-apiserver from running a CRD's CEL rules at all (its `hasBlockingErr`). */
const BLOCKING_ERRORS = new Set<FieldError['type']>(['FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueTypeInvalid']);

/**
 * The errors of one write as the apiextensions strategy orders them: object meta and schema
 * errors first; then, when the schema has rules, either their failures or, if an earlier
 * error is of a blocking kind, one error saying the rules were not checked.
 */
export function validationErrors(earlier: FieldError[], outcome: SchemaOutcome): FieldError[] {
  const errors = [...earlier, ...outcome.errors];
  if (!outcome.hasRules) return errors;
  if (errors.some((error) => BLOCKING_ERRORS.has(error.type))) {
    return [...errors, fieldError('FieldValueInvalid', '<nil>', null, 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation')];
  }
  return [...errors, ...outcome.ruleErrors];
}

const rulesBySchema = new WeakMap<JsonSchema, boolean>();

function declaresRules(schema: JsonSchema): boolean {
  const known = rulesBySchema.get(schema);
  if (known !== undefined) return known;
  const children = [...Object.values(schema.properties ?? {}), ...(schema.items ? [schema.items] : []), ...(typeof schema.additionalProperties === 'object' ? [schema.additionalProperties] : [])];
  const found = Array.isArray(schema['x-kubernetes-validations']) || children.some(declaresRules);
  rulesBySchema.set(schema, found);
  return found;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function typeMatches(schema: JsonSchema, value: unknown): boolean {
  if (schema['x-kubernetes-int-or-string']) return typeof value === 'string' || Number.isInteger(value);
  switch (schema.type) {
    case undefined:
      return true;
    case 'object':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    default:
      return true;
  }
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

class SchemaWalker {
  readonly errors: FieldError[] = [];
  readonly ruleErrors: FieldError[] = [];
  readonly unknownFields: string[] = [];

  walk(value: unknown, schema: JsonSchema, path: string): void {
    if (value === null) {
      if (!schema.nullable) this.typeError(value, schema, path);
      return;
    }
    if (!typeMatches(schema, value)) {
      this.typeError(value, schema, path);
      return;
    }
    this.checkScalar(value, schema, path);
    if (isPlainObject(value)) this.walkObject(value, schema, path);
    else if (Array.isArray(value)) this.walkArray(value, schema, path);
    this.checkRules(value, schema, path);
  }

  /** `x-kubernetes-validations`, after pruning and defaulting below this level, as the apiextensions server orders them. */
  private checkRules(value: unknown, schema: JsonSchema, path: string): void {
    const rules = schema['x-kubernetes-validations'];
    if (!Array.isArray(rules)) return;
    for (const entry of rules as Array<{ rule?: unknown; message?: unknown }>) {
      if (typeof entry.rule !== 'string' || entry.rule.includes('oldSelf')) continue;
      let passed: unknown;
      try {
        passed = compileCel(entry.rule).evaluate({ self: value });
      } catch (error) {
        if (error instanceof CelUnsupportedError) continue;
        if (!(error instanceof CelEvaluationError)) throw error;
        passed = false;
      }
      if (passed === true) continue;
      const message = typeof entry.message === 'string' && entry.message !== '' ? entry.message : `failed rule: ${entry.rule}`;
      this.ruleErrors.push(fieldError('FieldValueInvalid', path, OMIT_VALUE, message));
    }
  }

  private typeError(value: unknown, schema: JsonSchema, path: string): void {
    const expected = schema['x-kubernetes-int-or-string'] ? 'integer or string' : (schema.type ?? 'object');
    const actual = jsonType(value);
    this.errors.push(fieldError('FieldValueTypeInvalid', path, actual, `${path} in body must be of type ${expected}: "${actual}"`));
  }

  private checkScalar(value: unknown, schema: JsonSchema, path: string): void {
    if (schema.enum && !schema.enum.some((allowed) => JSON.stringify(allowed) === JSON.stringify(value))) {
      const supported = schema.enum.map((v) => JSON.stringify(v)).join(', ');
      this.errors.push(fieldError('FieldValueNotSupported', path, value, `supported values: ${supported}`));
    }
    if (typeof value === 'number') this.checkNumber(value, schema, path);
    if (typeof value === 'string') this.checkString(value, schema, path);
    if (Array.isArray(value)) {
      if (schema.maxItems !== undefined && value.length > schema.maxItems) {
        this.errors.push({ type: 'FieldValueTooMany', field: path, message: `${path}: Too many: ${value.length}: must have at most ${schema.maxItems} items` });
      }
      if (schema.minItems !== undefined && value.length < schema.minItems) {
        this.errors.push(fieldError('FieldValueInvalid', path, value.length, `${path} in body should have at least ${schema.minItems} items`));
      }
    }
  }

  private checkNumber(value: number, schema: JsonSchema, path: string): void {
    if (schema.minimum !== undefined && (value < schema.minimum || (schema.exclusiveMinimum && value === schema.minimum))) {
      const rel = schema.exclusiveMinimum ? 'greater than' : 'greater than or equal to';
      this.errors.push(fieldError('FieldValueInvalid', path, value, `${path} in body should be ${rel} ${schema.minimum}`));
    }
    if (schema.maximum !== undefined && (value > schema.maximum || (schema.exclusiveMaximum && value === schema.maximum))) {
      const rel = schema.exclusiveMaximum ? 'less than' : 'less than or equal to';
      this.errors.push(fieldError('FieldValueInvalid', path, value, `${path} in body should be ${rel} ${schema.maximum}`));
    }
  }

  private checkString(value: string, schema: JsonSchema, path: string): void {
    if (schema.minLength !== undefined && value.length < schema.minLength) {
      this.errors.push(fieldError('FieldValueInvalid', path, value, `${path} in body should be at least ${schema.minLength} chars long`));
    }
    if (schema.maxLength !== undefined && value.length > schema.maxLength) {
      this.errors.push({ type: 'FieldValueTooLong', field: path, message: `${path}: Too long: may not be more than ${schema.maxLength} bytes` });
    }
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) {
      this.errors.push(fieldError('FieldValueInvalid', path, value, `${path} in body should match '${schema.pattern}'`));
    }
  }

  private walkObject(value: Record<string, unknown>, schema: JsonSchema, path: string): void {
    const properties = schema.properties ?? {};
    const additional = schema.additionalProperties;
    const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true || additional === true;
    for (const key of Object.keys(value)) {
      if (path === '' && (key === 'metadata' || key === 'apiVersion' || key === 'kind')) continue;
      const child = properties[key] ?? (typeof additional === 'object' ? additional : undefined);
      if (child) {
        // A null where the schema does not allow one is dropped before defaulting, as the
        // apiextensions server does; a default then fills the field.
        if (value[key] === null && !child.nullable) delete value[key];
        else this.walk(value[key], child, join(path, key));
      } else if (!preserve && !schema['x-kubernetes-embedded-resource']) {
        this.unknownFields.push(join(path, key));
        delete value[key];
      }
    }
    for (const [key, child] of Object.entries(properties)) {
      if (child.default !== undefined && !(key in value)) {
        value[key] = structuredClone(child.default);
        this.walk(value[key], child, join(path, key));
      }
    }
    for (const key of schema.required ?? []) {
      if (!(key in value)) this.errors.push(fieldError('FieldValueRequired', join(path, key), undefined));
    }
  }

  private walkArray(value: unknown[], schema: JsonSchema, path: string): void {
    if (!schema.items) return;
    value.forEach((item, index) => this.walk(item, schema.items as JsonSchema, `${path}[${index}]`));
  }
}

/**
 * Prunes, defaults and validates `object` in place against a CRD version's
 * `openAPIV3Schema`. `metadata`, `apiVersion` and `kind` at the root are left to the
 * generic object-meta validation.
 */
export function applyStructuralSchema(object: Record<string, unknown>, schema: JsonSchema | undefined): SchemaOutcome {
  const walker = new SchemaWalker();
  if (schema) walker.walk(object, schema, '');
  // kube-apiserver's pruning reports the dropped paths sorted.
  return { errors: walker.errors, ruleErrors: walker.ruleErrors, hasRules: schema !== undefined && declaresRules(schema), unknownFields: [...walker.unknownFields].sort() };
}
