/**
 * Labels on a cluster's registry record, and the selectors that choose clusters by them
 * (`kubectl ome admin fleet sync --selector env=prod,region=eu`). Keys, values and the
 * selector grammar are Kubernetes' own (apimachinery's labels package), so an operator
 * writes what `kubectl get -l` takes. Pure.
 */
import { InvalidInputError } from '../errors';

/** Labels one record may carry: enough for environment, region, tier and the like, and a bound on the item's size. */
export const MAX_CLUSTER_LABELS = 64;
/** A selector longer than this is refused before it is parsed. */
export const MAX_SELECTOR_LENGTH = 4096;

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const MAX_NAME = 63;
const MAX_PREFIX = 253;

export type ClusterLabels = Record<string, string>;

/** Why `key` is not a label key, or undefined when it is one. */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix === '' || prefix.length > MAX_PREFIX || !DNS_SUBDOMAIN.test(prefix))) {
    return `the prefix of label key "${key}" must be a DNS subdomain of at most ${MAX_PREFIX} characters (lowercase letters, digits, "-" and ".")`;
  }
  if (name === '' || name.length > MAX_NAME || !NAME.test(name)) {
    return `label key "${key}" must be at most ${MAX_NAME} characters of letters, digits, "-", "_" and ".", beginning and ending with a letter or digit, after an optional DNS prefix and "/"`;
  }
  return undefined;
}

/** Why `value` is not a label value, or undefined when it is one (the empty value is one). */
export function labelValueProblem(key: string, value: string): string | undefined {
  if (value === '' || (value.length <= MAX_NAME && NAME.test(value))) return undefined;
  return `the value "${value}" of label "${key}" must be empty or at most ${MAX_NAME} characters of letters, digits, "-", "_" and ".", beginning and ending with a letter or digit`;
}

function checkLabel(key: string, value: string): void {
  const problem = labelKeyProblem(key) ?? labelValueProblem(key, value);
  if (problem) throw new InvalidInputError(problem);
}

/**
 * A label edit as `kubectl label` takes it: `key=value` sets, `key-` removes. Refuses a
 * malformed key or value, and the same key twice.
 */
export interface LabelEdit {
  set: ClusterLabels;
  remove: string[];
}

export function parseLabelEdits(words: readonly string[]): LabelEdit {
  const edit: LabelEdit = { set: {}, remove: [] };
  const seen = new Set<string>();
  for (const word of words) {
    const equals = word.indexOf('=');
    const removal = equals < 0 && word.endsWith('-');
    if (equals < 0 && !removal) throw new InvalidInputError(`"${word}" is not a label: write key=value to set one, or key- to remove it`);
    const key = removal ? word.slice(0, -1) : word.slice(0, equals);
    if (seen.has(key)) throw new InvalidInputError(`label "${key}" is given more than once`);
    seen.add(key);
    if (removal) {
      const problem = labelKeyProblem(key);
      if (problem) throw new InvalidInputError(problem);
      edit.remove.push(key);
    } else {
      const value = word.slice(equals + 1);
      checkLabel(key, value);
      edit.set[key] = value;
    }
  }
  return edit;
}

/** `env=prod,region=eu` (the form of `--labels`) as labels; an empty text is no labels. */
export function parseLabelList(text: string): ClusterLabels {
  const words = text.split(',').map((word) => word.trim()).filter((word) => word !== '');
  const edit = parseLabelEdits(words);
  if (edit.remove.length > 0) throw new InvalidInputError(`"${edit.remove[0] ?? ''}-" removes a label; --labels takes key=value pairs only`);
  return checkLabelCount(edit.set);
}

/**
 * The labels after an edit. A value that would change needs `overwrite`, as `kubectl label`
 * asks for `--overwrite`; removing a label the record lacks is no error.
 */
export function applyLabelEdit(current: ClusterLabels, edit: LabelEdit, overwrite: boolean): ClusterLabels {
  const next: ClusterLabels = { ...current };
  for (const [key, value] of Object.entries(edit.set)) {
    const existing = current[key];
    if (existing !== undefined && existing !== value && !overwrite) throw new InvalidInputError(`'${key}' already has a value (${existing}), and --overwrite is false`);
    next[key] = value;
  }
  for (const key of edit.remove) delete next[key];
  return checkLabelCount(next);
}

function checkLabelCount(labels: ClusterLabels): ClusterLabels {
  const count = Object.keys(labels).length;
  if (count > MAX_CLUSTER_LABELS) throw new InvalidInputError(`a cluster may carry at most ${MAX_CLUSTER_LABELS} labels; this would give it ${count}`);
  return labels;
}

/** `env=prod,region=eu`, keys in order, as `kubectl get --show-labels` prints them. */
export function formatLabels(labels: ClusterLabels | undefined): string {
  const entries = Object.entries(labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length === 0 ? '<none>' : entries.map(([key, value]) => `${key}=${value}`).join(',');
}

export type Requirement =
  | { key: string; operator: 'exists' | 'doesNotExist' }
  | { key: string; operator: 'equals' | 'notEquals'; value: string }
  | { key: string; operator: 'in' | 'notIn'; values: string[] };

/** A parsed selector: every requirement must hold. The empty selector selects everything. */
export interface ClusterSelector {
  text: string;
  requirements: Requirement[];
}

const KEY_TOKEN = '([^\\s!=(),]+)';
const EXISTS = new RegExp(`^${KEY_TOKEN}$`);
const DOES_NOT_EXIST = new RegExp(`^!\\s*${KEY_TOKEN}$`);
const EQUALITY = new RegExp(`^${KEY_TOKEN}\\s*(==|=|!=)\\s*([^\\s!=(),]*)$`);
const SET = new RegExp(`^${KEY_TOKEN}\\s+(in|notin)\\s*\\(([^()]*)\\)$`);

/** Splits at the commas outside parentheses; unbalanced parentheses are an error. */
function splitRequirements(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (char === '(') depth += 1;
    else if (char === ')') depth -= 1;
    if (depth < 0 || depth > 1) throw new InvalidInputError(`selector "${text}": unbalanced parentheses`);
    if (char === ',' && depth === 0) {
      parts.push(text.slice(start, index));
      start = index + 1;
    }
  }
  if (depth !== 0) throw new InvalidInputError(`selector "${text}": unbalanced parentheses`);
  parts.push(text.slice(start));
  return parts.map((part) => part.trim());
}

function parseRequirement(part: string, text: string): Requirement {
  const fail = (why: string): never => {
    throw new InvalidInputError(`selector "${text}": ${why}`);
  };
  if (part === '') fail('an empty requirement (two commas, or one at either end)');
  const key = (candidate: string): string => {
    const problem = labelKeyProblem(candidate);
    return problem ? fail(problem) : candidate;
  };
  const value = (candidate: string, ofKey: string): string => {
    const problem = labelValueProblem(ofKey, candidate);
    return problem ? fail(problem) : candidate;
  };
  let match = DOES_NOT_EXIST.exec(part);
  if (match) return { key: key(match[1] as string), operator: 'doesNotExist' };
  match = EXISTS.exec(part);
  if (match) return { key: key(match[1] as string), operator: 'exists' };
  match = EQUALITY.exec(part);
  if (match) {
    const name = key(match[1] as string);
    return { key: name, operator: match[2] === '!=' ? 'notEquals' : 'equals', value: value(match[3] as string, name) };
  }
  match = SET.exec(part);
  if (match) {
    const name = key(match[1] as string);
    const values = (match[3] as string).split(',').map((entry) => entry.trim());
    if (values.length === 1 && values[0] === '') fail(`"${part}" names no values`);
    return { key: name, operator: match[2] === 'in' ? 'in' : 'notIn', values: values.map((entry) => value(entry, name)) };
  }
  return fail(`"${part}" is not a requirement: write key=value, key!=value, key in (a,b), key notin (a,b), key or !key`);
}

/** Parses a label selector as `kubectl get -l` takes it (equality and set-based requirements). */
export function parseClusterSelector(text: string): ClusterSelector {
  if (text.length > MAX_SELECTOR_LENGTH) throw new InvalidInputError(`a selector may be at most ${MAX_SELECTOR_LENGTH} characters; this one has ${text.length}`);
  const trimmed = text.trim();
  if (trimmed === '') return { text: '', requirements: [] };
  return { text: trimmed, requirements: splitRequirements(trimmed).map((part) => parseRequirement(part, trimmed)) };
}

function holds(requirement: Requirement, labels: ClusterLabels): boolean {
  const has = Object.hasOwn(labels, requirement.key);
  const actual = labels[requirement.key];
  switch (requirement.operator) {
    case 'exists':
      return has;
    case 'doesNotExist':
      return !has;
    case 'equals':
      return has && actual === requirement.value;
    case 'notEquals':
      return !has || actual !== requirement.value;
    case 'in':
      return has && requirement.values.includes(actual as string);
    case 'notIn':
      return !has || !requirement.values.includes(actual as string);
  }
}

/** True when `labels` meet every requirement (as Kubernetes: `!=` and `notin` also select a cluster without the key). */
export function selectorMatches(selector: ClusterSelector, labels: ClusterLabels | undefined): boolean {
  const present = labels ?? {};
  return selector.requirements.every((requirement) => holds(requirement, present));
}
