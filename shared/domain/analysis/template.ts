/**
 * Analysis query templates. Upstream renders each metric's `query` with Go's
 * text/template over a fixed context (`missingkey=error`); every documented query uses
 * only `{{.Field}}` actions, so the plane renders that subset: field references with
 * optional spaces and trim markers (`{{- .Namespace -}}`) and comments. Any other action
 * (pipelines, functions, `if`/`range`, variables) is a template error naming it, as an
 * unknown field is, so a query never runs half-rendered.
 */
import { InvalidInputError } from '../errors';

/** The values a query may reference, named as upstream's TemplateContext names them. */
export interface QueryTemplateVars {
  readonly Namespace: string;
  readonly ISVCName: string;
  readonly Component: string;
  readonly CanaryService: string;
  readonly StableService: string;
  readonly CanaryRevision: string;
  readonly StableRevision: string;
}

export const TEMPLATE_FIELDS: readonly (keyof QueryTemplateVars)[] = [
  'Namespace',
  'ISVCName',
  'Component',
  'CanaryService',
  'StableService',
  'CanaryRevision',
  'StableRevision',
];

/** A query template that does not render; the message reads like Go's (`template: promql:…`). */
export class QueryTemplateError extends InvalidInputError {
  constructor(message: string) {
    super(message);
    this.name = 'QueryTemplateError';
  }
}

/** Go's template name upstream parses with; it appears in every error message. */
const TEMPLATE_NAME = 'promql';
/** The Go type upstream's field errors name. */
const CONTEXT_TYPE = 'analysis.TemplateContext';

const FIELD = /^\.([A-Za-z_][A-Za-z0-9_]*)$/;
const COMMENT = /^\/\*[\s\S]*\*\/$/;

/**
 * `<isvc>-<component>-rev-<hash>`: the per-revision Service a query can name as
 * `{{.CanaryService}}` / `{{.StableService}}` (upstream's PerRevisionServiceName).
 */
export function perRevisionServiceName(isvcName: string, component: string, revision: string): string {
  return `${isvcName}-${component}-rev-${revision}`;
}

/**
 * Renders a metric query: each `{{.Field}}` becomes its value. Throws QueryTemplateError
 * for an unknown field, an unclosed action, or any action outside the subset.
 */
export function renderQuery(template: string, vars: QueryTemplateVars): string {
  let out = '';
  let at = 0;
  while (at < template.length) {
    const open = template.indexOf('{{', at);
    if (open < 0) {
      out += template.slice(at);
      break;
    }
    let text = template.slice(at, open);
    let inner = open + 2;
    // Go's trim markers need a space: `{{- x}}` trims, `{{-3}}` is the number -3.
    if (/^-[ \t\r\n]/.test(template.slice(inner, inner + 2))) {
      text = text.replace(/[ \t\r\n]+$/, '');
      inner += 1;
    }
    out += text;
    const close = template.indexOf('}}', inner);
    if (close < 0) throw new QueryTemplateError(`template: ${TEMPLATE_NAME}:${lineOf(template, open)}: unclosed action`);
    let end = close;
    let trimAfter = false;
    if (/[ \t\r\n]-$/.test(template.slice(inner, close))) {
      end = close - 1;
      trimAfter = true;
    }
    out += renderAction(template, inner, end, vars);
    at = close + 2;
    if (trimAfter) {
      while (at < template.length && /[ \t\r\n]/.test(template.charAt(at))) at += 1;
    }
  }
  return out;
}

function renderAction(template: string, start: number, end: number, vars: QueryTemplateVars): string {
  const raw = template.slice(start, end);
  const action = raw.trim();
  if (COMMENT.test(action)) return '';
  const field = FIELD.exec(action);
  if (!field) {
    const shown = action === '' ? 'empty action' : `action {{${action}}}`;
    throw new QueryTemplateError(
      `template: ${TEMPLATE_NAME}:${lineOf(template, start)}: unsupported ${shown}: a query may use only {{.Field}} with ${TEMPLATE_FIELDS.join(', ')}`,
    );
  }
  const name = field[1] ?? '';
  if (!(TEMPLATE_FIELDS as readonly string[]).includes(name)) {
    const position = start + raw.indexOf('.');
    throw new QueryTemplateError(
      `template: ${TEMPLATE_NAME}:${goPosition(template, position)}: executing "${TEMPLATE_NAME}" at <.${name}>: can't evaluate field ${name} in type ${CONTEXT_TYPE}`,
    );
  }
  return vars[name as keyof QueryTemplateVars];
}

function lineOf(text: string, position: number): number {
  return 1 + (text.slice(0, position).match(/\n/g)?.length ?? 0);
}

/** Go's ErrorContext location: line, then the byte offset within it (the offset itself on line 1). */
function goPosition(text: string, position: number): string {
  const before = text.slice(0, position);
  const newline = before.lastIndexOf('\n');
  const column = newline < 0 ? position : position - (newline + 1);
  return `${lineOf(text, position)}:${column}`;
}
