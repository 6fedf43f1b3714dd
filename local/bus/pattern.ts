/**
 * Amazon EventBridge event patterns, evaluated locally with the semantics AWS documents
 * ("Creating event patterns", "Content filtering", "Matching null values and empty strings"),
 * so the local bus routes exactly what the rules in serverless.yml route in AWS.
 *
 * - A pattern is an object mirroring the event. A key whose value is an object matches a
 *   nested object; a key whose value is an array lists the values (or filters) a leaf may
 *   take, and matches when any of them matches. All keys must match (AND); `$or` takes a
 *   list of sub-patterns of which one must match.
 * - When the event's value is an array, the pattern matches if any element matches.
 * - Filters: exact value (string, number compared numerically, boolean, null — null and the
 *   empty string are distinct), `prefix`, `suffix` (each optionally `{equals-ignore-case}`),
 *   `equals-ignore-case`, `wildcard` (`*`, with `\*` and `\\` escapes), `anything-but`
 *   (a value, a list, or `{prefix|suffix|equals-ignore-case|wildcard}`), `exists`
 *   (leaf nodes only: an object or an empty array is not a leaf value), `numeric`.
 * - Not supported here: `cidr`. `validatePattern` says so rather than silently failing to match.
 *
 * Pure module; no I/O.
 */
import { InvalidInputError } from '../../shared/domain/errors.js';

export type PatternValue = string | number | boolean | null;
export type PatternFilter = PatternValue | Record<string, unknown>;
export interface EventPattern {
  [field: string]: EventPattern | PatternFilter[] | EventPattern[];
}

type Leaf = string | number | boolean | null;

/** A pattern that EventBridge would reject (or that this matcher cannot evaluate). */
export class InvalidPatternError extends InvalidInputError {
  readonly problems: string[];

  constructor(problems: string[]) {
    super(`invalid event pattern: ${problems.join('; ')}`);
    this.name = 'InvalidPatternError';
    this.problems = problems;
  }
}

/** True when `event` (an EventBridge envelope or any JSON object) matches `pattern`. */
export function matchesPattern(pattern: EventPattern, event: unknown): boolean {
  return matchObject(pattern, event);
}

function matchObject(pattern: EventPattern, value: unknown): boolean {
  const object = isRecord(value) ? value : undefined;
  return Object.entries(pattern).every(([key, sub]) => {
    if (key === '$or') return (sub as EventPattern[]).some((branch) => matchObject(branch, object));
    return matchField(sub as EventPattern | PatternFilter[], object?.[key]);
  });
}

function matchField(sub: EventPattern | PatternFilter[], value: unknown): boolean {
  if (Array.isArray(sub)) return matchLeaf(sub, leafValues(value));
  if (Array.isArray(value)) {
    const objects = value.filter(isRecord);
    return objects.length === 0 ? matchObject(sub, undefined) : objects.some((item) => matchObject(sub, item));
  }
  return matchObject(sub, value);
}

/** The leaf values at a field: none when absent or an object; every scalar element of an array. */
function leafValues(value: unknown): Leaf[] {
  if (value === undefined || isRecord(value)) return [];
  if (Array.isArray(value)) return value.flatMap((item) => leafValues(item));
  return [value as Leaf];
}

function matchLeaf(filters: PatternFilter[], values: Leaf[]): boolean {
  return filters.some((filter) => {
    if (isRecord(filter) && 'exists' in filter) return filter.exists === true ? values.length > 0 : values.length === 0;
    return values.some((value) => matchFilter(filter, value));
  });
}

function matchFilter(filter: PatternFilter, value: Leaf): boolean {
  if (!isRecord(filter)) return sameValue(filter, value);
  const [operator, operand] = Object.entries(filter)[0] ?? [];
  switch (operator) {
    case 'prefix':
      return typeof value === 'string' && matchAffix(operand, value, (v, p) => v.startsWith(p));
    case 'suffix':
      return typeof value === 'string' && matchAffix(operand, value, (v, s) => v.endsWith(s));
    case 'equals-ignore-case':
      return typeof value === 'string' && foldCase(value) === foldCase(String(operand));
    case 'wildcard':
      return typeof value === 'string' && wildcardRegExp(String(operand)).test(value);
    case 'numeric':
      return typeof value === 'number' && matchNumeric(operand as Array<string | number>, value);
    case 'anything-but':
      return matchAnythingBut(operand, value);
    default:
      return false;
  }
}

/** Numbers compare by value (300 matches 300.0 and 3e2); strings, booleans and null exactly. */
function sameValue(expected: PatternValue, value: Leaf): boolean {
  return expected === value;
}

function matchAffix(operand: unknown, value: string, test: (value: string, affix: string) => boolean): boolean {
  if (isRecord(operand)) return test(foldCase(value), foldCase(String(operand['equals-ignore-case'])));
  return test(value, String(operand));
}

function matchAnythingBut(operand: unknown, value: Leaf): boolean {
  if (!isRecord(operand)) {
    const excluded = Array.isArray(operand) ? (operand as PatternValue[]) : [operand as PatternValue];
    return !excluded.some((item) => sameValue(item, value));
  }
  if (typeof value !== 'string') return false;
  const [operator, inner] = Object.entries(operand)[0] ?? [];
  const list = (Array.isArray(inner) ? inner : [inner]).map(String);
  switch (operator) {
    case 'prefix':
      return !value.startsWith(String(inner));
    case 'suffix':
      return !value.endsWith(String(inner));
    case 'equals-ignore-case':
      return !list.some((item) => foldCase(item) === foldCase(value));
    case 'wildcard':
      return !list.some((item) => wildcardRegExp(item).test(value));
    default:
      return false;
  }
}

const COMPARE: Record<string, (a: number, b: number) => boolean> = {
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '=': (a, b) => a === b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
};

function matchNumeric(conditions: Array<string | number>, value: number): boolean {
  for (let i = 0; i + 1 < conditions.length; i += 2) {
    const compare = COMPARE[String(conditions[i])];
    if (!compare || !compare(value, Number(conditions[i + 1]))) return false;
  }
  return true;
}

function foldCase(value: string): string {
  return value.toLowerCase();
}

const wildcardCache = new Map<string, RegExp>();

/** `*` matches any run of characters; `\*` is a literal star and `\\` a literal backslash. */
function wildcardRegExp(wildcard: string): RegExp {
  const cached = wildcardCache.get(wildcard);
  if (cached) return cached;
  let source = '';
  for (let i = 0; i < wildcard.length; i += 1) {
    const char = wildcard[i] as string;
    if (char === '\\' && i + 1 < wildcard.length) {
      i += 1;
      source += escapeRegExp(wildcard[i] as string);
    } else {
      source += char === '*' ? '.*' : escapeRegExp(char);
    }
  }
  const compiled = new RegExp(`^${source}$`, 's');
  wildcardCache.set(wildcard, compiled);
  return compiled;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------

/**
 * Checks a pattern the way EventBridge would when a rule is created, and also rejects
 * operators this matcher does not evaluate. Throws InvalidPatternError listing every
 * problem with its path (`detail.kind[0]: …`).
 */
export function validatePattern(pattern: unknown): asserts pattern is EventPattern {
  const problems: string[] = [];
  if (!isRecord(pattern) || Object.keys(pattern).length === 0) {
    problems.push('(root): a pattern must be a non-empty JSON object');
  } else {
    checkObject(pattern, '', problems);
  }
  if (problems.length > 0) throw new InvalidPatternError(problems);
}

/** The problems `validatePattern` would report, without throwing. */
export function findPatternProblems(pattern: unknown): string[] {
  try {
    validatePattern(pattern);
    return [];
  } catch (error) {
    if (error instanceof InvalidPatternError) return error.problems;
    throw error;
  }
}

function checkObject(pattern: Record<string, unknown>, path: string, problems: string[]): void {
  for (const [key, sub] of Object.entries(pattern)) {
    const at = path === '' ? key : `${path}.${key}`;
    if (key === '$or') {
      checkOr(sub, at, problems);
    } else if (Array.isArray(sub)) {
      checkFilters(sub, at, problems);
    } else if (isRecord(sub)) {
      if (Object.keys(sub).length === 0) problems.push(`${at}: a nested pattern must not be empty`);
      checkObject(sub, at, problems);
    } else {
      problems.push(`${at}: must be an array of values or filters, or a nested object (got ${JSON.stringify(sub)})`);
    }
  }
}

function checkOr(sub: unknown, at: string, problems: string[]): void {
  if (!Array.isArray(sub) || sub.length < 2) {
    problems.push(`${at}: $or takes an array of at least two sub-patterns`);
    return;
  }
  sub.forEach((branch, index) => {
    if (!isRecord(branch) || Object.keys(branch).length === 0) {
      problems.push(`${at}[${index}]: each $or branch must be a non-empty object`);
    } else {
      checkObject(branch, `${at}[${index}]`, problems);
    }
  });
}

function checkFilters(filters: unknown[], at: string, problems: string[]): void {
  if (filters.length === 0) problems.push(`${at}: an empty array matches nothing; list at least one value or filter`);
  filters.forEach((filter, index) => {
    const problem = checkFilter(filter);
    if (problem) problems.push(`${at}[${index}]: ${problem}`);
  });
}

type FilterCheck = (operand: unknown) => string | undefined;

const FILTER_CHECKS: Record<string, FilterCheck> = {
  prefix: (operand) => checkAffix('prefix', operand),
  suffix: (operand) => checkAffix('suffix', operand),
  'equals-ignore-case': (operand) =>
    typeof operand === 'string' ? undefined : 'equals-ignore-case takes a string',
  wildcard: (operand) => (typeof operand === 'string' ? checkWildcard(operand) : 'wildcard takes a string'),
  exists: (operand) => (typeof operand === 'boolean' ? undefined : 'exists takes true or false'),
  numeric: (operand) => checkNumeric(operand),
  'anything-but': (operand) => checkAnythingBut(operand),
  cidr: () => 'the cidr filter is not supported by this matcher',
};

function checkFilter(filter: unknown): string | undefined {
  if (filter === null || ['string', 'number', 'boolean'].includes(typeof filter)) return undefined;
  if (!isRecord(filter)) return `unsupported filter ${JSON.stringify(filter)}`;
  const entries = Object.entries(filter);
  if (entries.length !== 1) return `a filter object has exactly one operator (got ${JSON.stringify(filter)})`;
  const [operator, operand] = entries[0] as [string, unknown];
  const check = FILTER_CHECKS[operator];
  if (!check) return `unsupported operator "${operator}"`;
  return check(operand);
}

function checkAffix(operator: string, operand: unknown): string | undefined {
  if (typeof operand === 'string') return undefined;
  if (isRecord(operand) && Object.keys(operand).length === 1 && typeof operand['equals-ignore-case'] === 'string') {
    return undefined;
  }
  return `${operator} takes a string or {"equals-ignore-case": string}`;
}

function checkWildcard(operand: string): string | undefined {
  if (/(?<!\\)\*\*/.test(operand.replace(/\\\\/g, ''))) return 'wildcard must not contain consecutive * characters';
  if (/\\(?![*\\])/.test(operand.replace(/\\\\/g, ''))) return 'wildcard only escapes * and \\';
  return undefined;
}

const LOWER = new Set(['>', '>=']);
const UPPER = new Set(['<', '<=']);

function checkNumeric(operand: unknown): string | undefined {
  if (!Array.isArray(operand) || operand.length === 0 || operand.length % 2 !== 0 || operand.length > 4) {
    return 'numeric takes one or two [operator, number] pairs';
  }
  const ops = operand.filter((_, i) => i % 2 === 0).map(String);
  const values = operand.filter((_, i) => i % 2 === 1);
  if (ops.some((op) => !(op in COMPARE))) return `numeric operators are < <= = > >= (got ${ops.join(', ')})`;
  if (values.some((value) => typeof value !== 'number' || !Number.isFinite(value))) return 'numeric bounds must be numbers';
  if (ops.length === 2) {
    const [first, second] = ops as [string, string];
    const [low, high] = values as [number, number];
    const range = LOWER.has(first) && UPPER.has(second);
    if (!range) return 'a numeric range is a lower bound (> or >=) followed by an upper bound (< or <=)';
    if (low >= high) return `numeric range is empty (${low} .. ${high})`;
  }
  return undefined;
}

function checkAnythingBut(operand: unknown): string | undefined {
  if (typeof operand === 'string' || typeof operand === 'number') return undefined;
  if (Array.isArray(operand)) {
    if (operand.length === 0) return 'anything-but takes a non-empty list';
    const allStrings = operand.every((item) => typeof item === 'string');
    const allNumbers = operand.every((item) => typeof item === 'number');
    return allStrings || allNumbers ? undefined : 'anything-but lists hold only strings or only numbers';
  }
  if (!isRecord(operand)) return 'anything-but takes a value, a list, or one of prefix, suffix, equals-ignore-case, wildcard';
  const entries = Object.entries(operand);
  const [operator, inner] = (entries[0] ?? []) as [string | undefined, unknown];
  if (entries.length !== 1 || operator === undefined) return 'anything-but takes exactly one nested operator';
  if (operator === 'prefix' || operator === 'suffix') {
    return typeof inner === 'string' ? undefined : `anything-but ${operator} takes a string`;
  }
  if (operator === 'equals-ignore-case' || operator === 'wildcard') {
    const items = Array.isArray(inner) ? inner : [inner];
    if (items.length === 0 || items.some((item) => typeof item !== 'string')) {
      return `anything-but ${operator} takes a string or a list of strings`;
    }
    return operator === 'wildcard' ? items.map((item) => checkWildcard(item as string)).find(Boolean) : undefined;
  }
  return `anything-but does not support "${operator}"`;
}
