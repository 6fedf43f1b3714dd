/**
 * IAM identity-policy evaluation, the part our roles use: Allow and Deny statements with
 * Action/NotAction and Resource/NotResource (wildcards `*` and `?`), and the condition
 * operators StringEquals, StringLike and their negations, each also with the set qualifiers
 * `ForAllValues:` and `ForAnyValue:`. An explicit Deny wins over any Allow; without a
 * matching Allow a request is denied (implicit deny), as in AWS. Pure module: no I/O.
 *
 * A condition operator outside that list is an error, not a silent match, so a statement
 * this evaluator cannot judge never grants anything by accident.
 */

import { InvalidInputError } from '../../shared/domain/errors';

export type Effect = 'Allow' | 'Deny';

/** A condition block: operator → context key → value(s). */
export type PolicyCondition = Record<string, Record<string, string | string[]>>;

export interface PolicyStatement {
  Sid?: string;
  Effect: Effect;
  Action?: string | string[];
  NotAction?: string | string[];
  /** Concrete ARNs (patterns): CloudFormation functions must be resolved before evaluation. */
  Resource?: string | string[];
  NotResource?: string | string[];
  Condition?: PolicyCondition;
}

/** One authorisation question: may the principal do `action` on `resource`, given the context keys? */
export interface AuthorizationRequest {
  /** `service:Operation`, for example `dynamodb:PutItem`. */
  action: string;
  resource: string;
  /** Condition context keys, each a list of values (a single-valued key is a list of one); an absent key is missing. */
  context?: Record<string, string[]>;
}

export type Decision =
  | { decision: 'allow'; statement: PolicyStatement }
  | { decision: 'explicit-deny'; statement: PolicyStatement }
  | { decision: 'implicit-deny' };

/** A condition operator this evaluator does not implement. */
export class UnsupportedConditionError extends InvalidInputError {
  constructor(operator: string) {
    super(`condition operator ${operator} is not supported by the local policy evaluator`);
    this.name = 'UnsupportedConditionError';
  }
}

const asList = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

function escapeRegExp(text: string): string {
  return text.replace(/[.+^${}()|[\]\\]/g, '\\$&');
}

/**
 * IAM's wildcard match: `*` is any run of characters (slashes included), `?` exactly one.
 * Actions compare case-insensitively, ARNs and condition values case-sensitively.
 */
export function matchesWildcard(pattern: string, value: string, options: { ignoreCase?: boolean } = {}): boolean {
  const source = `^${escapeRegExp(pattern).replace(/\*/g, '[\\s\\S]*').replace(/\?/g, '[\\s\\S]')}$`;
  return new RegExp(source, options.ignoreCase ? 'i' : '').test(value);
}

type ValueTest = (value: string, pattern: string) => boolean;

const VALUE_TESTS: Record<string, ValueTest> = {
  StringEquals: (value, pattern) => value === pattern,
  StringLike: (value, pattern) => matchesWildcard(pattern, value),
};

/** One operator on one key: `ForAllValues:StringLike`, `StringNotEquals`, … */
function evaluateOperator(operator: string, expected: string[], values: string[] | undefined): boolean {
  const [qualifier, bare] = operator.includes(':') ? (operator.split(':', 2) as [string, string]) : [undefined, operator];
  const negated = bare.includes('Not');
  const test = VALUE_TESTS[bare.replace('Not', '')];
  if (test === undefined || (qualifier !== undefined && qualifier !== 'ForAllValues' && qualifier !== 'ForAnyValue')) {
    throw new UnsupportedConditionError(operator);
  }
  const matchesOne = (value: string): boolean => expected.some((pattern) => test(value, pattern));
  if (qualifier === 'ForAllValues') {
    // True for a missing or empty key: the classic trap, and AWS's documented behaviour.
    return (values ?? []).every((value) => (negated ? !matchesOne(value) : matchesOne(value)));
  }
  if (qualifier === 'ForAnyValue') {
    return (values ?? []).some((value) => (negated ? !matchesOne(value) : matchesOne(value)));
  }
  // A single-valued operator: a missing key fails a positive test and passes a negated one.
  if (values === undefined || values.length === 0) return negated;
  const [value] = values as [string];
  return negated ? !matchesOne(value) : matchesOne(value);
}

function conditionHolds(condition: PolicyCondition | undefined, context: Record<string, string[]>): boolean {
  if (condition === undefined) return true;
  return Object.entries(condition).every(([operator, keys]) =>
    Object.entries(keys).every(([key, expected]) => evaluateOperator(operator, asList(expected), context[key])),
  );
}

function actionMatches(statement: PolicyStatement, action: string): boolean {
  const matchesAny = (patterns: string[]) => patterns.some((pattern) => matchesWildcard(pattern, action, { ignoreCase: true }));
  if (statement.NotAction !== undefined) return !matchesAny(asList(statement.NotAction));
  return matchesAny(asList(statement.Action));
}

function resourceMatches(statement: PolicyStatement, resource: string): boolean {
  const matchesAny = (patterns: string[]) => patterns.some((pattern) => matchesWildcard(pattern, resource));
  if (statement.NotResource !== undefined) return !matchesAny(asList(statement.NotResource));
  return matchesAny(asList(statement.Resource));
}

/** Whether the statement applies to the request (its effect aside). */
export function statementMatches(statement: PolicyStatement, request: AuthorizationRequest): boolean {
  return actionMatches(statement, request.action) && resourceMatches(statement, request.resource) && conditionHolds(statement.Condition, request.context ?? {});
}

/**
 * Evaluates identity-policy statements for one request: an explicit Deny wins, else the
 * first matching Allow, else an implicit deny.
 */
export function evaluatePolicy(statements: readonly PolicyStatement[], request: AuthorizationRequest): Decision {
  const matching = statements.filter((statement) => statementMatches(statement, request));
  const deny = matching.find((statement) => statement.Effect === 'Deny');
  if (deny) return { decision: 'explicit-deny', statement: deny };
  const allow = matching.find((statement) => statement.Effect === 'Allow');
  return allow ? { decision: 'allow', statement: allow } : { decision: 'implicit-deny' };
}
