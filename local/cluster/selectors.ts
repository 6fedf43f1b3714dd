/**
 * Label and field selectors with the grammar of apimachinery's `labels.Parse` and
 * `fields.ParseSelector`: `=`, `==`, `!=`, `in (…)`, `notin (…)`, `key`, `!key`, `>`/`<`.
 */
import { badRequest } from './api-errors';

export type LabelRequirement =
  | { key: string; op: 'exists' | 'notexists' }
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'gt' | 'lt'; value: number };

export type LabelSelector = LabelRequirement[];

/** Splits on commas that are not inside parentheses. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth += 1;
    if (ch === ')') depth -= 1;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string, text: string): string {
  if (!LABEL_KEY.test(key) || key.length > 316) {
    throw badRequest(`unable to parse requirement: <nil>: Invalid value: "${key}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') (in "${text}")`);
  }
  return key;
}

function checkValue(value: string): string {
  if (!LABEL_VALUE.test(value) || value.length > 63) {
    throw badRequest(`unable to parse requirement: values[0][${value}]: Invalid value: "${value}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`);
  }
  return value;
}

function parseSet(raw: string, text: string): string[] {
  const trimmed = raw.trim();
  if (!trimmed.startsWith('(') || !trimmed.endsWith(')')) {
    throw badRequest(`unable to parse requirement: found '${trimmed}', expected: '('`);
  }
  const inner = trimmed.slice(1, -1).trim();
  if (inner === '') throw badRequest(`unable to parse requirement: for 'in', 'notin' operators, values set can't be empty (in "${text}")`);
  return inner.split(',').map((v) => checkValue(v.trim()));
}

function parseRequirement(part: string, text: string): LabelRequirement {
  const trimmed = part.trim();
  const setMatch = /^(\S+)\s+(in|notin)\s*(\(.*\))$/.exec(trimmed);
  if (setMatch) {
    const [, key = '', op, set = ''] = setMatch;
    return { key: checkKey(key, text), op: op === 'in' ? 'in' : 'notin', values: parseSet(set, text) };
  }
  const opMatch = /^([^=!<>\s]+)\s*(==|=|!=|>|<)\s*(.*)$/.exec(trimmed);
  if (opMatch) {
    const [, key = '', op = '', value = ''] = opMatch;
    checkKey(key, text);
    if (op === '>' || op === '<') {
      const n = Number(value.trim());
      if (!Number.isInteger(n)) throw badRequest(`unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer`);
      return { key, op: op === '>' ? 'gt' : 'lt', value: n };
    }
    const v = checkValue(value.trim());
    return { key, op: op === '!=' ? 'notin' : 'in', values: [v] };
  }
  if (trimmed.startsWith('!')) return { key: checkKey(trimmed.slice(1).trim(), text), op: 'notexists' };
  if (/^\S+$/.test(trimmed)) return { key: checkKey(trimmed, text), op: 'exists' };
  throw badRequest(`unable to parse requirement: found '${trimmed}', expected: in, notin, =, ==, !=, gt, lt`);
}

/** Parses a label selector; an empty or missing one selects everything. Throws 400 on bad syntax. */
export function parseLabelSelector(text: string | undefined | null): LabelSelector {
  if (text === undefined || text === null || text.trim() === '') return [];
  return splitTopLevel(text).map((part) => {
    if (part.trim() === '') throw badRequest(`unable to parse requirement: found '', expected: identifier (in "${text}")`);
    return parseRequirement(part, text);
  });
}

export function matchesLabels(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const source = labels ?? {};
  return selector.every((req) => {
    const has = Object.prototype.hasOwnProperty.call(source, req.key);
    const value = source[req.key];
    switch (req.op) {
      case 'exists':
        return has;
      case 'notexists':
        return !has;
      case 'in':
        return has && req.values.includes(value ?? '');
      case 'notin':
        return !has || !req.values.includes(value ?? '');
      case 'gt':
        return has && Number.isInteger(Number(value)) && Number(value) > req.value;
      case 'lt':
        return has && Number.isInteger(Number(value)) && Number(value) < req.value;
      default:
        return false;
    }
  });
}

/** The `metav1.LabelSelector` shape (matchLabels/matchExpressions) used by webhooks and Deployments. */
export interface StructuredLabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }>;
}

export function fromStructuredSelector(selector: StructuredLabelSelector | undefined | null): LabelSelector {
  if (!selector) return [];
  const reqs: LabelSelector = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) reqs.push({ key, op: 'in', values: [value] });
  for (const expr of selector.matchExpressions ?? []) {
    if (expr.operator === 'In') reqs.push({ key: expr.key, op: 'in', values: expr.values ?? [] });
    else if (expr.operator === 'NotIn') reqs.push({ key: expr.key, op: 'notin', values: expr.values ?? [] });
    else if (expr.operator === 'Exists') reqs.push({ key: expr.key, op: 'exists' });
    else reqs.push({ key: expr.key, op: 'notexists' });
  }
  return reqs;
}

export interface FieldRequirement {
  field: string;
  op: 'eq' | 'neq';
  value: string;
}

export type FieldSelector = FieldRequirement[];

/** Undoes the escaping of `fields.EscapeValue` (`\,`, `\=`, `\\`). */
function unescapeFieldValue(value: string): string {
  return value.replace(/\\(.)/g, '$1');
}

function splitUnescaped(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i] ?? '';
    if (ch === '\\' && i + 1 < text.length) {
      current += ch + (text[i + 1] ?? '');
      i += 1;
    } else if (ch === separator) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

/**
 * Parses a field selector and checks every field against the ones the kind supports,
 * answering `field label not supported: <field>` (400) as the server does.
 */
export function parseFieldSelector(text: string | undefined | null, supported: readonly string[]): FieldSelector {
  if (text === undefined || text === null || text.trim() === '') return [];
  return splitUnescaped(text, ',').map((part) => {
    const match = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/s.exec(part.trim());
    if (!match) throw badRequest(`invalid selector: '${text}'; can't understand '${part}'`);
    const [, field = '', op, value = ''] = match;
    if (!supported.includes(field)) throw badRequest(`field label not supported: ${field}`);
    return { field, op: op === '!=' ? 'neq' : 'eq', value: unescapeFieldValue(value) };
  });
}

export function matchesFields(selector: FieldSelector, fields: (field: string) => string): boolean {
  return selector.every((req) => (fields(req.field) === req.value) === (req.op === 'eq'));
}
