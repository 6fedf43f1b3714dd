/**
 * Object-meta and per-kind validation with the field paths and messages of the real
 * server's validators (names, labels, annotations, Deployments, CRDs).
 */
import { isDeepStrictEqual } from 'node:util';
import { fieldError, type FieldError } from './api-errors';
import type { KubeObject } from './registry';
import { fromStructuredSelector, matchesLabels, type StructuredLabelSelector } from './selectors';

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MESSAGE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** A kind's own name rule: RFC 1123 subdomain (most), label (namespaces) or only a path segment (RBAC kinds). */
export type NameRule = 'subdomain' | 'label' | 'path';

/** Problems with a name as `ValidateObjectMeta` words them; empty when valid. */
export function nameProblems(name: string, rule: NameRule): string[] {
  const problems: string[] = [];
  if (rule === 'path') return pathSegmentProblems(name);
  if (rule === 'label') {
    if (name.length > 63) problems.push('must be no more than 63 characters');
    if (!DNS1123_LABEL.test(name)) problems.push(LABEL_MESSAGE);
  } else {
    if (name.length > 253) problems.push('must be no more than 253 characters');
    if (!DNS1123_SUBDOMAIN.test(name)) problems.push(SUBDOMAIN_MESSAGE);
  }
  return problems;
}

/**
 * apimachinery's `path.IsValidPathSegmentName`: a name the server puts into a URL path or a
 * storage key. `.` and `..` would turn an object path into its collection's (or its
 * namespace's) path once a client or proxy normalises the URL.
 */
export function pathSegmentProblems(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  return ['/', '%'].filter((part) => name.includes(part)).map((part) => `may not contain '${part}'`);
}

function qualifiedNameProblems(key: string): string[] {
  const parts = key.split('/');
  const problems: string[] = [];
  let name = key;
  if (parts.length === 2) {
    const [prefix = '', rest = ''] = parts;
    name = rest;
    if (prefix === '') problems.push('prefix part must be non-empty');
    else if (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) problems.push(`prefix part ${SUBDOMAIN_MESSAGE}`);
  } else if (parts.length > 2) {
    return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"];
  }
  if (name === '') problems.push('name part must be non-empty');
  else if (name.length > 63) problems.push('name part must be no more than 63 characters');
  else if (!QUALIFIED_NAME.test(name)) {
    problems.push("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  }
  return problems;
}

function labelErrors(labels: unknown, path: string): FieldError[] {
  if (labels === undefined || labels === null) return [];
  if (typeof labels !== 'object' || Array.isArray(labels)) return [fieldError('FieldValueInvalid', path, labels, 'must be a map of strings')];
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(labels as Record<string, unknown>)) {
    const problems = qualifiedNameProblems(key);
    if (problems.length > 0) errors.push(fieldError('FieldValueInvalid', path, key, problems.join(', ')));
    if (typeof value !== 'string') {
      errors.push(fieldError('FieldValueInvalid', `${path}`, value, 'label values must be strings'));
    } else if (value.length > 63 || !LABEL_VALUE.test(value)) {
      const detail = value.length > 63
        ? 'must be no more than 63 characters'
        : "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
      errors.push(fieldError('FieldValueInvalid', path, value, detail));
    }
  }
  return errors;
}

function annotationErrors(annotations: unknown, path: string): FieldError[] {
  if (annotations === undefined || annotations === null) return [];
  if (typeof annotations !== 'object' || Array.isArray(annotations)) return [fieldError('FieldValueInvalid', path, annotations, 'must be a map of strings')];
  const errors: FieldError[] = [];
  let size = 0;
  for (const [key, value] of Object.entries(annotations as Record<string, unknown>)) {
    const problems = qualifiedNameProblems(key.toLowerCase());
    if (problems.length > 0) errors.push(fieldError('FieldValueInvalid', path, key, problems.join(', ')));
    if (typeof value !== 'string') errors.push(fieldError('FieldValueInvalid', path, value, 'annotation values must be strings'));
    size += key.length + (typeof value === 'string' ? value.length : 0);
  }
  if (size > 256 * 1024) errors.push({ type: 'FieldValueTooLong', field: path, message: `${path}: Too long: must have at most 262144 bytes` });
  return errors;
}

/** `ValidateObjectMeta`: name (or generateName), labels and annotations. */
export function validateObjectMeta(object: KubeObject, rule: NameRule): FieldError[] {
  const meta = object.metadata;
  const errors: FieldError[] = [];
  if (!meta.name) {
    errors.push(fieldError('FieldValueRequired', 'metadata.name', undefined, 'name or generateName is required'));
  } else {
    const problems = nameProblems(meta.name, rule);
    // kube-apiserver's BeforeCreate runs the common path-segment check after the kind's own
    // rule, so `..` is refused even for a kind whose own rule would let it through.
    if (problems.length === 0) problems.push(...pathSegmentProblems(meta.name));
    if (problems.length > 0) errors.push(fieldError('FieldValueInvalid', 'metadata.name', meta.name, problems.join(', ')));
  }
  errors.push(...labelErrors(meta.labels, 'metadata.labels'));
  errors.push(...annotationErrors(meta.annotations, 'metadata.annotations'));
  if (meta.finalizers !== undefined && !Array.isArray(meta.finalizers)) {
    errors.push(fieldError('FieldValueInvalid', 'metadata.finalizers', meta.finalizers, 'must be a list of strings'));
  }
  return errors;
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The checks of `ValidateDeployment` that catch malformed manifests. */
export function validateDeployment(object: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const spec = record(object.spec);
  const template = record(spec.template);
  const templateLabels = record(record(template.metadata).labels) as Record<string, string>;
  if (spec.replicas !== undefined && (!Number.isInteger(spec.replicas) || (spec.replicas as number) < 0)) {
    errors.push(fieldError('FieldValueInvalid', 'spec.replicas', spec.replicas, 'must be greater than or equal to 0'));
  }
  const selector = spec.selector as StructuredLabelSelector | undefined;
  // A selector with an invalid label is refused twice (its label, then the selector), and the
  // template is not checked against it.
  const selectorErrors = selector ? labelErrors(selector.matchLabels, 'spec.selector.matchLabels') : [];
  const requirements = fromStructuredSelector(selector);
  if (selectorErrors.length > 0) {
    errors.push(...selectorErrors, fieldError('FieldValueInvalid', 'spec.selector', selector, 'invalid label selector'));
  } else if (!selector || requirements.length === 0) {
    errors.push(fieldError('FieldValueRequired', 'spec.selector', undefined));
    if (selector) errors.push(fieldError('FieldValueInvalid', 'spec.selector', selector, 'empty selector is invalid for deployment'));
  } else if (!matchesLabels(requirements, templateLabels)) {
    errors.push(fieldError('FieldValueInvalid', 'spec.template.metadata.labels', templateLabels, '`selector` does not match template `labels`'));
  }
  const containers = record(template.spec).containers;
  if (!Array.isArray(containers) || containers.length === 0) {
    errors.push(fieldError('FieldValueRequired', 'spec.template.spec.containers', undefined));
  } else {
    containers.forEach((c: unknown, i: number) => {
      const container = record(c);
      if (!container.name) errors.push(fieldError('FieldValueRequired', `spec.template.spec.containers[${i}].name`, undefined));
      if (!container.image) errors.push(fieldError('FieldValueRequired', `spec.template.spec.containers[${i}].image`, undefined));
    });
  }
  return errors;
}

/** `ValidateControllerRevision` (and its update's immutable `data`). */
export function validateControllerRevision(object: KubeObject, previous?: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  if (object.data === undefined || object.data === null) errors.push(fieldError('FieldValueRequired', 'data', undefined, 'data is mandatory'));
  if (typeof object.revision === 'number' && object.revision < 0) {
    errors.push(fieldError('FieldValueInvalid', 'revision', object.revision, 'must be greater than or equal to 0'));
  }
  if (previous && !isDeepStrictEqual(object.data, previous.data)) {
    errors.push(fieldError('FieldValueInvalid', 'data', object.data, 'field is immutable'));
  }
  return errors;
}

/** Immutable metadata on update, as `ValidateObjectMetaUpdate` reports it. */
export function validateMetaUpdate(next: KubeObject, previous: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  if (next.metadata.uid !== undefined && next.metadata.uid !== previous.metadata.uid) {
    errors.push(fieldError('FieldValueInvalid', 'metadata.uid', next.metadata.uid, 'field is immutable'));
  }
  return errors;
}
