/**
 * ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1), as kube-apiserver applies
 * them: each ValidatingAdmissionPolicyBinding names a policy; a request its
 * `matchConstraints` (resourceRules, namespaceSelector, objectSelector) and the binding's
 * `matchResources` select, and whose `matchConditions` all hold, must pass every
 * validation. The first failing validation of a binding whose `validationActions`
 * include Deny refuses the request with the real message,
 * `<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '<p>' with binding '<b>' denied request: <message>`;
 * `Warn` turns it into a warning. An expression that errors follows the policy's
 * failurePolicy (default Fail). Expressions are CEL evaluated by `cel.ts` (a subset,
 * checked when a policy is written). `variables` are evaluated when first used, as
 * `variables.<name>`; a `messageExpression` that fails or yields no one-line text falls
 * back to `message`, as kube-apiserver does. params and auditAnnotations are not
 * supported and are refused when a policy is written.
 */
import { ApiError, fieldError, qualifiedResourceName, type FieldError } from './api-errors';
import type { AdmissionAttributes } from './admission';
import { CelEvaluationError, compileCel, type CelProgram } from './cel';
import type { KubeObject } from './registry';
import { fromStructuredSelector, matchesLabels, type StructuredLabelSelector } from './selectors';
import type { UserInfo } from './rbac';

interface ResourceRule {
  apiGroups?: string[];
  apiVersions?: string[];
  operations?: string[];
  resources?: string[];
  scope?: string;
}

interface MatchResources {
  resourceRules?: ResourceRule[];
  excludeResourceRules?: ResourceRule[];
  namespaceSelector?: StructuredLabelSelector;
  objectSelector?: StructuredLabelSelector;
}

interface Validation {
  expression?: string;
  message?: string;
  reason?: string;
  messageExpression?: string;
}

interface PolicySpec {
  failurePolicy?: 'Fail' | 'Ignore';
  matchConstraints?: MatchResources;
  matchConditions?: Array<{ name?: string; expression?: string }>;
  validations?: Validation[];
  paramKind?: unknown;
  variables?: Array<{ name?: string; expression?: string }>;
  auditAnnotations?: unknown[];
}

interface BindingSpec {
  policyName?: string;
  validationActions?: string[];
  matchResources?: MatchResources;
  paramRef?: unknown;
}

export interface PolicySources {
  policies(): KubeObject[];
  bindings(): KubeObject[];
  namespaceLabels(name: string): Record<string, string> | undefined;
}

const REASON_CODES: Record<string, number> = { Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413, Unauthorized: 401 };

function specOf<T>(object: KubeObject): T {
  return (object.spec ?? {}) as T;
}

/** Problems with a policy this server cannot enforce as written; reported when it is written. */
export function policyErrors(policy: KubeObject): FieldError[] {
  const spec = specOf<PolicySpec>(policy);
  const errors: FieldError[] = [];
  const unsupported = (field: string, what: string): void => {
    errors.push(fieldError('FieldValueForbidden', field, undefined, `${what} is not supported by the embedded API server`));
  };
  if (spec.paramKind !== undefined) unsupported('spec.paramKind', 'paramKind');
  if ((spec.auditAnnotations ?? []).length > 0) unsupported('spec.auditAnnotations', 'auditAnnotations');
  const check = (field: string, expression: string | undefined): void => {
    try {
      compileCel(expression ?? '');
    } catch (error) {
      errors.push(fieldError('FieldValueInvalid', field, expression, `compilation failed: ${error instanceof Error ? error.message : String(error)} (the embedded API server evaluates a subset of CEL, see local/cluster/cel.ts)`));
    }
  };
  (spec.matchConditions ?? []).forEach((condition, i) => check(`spec.matchConditions[${i}].expression`, condition.expression));
  (spec.variables ?? []).forEach((variable, i) => check(`spec.variables[${i}].expression`, variable.expression));
  (spec.validations ?? []).forEach((validation, i) => {
    check(`spec.validations[${i}].expression`, validation.expression);
    if (validation.messageExpression !== undefined) check(`spec.validations[${i}].messageExpression`, validation.messageExpression);
  });
  return errors;
}

function any(list: string[] | undefined, value: string): boolean {
  return (list ?? []).some((entry) => entry === '*' || entry === value);
}

function ruleMatches(rule: ResourceRule, attrs: AdmissionAttributes): boolean {
  const { def } = attrs;
  if (!any(rule.operations, attrs.operation) || !any(rule.apiGroups, def.group) || !any(rule.apiVersions, def.version)) return false;
  const scope = rule.scope ?? '*';
  if ((scope === 'Cluster' && def.namespaced) || (scope === 'Namespaced' && !def.namespaced)) return false;
  const requested = attrs.subresource === '' ? def.plural : `${def.plural}/${attrs.subresource}`;
  return (rule.resources ?? []).some((entry) => entry === '*' || entry === requested || (attrs.subresource !== '' && entry === `*/${attrs.subresource}`) || entry === `${def.plural}/*`);
}

function selectorMatches(selector: StructuredLabelSelector | undefined, labels: Array<Record<string, string> | undefined>): boolean {
  if (selector === undefined) return true;
  const parsed = fromStructuredSelector(selector);
  return labels.some((set) => set !== undefined && matchesLabels(parsed, set));
}

/**
 * The policy's `variables`, each evaluated when first read and kept: later ones may read
 * earlier ones, and one that fails fails only the expressions that read it.
 */
function policyVariables(declared: Array<{ name?: string; expression?: string }>, scope: Record<string, unknown>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  const variablesScope = { ...scope, variables: values };
  for (const variable of declared) {
    const program = compileCel(variable.expression ?? '');
    let outcome: { value: unknown } | { error: unknown } | undefined;
    Object.defineProperty(values, variable.name ?? '', {
      enumerable: true,
      get: () => {
        if (outcome === undefined) {
          try {
            outcome = { value: program.evaluate(variablesScope) };
          } catch (error) {
            outcome = { error };
          }
        }
        if ('error' in outcome) throw outcome.error;
        return outcome.value;
      },
    });
  }
  return values;
}

/**
 * A validation's `messageExpression`, when it yields a non-blank string on one line;
 * otherwise undefined, and the server uses `message` (kube-apiserver logs the error).
 */
function messageOf(validation: Validation, run: (program: CelProgram) => unknown): string | undefined {
  if (validation.messageExpression === undefined) return undefined;
  try {
    const text = run(compileCel(validation.messageExpression));
    return typeof text === 'string' && text.trim() !== '' && !/[\r\n]/.test(text) ? text : undefined;
  } catch (error) {
    if (error instanceof CelEvaluationError) return undefined;
    throw error;
  }
}

export class PolicyAdmission {
  constructor(private readonly sources: PolicySources) {}

  private matches(match: MatchResources | undefined, attrs: AdmissionAttributes, required: boolean): boolean {
    if (match === undefined) return !required;
    if (required || match.resourceRules !== undefined) {
      if (!(match.resourceRules ?? []).some((rule) => ruleMatches(rule, attrs))) return false;
    }
    if ((match.excludeResourceRules ?? []).some((rule) => ruleMatches(rule, attrs))) return false;
    if (attrs.def.namespaced && attrs.namespace !== undefined) {
      const namespaceLabels = this.sources.namespaceLabels(attrs.namespace) ?? {};
      if (!selectorMatches(match.namespaceSelector, [namespaceLabels])) return false;
    }
    return selectorMatches(match.objectSelector, [attrs.object?.metadata.labels ?? {}, attrs.oldObject?.metadata.labels ?? {}]);
  }

  private variables(attrs: AdmissionAttributes, user: UserInfo): Record<string, unknown> {
    const { def } = attrs;
    const namespace = attrs.namespace === undefined ? undefined : this.sources.namespaceLabels(attrs.namespace);
    return {
      object: attrs.object ?? null,
      oldObject: attrs.oldObject ?? null,
      namespaceObject: namespace === undefined ? null : { metadata: { name: attrs.namespace, labels: namespace } },
      request: {
        operation: attrs.operation,
        name: attrs.name,
        namespace: attrs.namespace ?? '',
        kind: { group: def.group, version: def.version, kind: def.kind },
        resource: { group: def.group, version: def.version, resource: def.plural },
        subResource: attrs.subresource,
        dryRun: attrs.dryRun,
        userInfo: { username: user.username, groups: user.groups, ...(user.uid ? { uid: user.uid } : {}) },
      },
    };
  }

  /** Applies every bound policy to the request; resolves with warnings or throws the denial. */
  validate(attrs: AdmissionAttributes, user: UserInfo): string[] {
    const policies = new Map(this.sources.policies().map((policy) => [policy.metadata.name ?? '', policy]));
    const warnings: string[] = [];
    for (const binding of this.sources.bindings()) {
      const bindingSpec = specOf<BindingSpec>(binding);
      const policy = policies.get(bindingSpec.policyName ?? '');
      if (!policy) continue;
      const spec = specOf<PolicySpec>(policy);
      if (!this.matches(spec.matchConstraints, attrs, true) || !this.matches(bindingSpec.matchResources, attrs, false)) continue;
      const denial = this.evaluate(spec, this.variables(attrs, user));
      if (denial === undefined) continue;
      const text = `ValidatingAdmissionPolicy '${policy.metadata.name ?? ''}' with binding '${binding.metadata.name ?? ''}' denied request: ${denial.message}`;
      const actions = bindingSpec.validationActions ?? [];
      if (actions.includes('Deny')) {
        // kube-apiserver: a validation without `reason` denies as Invalid (422), the message
        // saying "is forbidden" all the same, with the policy's text as the one cause.
        const reason = denial.reason ?? 'Invalid';
        const qualified = qualifiedResourceName(attrs.def);
        throw new ApiError({
          message: `${attrs.name === '' ? qualified : `${qualified} "${attrs.name}"`} is forbidden: ${text}`,
          reason,
          details: { name: attrs.name, ...(attrs.def.group === '' ? {} : { group: attrs.def.group }), kind: attrs.def.plural, causes: [{ message: text }] },
          code: REASON_CODES[reason] ?? 422,
        });
      }
      if (actions.includes('Warn')) warnings.push(`Validation failed for ${text}`);
    }
    return warnings;
  }

  /** The first failing validation, if any; undefined when the request passes or the policy does not apply. */
  private evaluate(spec: PolicySpec, variables: Record<string, unknown>): { message: string; reason?: string } | undefined {
    const failClosed = spec.failurePolicy !== 'Ignore';
    const run = (program: CelProgram): unknown => program.evaluate(variables);
    for (const condition of spec.matchConditions ?? []) {
      const program = compileCel(condition.expression ?? '');
      try {
        if (run(program) !== true) return undefined;
      } catch (error) {
        if (!(error instanceof CelEvaluationError) || !failClosed) return undefined;
        return { message: `failed to evaluate matchCondition '${condition.name ?? ''}': ${error.message}` };
      }
    }
    const validationScope = { ...variables, variables: policyVariables(spec.variables ?? [], variables) };
    const runValidation = (program: CelProgram): unknown => program.evaluate(validationScope);
    for (const validation of spec.validations ?? []) {
      const program = compileCel(validation.expression ?? '');
      let result: unknown;
      try {
        result = runValidation(program);
      } catch (error) {
        if (!(error instanceof CelEvaluationError)) throw error;
        if (!failClosed) continue;
        return { message: `expression '${program.source}' resulted in error: ${error.message}` };
      }
      if (result !== true) {
        const message = messageOf(validation, runValidation) ?? validation.message ?? `failed expression: ${program.source}`;
        return { message, ...(validation.reason ? { reason: validation.reason } : {}) };
      }
    }
    return undefined;
  }
}
