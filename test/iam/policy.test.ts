/** The local IAM evaluator against the semantics AWS documents, case by case. */
import { describe, expect, it } from 'vitest';
import { UnsupportedConditionError, evaluatePolicy, matchesWildcard } from '../../local/iam/policy';
import type { PolicyStatement } from '../../local/iam/policy';

const TABLE = 'arn:aws:dynamodb:eu-west-1:000000000000:table/ome-pinning-dev';

describe('Function: matchesWildcard', () => {
  it.each([
    ['LEASE#*', 'LEASE#object#c1#InferenceService#ns#name', true],
    ['LEASE#*', 'LEASE#', true],
    ['LEASE#*', 'IDEMPOTENCY#LEASE#x', false],
    ['REGISTRY', 'REGISTRY', true],
    ['REGISTRY', 'REGISTRY2', false],
    ['REGISTRY', 'registry', false],
    ['prefix/*/pin-??????', 'prefix/c1/pin-AbCdEf', true],
    ['prefix/*/pin-??????', 'prefix/c1/pin-AbCdE', false],
    ['prefix/*/pin-??????', 'prefix/c1/pin-x-AbCdEf', false],
    ['prefix/*/pin-??????', 'prefix/a/b/pin-AbCdEf', true],
    ['a.b(c)', 'a.b(c)', true],
    ['a.b', 'aXb', false],
  ])('%s against %s: %s', (pattern, value, expected) => {
    expect(matchesWildcard(pattern, value)).toBe(expected);
  });

  it('ignores case only when asked (actions)', () => {
    expect(matchesWildcard('dynamodb:getitem', 'dynamodb:GetItem')).toBe(false);
    expect(matchesWildcard('dynamodb:getitem', 'dynamodb:GetItem', { ignoreCase: true })).toBe(true);
    expect(matchesWildcard('dynamodb:Get*', 'dynamodb:GetItem', { ignoreCase: true })).toBe(true);
  });
});

const leases: PolicyStatement = {
  Sid: 'Leases',
  Effect: 'Allow',
  Action: 'dynamodb:UpdateItem',
  Resource: TABLE,
  Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['LEASE#*'] } },
};
const registry: PolicyStatement = {
  Sid: 'ReadRegistry',
  Effect: 'Allow',
  Action: ['dynamodb:GetItem', 'dynamodb:Query'],
  Resource: TABLE,
  Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['REGISTRY'] } },
};

describe('Function: evaluatePolicy', () => {
  it.each([
    ['a lease update', 'dynamodb:UpdateItem', ['LEASE#k'], 'allow'],
    ['a registry read', 'dynamodb:GetItem', ['REGISTRY'], 'allow'],
    ['a registry list', 'dynamodb:Query', ['REGISTRY'], 'allow'],
    ['an update of the registry', 'dynamodb:UpdateItem', ['REGISTRY'], 'implicit-deny'],
    ['a put into the registry', 'dynamodb:PutItem', ['REGISTRY'], 'implicit-deny'],
    ['a read of a lease', 'dynamodb:GetItem', ['LEASE#k'], 'implicit-deny'],
    ['a batch of a lease and the registry', 'dynamodb:UpdateItem', ['LEASE#k', 'REGISTRY'], 'implicit-deny'],
    ['an idempotency update', 'dynamodb:UpdateItem', ['IDEMPOTENCY#k'], 'implicit-deny'],
    // ForAllValues holds for an empty set: AWS's documented trap. Only the action list keeps Scan out.
    ['a get without keys', 'dynamodb:GetItem', [], 'allow'],
    ['a scan (no keys)', 'dynamodb:Scan', [], 'implicit-deny'],
  ])('%s: %s on %j → %s', (_label, action, keys, expected) => {
    const decision = evaluatePolicy([leases, registry], { action, resource: TABLE, context: { 'dynamodb:LeadingKeys': keys } });
    expect(decision.decision).toBe(expected);
  });

  it('treats a missing key like an empty one for ForAllValues, and as no match for ForAnyValue', () => {
    const anyValue: PolicyStatement = { ...leases, Condition: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': ['LEASE#*'] } } };
    expect(evaluatePolicy([leases], { action: 'dynamodb:UpdateItem', resource: TABLE }).decision).toBe('allow');
    expect(evaluatePolicy([anyValue], { action: 'dynamodb:UpdateItem', resource: TABLE }).decision).toBe('implicit-deny');
    expect(evaluatePolicy([anyValue], { action: 'dynamodb:UpdateItem', resource: TABLE, context: { 'dynamodb:LeadingKeys': ['X', 'LEASE#1'] } }).decision).toBe('allow');
  });

  it.each([
    ['StringEquals', ['ALL_NEW'], 'allow'],
    ['StringEquals', ['NONE'], 'implicit-deny'],
    ['StringEquals', undefined, 'implicit-deny'],
    ['StringNotEquals', ['NONE'], 'allow'],
    ['StringNotEquals', ['ALL_NEW'], 'implicit-deny'],
    ['StringNotEquals', undefined, 'allow'],
    ['StringLike', ['ALL_NEW'], 'allow'],
    ['StringNotLike', ['UPDATED_NEW'], 'allow'],
    ['ForAllValues:StringNotLike', ['NONE'], 'allow'],
    ['ForAllValues:StringNotLike', ['ALL_OLD'], 'implicit-deny'],
  ] as const)('%s with ReturnValues %j → %s', (operator, values, expected) => {
    const statement: PolicyStatement = { Effect: 'Allow', Action: 'dynamodb:*', Resource: TABLE, Condition: { [operator]: { 'dynamodb:ReturnValues': operator.includes('Like') ? 'ALL_*' : 'ALL_NEW' } } };
    const context: Record<string, string[]> = values === undefined ? {} : { 'dynamodb:ReturnValues': [...values] };
    expect(evaluatePolicy([statement], { action: 'dynamodb:UpdateItem', resource: TABLE, context }).decision).toBe(expected);
  });

  it('lets an explicit Deny win over any Allow', () => {
    const deny: PolicyStatement = { Sid: 'NoRegistryWrites', Effect: 'Deny', Action: 'dynamodb:*', Resource: TABLE, Condition: { 'ForAnyValue:StringEquals': { 'dynamodb:LeadingKeys': 'REGISTRY' } } };
    const allowAll: PolicyStatement = { Effect: 'Allow', Action: '*', Resource: '*' };
    expect(evaluatePolicy([allowAll, deny], { action: 'dynamodb:PutItem', resource: TABLE, context: { 'dynamodb:LeadingKeys': ['REGISTRY'] } })).toEqual({ decision: 'explicit-deny', statement: deny });
    expect(evaluatePolicy([allowAll, deny], { action: 'dynamodb:PutItem', resource: TABLE, context: { 'dynamodb:LeadingKeys': ['LEASE#1'] } }).decision).toBe('allow');
  });

  it('matches actions regardless of case but resources exactly', () => {
    expect(evaluatePolicy([{ ...leases, Action: 'DynamoDB:updateitem' }], { action: 'dynamodb:UpdateItem', resource: TABLE, context: { 'dynamodb:LeadingKeys': ['LEASE#1'] } }).decision).toBe('allow');
    expect(evaluatePolicy([leases], { action: 'dynamodb:UpdateItem', resource: TABLE.toUpperCase(), context: { 'dynamodb:LeadingKeys': ['LEASE#1'] } }).decision).toBe('implicit-deny');
    expect(evaluatePolicy([leases], { action: 'dynamodb:UpdateItem', resource: `${TABLE}-other`, context: { 'dynamodb:LeadingKeys': ['LEASE#1'] } }).decision).toBe('implicit-deny');
  });

  it('honours NotAction and NotResource', () => {
    const notAction: PolicyStatement = { Effect: 'Allow', NotAction: ['dynamodb:Put*', 'dynamodb:Delete*'], Resource: TABLE };
    expect(evaluatePolicy([notAction], { action: 'dynamodb:GetItem', resource: TABLE }).decision).toBe('allow');
    expect(evaluatePolicy([notAction], { action: 'dynamodb:PutItem', resource: TABLE }).decision).toBe('implicit-deny');
    const notResource: PolicyStatement = { Effect: 'Allow', Action: 'dynamodb:GetItem', NotResource: `${TABLE}/index/*` };
    expect(evaluatePolicy([notResource], { action: 'dynamodb:GetItem', resource: TABLE }).decision).toBe('allow');
    expect(evaluatePolicy([notResource], { action: 'dynamodb:GetItem', resource: `${TABLE}/index/byHolder` }).decision).toBe('implicit-deny');
  });

  it.each(['NumericLessThan', 'Bool', 'IpAddress', 'StringEqualsIgnoreCase', 'Sometimes:StringLike'])('refuses to judge a %s condition', (operator) => {
    const statement: PolicyStatement = { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: TABLE, Condition: { [operator]: { 'aws:SomeKey': 'x' } } };
    expect(() => evaluatePolicy([statement], { action: 'dynamodb:GetItem', resource: TABLE, context: { 'aws:SomeKey': ['x'] } })).toThrow(UnsupportedConditionError);
  });
});
