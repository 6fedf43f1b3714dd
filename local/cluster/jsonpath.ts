/**
 * The part of Kubernetes JSONPath that printer columns use: `.field`, `['field']`,
 * `[n]`, `[*]`, `.*` and filters `[?(@.path == 'literal')]`. Evaluation never throws
 * on missing keys (the server evaluates columns with missing keys allowed).
 */

type Step =
  | { kind: 'field'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'wildcard' }
  | { kind: 'slice'; start?: number; end?: number }
  | { kind: 'filter'; path: Step[]; op?: string; literal?: unknown };

function readFieldName(expr: string, start: number): [string, number] {
  let name = '';
  let i = start;
  while (i < expr.length) {
    const ch = expr[i] ?? '';
    if (ch === '\\' && i + 1 < expr.length) {
      name += expr[i + 1] ?? '';
      i += 2;
      continue;
    }
    if (ch === '.' || ch === '[') break;
    name += ch;
    i += 1;
  }
  return [name, i];
}

function findClosingBracket(expr: string, start: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = start; i < expr.length; i += 1) {
    const ch = expr[i];
    if (quote) {
      if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '[') depth += 1;
    else if (ch === ']') {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  throw new Error(`unterminated [ in ${expr}`);
}

function parseLiteral(text: string): unknown {
  const t = text.trim();
  if ((t.startsWith("'") && t.endsWith("'")) || (t.startsWith('"') && t.endsWith('"'))) return t.slice(1, -1);
  if (t === 'true') return true;
  if (t === 'false') return false;
  if (t === 'null') return null;
  const n = Number(t);
  if (t !== '' && !Number.isNaN(n)) return n;
  throw new Error(`unrecognized literal ${t}`);
}

function parseFilter(body: string): Step {
  const inner = body.replace(/^\?\(/, '').replace(/\)$/, '').trim();
  const match = /^@(\S*?)\s*(==|!=|<=|>=|<|>)\s*(.+)$/.exec(inner);
  if (match) {
    const [, path = '', op, literal = ''] = match;
    return { kind: 'filter', path: parseJsonPath(path), op, literal: parseLiteral(literal) };
  }
  if (inner.startsWith('@')) return { kind: 'filter', path: parseJsonPath(inner.slice(1)) };
  throw new Error(`unsupported filter ${body}`);
}

function parseBracket(body: string): Step {
  const t = body.trim();
  if (t === '*') return { kind: 'wildcard' };
  if (t.startsWith('?(')) return parseFilter(t);
  if ((t.startsWith("'") && t.endsWith("'")) || (t.startsWith('"') && t.endsWith('"'))) return { kind: 'field', name: t.slice(1, -1) };
  if (t.includes(':')) {
    const [a = '', b = ''] = t.split(':');
    const slice: Step = { kind: 'slice' };
    if (a.trim() !== '') slice.start = Number(a);
    if (b.trim() !== '') slice.end = Number(b);
    return slice;
  }
  const n = Number(t);
  if (Number.isInteger(n)) return { kind: 'index', index: n };
  throw new Error(`unsupported subscript [${body}]`);
}

/** Parses `.a.b[0]`, `{.a.b}` or `a.b` into steps. Throws on syntax it does not know. */
export function parseJsonPath(expression: string): Step[] {
  let expr = expression.trim();
  if (expr.startsWith('{') && expr.endsWith('}')) expr = expr.slice(1, -1).trim();
  if (expr.startsWith('$')) expr = expr.slice(1);
  const steps: Step[] = [];
  let i = 0;
  if (expr !== '' && expr[0] !== '.' && expr[0] !== '[') expr = `.${expr}`;
  while (i < expr.length) {
    const ch = expr[i];
    if (ch === '.') {
      if (expr[i + 1] === '*') {
        steps.push({ kind: 'wildcard' });
        i += 2;
        continue;
      }
      const [name, next] = readFieldName(expr, i + 1);
      if (name !== '') steps.push({ kind: 'field', name });
      i = next;
    } else if (ch === '[') {
      const close = findClosingBracket(expr, i);
      steps.push(parseBracket(expr.slice(i + 1, close)));
      i = close + 1;
    } else {
      throw new Error(`unexpected ${ch} in ${expression}`);
    }
  }
  return steps;
}

function compare(left: unknown, op: string | undefined, right: unknown): boolean {
  switch (op) {
    case '==':
      return left === right;
    case '!=':
      return left !== right;
    case '<':
      return typeof left === 'number' && typeof right === 'number' && left < right;
    case '>':
      return typeof left === 'number' && typeof right === 'number' && left > right;
    case '<=':
      return typeof left === 'number' && typeof right === 'number' && left <= right;
    case '>=':
      return typeof left === 'number' && typeof right === 'number' && left >= right;
    default:
      return false;
  }
}

function applyStep(values: unknown[], step: Step): unknown[] {
  const out: unknown[] = [];
  for (const value of values) {
    if (step.kind === 'field') {
      if (value !== null && typeof value === 'object' && !Array.isArray(value) && step.name in value) {
        out.push((value as Record<string, unknown>)[step.name]);
      }
    } else if (step.kind === 'index') {
      if (Array.isArray(value)) {
        const idx = step.index < 0 ? value.length + step.index : step.index;
        if (idx >= 0 && idx < value.length) out.push(value[idx]);
      }
    } else if (step.kind === 'wildcard') {
      if (Array.isArray(value)) out.push(...value);
      else if (value !== null && typeof value === 'object') out.push(...Object.values(value));
    } else if (step.kind === 'slice') {
      if (Array.isArray(value)) out.push(...value.slice(step.start ?? 0, step.end ?? value.length));
    } else if (Array.isArray(value)) {
      for (const item of value) {
        const found = evaluateSteps(item, step.path);
        if (step.op === undefined ? found.length > 0 : found.some((f) => compare(f, step.op, step.literal))) out.push(item);
      }
    }
  }
  return out;
}

function evaluateSteps(root: unknown, steps: Step[]): unknown[] {
  let values: unknown[] = [root];
  for (const step of steps) values = applyStep(values, step);
  return values;
}

/** All values the expression selects from `root`, in document order; missing keys give none. */
export function evaluateJsonPath(root: unknown, expression: string | Step[]): unknown[] {
  const steps = typeof expression === 'string' ? parseJsonPath(expression) : expression;
  return evaluateSteps(root, steps);
}
