import { describe, expect, it } from 'vitest';
import { InvalidPatternError, findPatternProblems, matchesPattern, validatePattern } from '../../local/bus/pattern.js';
import type { EventPattern } from '../../local/bus/pattern.js';

/** The EC2 state-change event AWS's pattern documentation uses throughout. */
const ec2Event = {
  version: '0',
  id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
  'detail-type': 'EC2 Instance State-change Notification',
  source: 'aws.ec2',
  account: '111122223333',
  time: '2017-12-22T18:43:48Z',
  region: 'us-west-1',
  resources: ['arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0'],
  detail: { 'instance-id': 'i-1234567890abcdef0', state: 'terminated' },
};

/** The null/empty-string example event of "Matching null values and empty strings". */
const nullEvent = {
  ...ec2Event,
  resources: [],
  detail: { eventVersion: '', responseElements: null },
};

const detailOf = (detail: Record<string, unknown>) => ({ ...ec2Event, detail });

type Row = [string, EventPattern, unknown, boolean];

const rows: Row[] = [
  // Exact matching and AND across fields.
  ['documented EC2 termination pattern', { source: ['aws.ec2'], 'detail-type': ['EC2 Instance State-change Notification'], detail: { state: ['terminated'] } }, ec2Event, true],
  ['one value of a list', { detail: { state: ['pending', 'terminated'] } }, ec2Event, true],
  ['all fields must match', { source: ['aws.ec2'], detail: { state: ['running'] } }, ec2Event, false],
  ['missing field never matches a value', { detail: { absent: ['x'] } }, ec2Event, false],
  ['case matters for exact match', { detail: { state: ['Terminated'] } }, ec2Event, false],
  ['nested structure must mirror the event', { state: ['terminated'] }, ec2Event, false],
  ['numbers compare by value', { detail: { n: [300] } }, detailOf({ n: 300.0 }), true],
  ['a number does not match its string form', { detail: { n: ['300'] } }, detailOf({ n: 300 }), false],
  ['booleans match exactly', { detail: { flag: [true] } }, detailOf({ flag: true }), true],
  ['false is not true', { detail: { flag: [true] } }, detailOf({ flag: false }), false],
  ['an object is not a leaf value', { detail: [ 'x' ] }, ec2Event, false],
  // Arrays in the event.
  ['array field matches when any element matches', { resources: ['arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0'] }, ec2Event, true],
  ['array field fails when no element matches', { resources: ['arn:other'] }, ec2Event, false],
  ['array of objects: any element', { detail: { items: { kind: ['b'] } } }, detailOf({ items: [{ kind: 'a' }, { kind: 'b' }] }), true],
  // Null and empty string.
  ['empty string matches empty string', { detail: { eventVersion: [''] } }, nullEvent, true],
  ['null matches null', { detail: { responseElements: [null] } }, nullEvent, true],
  ['empty string does not match null', { detail: { responseElements: [''] } }, nullEvent, false],
  ['null does not match empty string', { detail: { eventVersion: [null] } }, nullEvent, false],
  ['null does not match a missing field', { detail: { absent: [null] } }, nullEvent, false],
  // Prefix / suffix / ignore case.
  ['prefix', { time: [{ prefix: '2017-12-22' }] }, ec2Event, true],
  ['prefix mismatch', { time: [{ prefix: '2018' }] }, ec2Event, false],
  ['prefix ignore case', { detail: { service: [{ prefix: { 'equals-ignore-case': 'EventB' } }] } }, detailOf({ service: 'eventbridge' }), true],
  ['suffix', { detail: { FileName: [{ suffix: '.png' }] } }, detailOf({ FileName: 'image.png' }), true],
  ['suffix is case sensitive', { detail: { FileName: [{ suffix: '.png' }] } }, detailOf({ FileName: 'image.PNG' }), false],
  ['suffix ignore case', { detail: { FileName: [{ suffix: { 'equals-ignore-case': '.png' } }] } }, detailOf({ FileName: 'image.PNG' }), true],
  ['equals-ignore-case', { detail: { name: [{ 'equals-ignore-case': 'alice' }] } }, detailOf({ name: 'ALICE' }), true],
  ['equals-ignore-case mismatch', { detail: { name: [{ 'equals-ignore-case': 'alice' }] } }, detailOf({ name: 'alicia' }), false],
  ['prefix does not apply to numbers', { detail: { n: [{ prefix: '3' }] } }, detailOf({ n: 300 }), false],
  // Wildcard.
  ['wildcard', { detail: { EventBusArn: [{ wildcard: 'arn:aws:events:us-east-1:*:event-bus/*' }] } }, detailOf({ EventBusArn: 'arn:aws:events:us-east-1:123456789012:event-bus/default' }), true],
  ['wildcard mismatch', { detail: { EventBusArn: [{ wildcard: 'arn:aws:events:us-east-1:*:event-bus/*' }] } }, detailOf({ EventBusArn: 'arn:aws:events:us-west-2:1:event-bus/x' }), false],
  ['wildcard in the middle', { detail: { file: [{ wildcard: 'dir/*.png' }] } }, detailOf({ file: 'dir/sub/a.png' }), true],
  ['escaped star is literal', { detail: { name: [{ wildcard: 'a\\*b' }] } }, detailOf({ name: 'a*b' }), true],
  ['escaped star does not glob', { detail: { name: [{ wildcard: 'a\\*b' }] } }, detailOf({ name: 'axxb' }), false],
  // Anything-but.
  ['anything-but string', { detail: { state: [{ 'anything-but': 'initializing' }] } }, ec2Event, true],
  ['anything-but string excluded', { detail: { state: [{ 'anything-but': 'terminated' }] } }, ec2Event, false],
  ['anything-but number', { detail: { 'x-limit': [{ 'anything-but': 123 }] } }, detailOf({ 'x-limit': 456 }), true],
  ['anything-but number excluded', { detail: { 'x-limit': [{ 'anything-but': 123 }] } }, detailOf({ 'x-limit': 123 }), false],
  ['anything-but list', { detail: { state: [{ 'anything-but': ['stopped', 'overloaded'] }] } }, ec2Event, true],
  ['anything-but list excluded', { detail: { state: [{ 'anything-but': ['stopped', 'terminated'] }] } }, ec2Event, false],
  ['anything-but needs a value', { detail: { absent: [{ 'anything-but': 'x' }] } }, ec2Event, false],
  ['anything-but prefix', { detail: { state: [{ 'anything-but': { prefix: 'init' } }] } }, ec2Event, true],
  ['anything-but prefix excluded', { detail: { state: [{ 'anything-but': { prefix: 'term' } }] } }, ec2Event, false],
  ['anything-but suffix', { detail: { FileName: [{ 'anything-but': { suffix: '.txt' } }] } }, detailOf({ FileName: 'a.png' }), true],
  ['anything-but suffix excluded', { detail: { FileName: [{ 'anything-but': { suffix: '.png' } }] } }, detailOf({ FileName: 'a.png' }), false],
  ['anything-but ignore case excluded', { detail: { state: [{ 'anything-but': { 'equals-ignore-case': 'TERMINATED' } }] } }, ec2Event, false],
  ['anything-but ignore case list', { detail: { state: [{ 'anything-but': { 'equals-ignore-case': ['Stopped', 'Running'] } }] } }, ec2Event, true],
  ['anything-but wildcard', { detail: { FilePath: [{ 'anything-but': { wildcard: '*/lib/*' } }] } }, detailOf({ FilePath: '/usr/bin/env' }), true],
  ['anything-but wildcard excluded', { detail: { FilePath: [{ 'anything-but': { wildcard: '*/lib/*' } }] } }, detailOf({ FilePath: '/usr/lib/x' }), false],
  // Exists.
  ['exists true on a present leaf', { detail: { state: [{ exists: true }] } }, ec2Event, true],
  ['exists true on a missing leaf', { detail: { 'c-count': [{ exists: true }] } }, ec2Event, false],
  ['exists false on a missing leaf', { detail: { 'c-count': [{ exists: false }] } }, ec2Event, true],
  ['exists false on a present leaf', { detail: { state: [{ exists: false }] } }, ec2Event, false],
  ['exists true on null: null is a value', { detail: { responseElements: [{ exists: true }] } }, nullEvent, true],
  ['exists true on an object: not a leaf', { detail: [{ exists: true }] }, ec2Event, false],
  ['exists false under a missing parent', { detail: { missing: { leaf: [{ exists: false }] } } }, ec2Event, true],
  ['exists true on an empty array', { resources: [{ exists: true }] }, nullEvent, false],
  // Numeric.
  ['numeric range', { detail: { 'c-count': [{ numeric: ['>', 0, '<=', 5] }] } }, detailOf({ 'c-count': 5 }), true],
  ['numeric range upper bound', { detail: { 'c-count': [{ numeric: ['>', 0, '<=', 5] }] } }, detailOf({ 'c-count': 6 }), false],
  ['numeric range lower bound exclusive', { detail: { 'c-count': [{ numeric: ['>', 0, '<=', 5] }] } }, detailOf({ 'c-count': 0 }), false],
  ['numeric less than', { detail: { 'd-count': [{ numeric: ['<', 10] }] } }, detailOf({ 'd-count': 9.5 }), true],
  ['numeric equals', { detail: { 'x-limit': [{ numeric: ['=', 3.018e2] }] } }, detailOf({ 'x-limit': 301.8 }), true],
  ['numeric ignores strings', { detail: { n: [{ numeric: ['>', 0] }] } }, detailOf({ n: '5' }), false],
  ['numeric on an array: any element', { detail: { n: [{ numeric: ['>=', 10] }] } }, detailOf({ n: [1, 2, 12] }), true],
  // $or.
  ['$or first branch', { detail: { $or: [{ 'c-count': [{ numeric: ['>', 0, '<=', 5] }] }, { 'd-count': [{ numeric: ['<', 10] }] }] } }, detailOf({ 'c-count': 3 }), true],
  ['$or second branch', { detail: { $or: [{ 'c-count': [{ numeric: ['>', 0, '<=', 5] }] }, { 'd-count': [{ numeric: ['<', 10] }] }] } }, detailOf({ 'd-count': 3 }), true],
  ['$or no branch', { detail: { $or: [{ 'c-count': [{ numeric: ['>', 0, '<=', 5] }] }, { 'd-count': [{ numeric: ['<', 10] }] }] } }, detailOf({ 'c-count': 9 }), false],
  ['$or at top level with AND sibling', { source: ['aws.ec2'], $or: [{ 'detail-type': ['nope'] }, { detail: { state: ['terminated'] } }] }, ec2Event, true],
  ['$or sibling still has to match', { source: ['aws.s3'], $or: [{ 'detail-type': ['nope'] }, { detail: { state: ['terminated'] } }] }, ec2Event, false],
];

describe('Function: matchesPattern', () => {
  it.each(rows)('%s', (_name, pattern, event, expected) => {
    // Prepare: every table pattern is one EventBridge accepts
    validatePattern(pattern);
    // Act + Assess
    expect(matchesPattern(pattern, event)).toBe(expected);
  });

  it('routes a hint event on nested changed flags', () => {
    const pattern: EventPattern = {
      source: ['ome.pinning'],
      detail: { kind: ['InferenceService'], changed: { $or: [{ rolloutRepin: [true] }, { rolloutPromote: [true] }] } },
    };
    const hint = (changed: Record<string, boolean>) => ({ source: 'ome.pinning', detail: { kind: 'InferenceService', changed } });
    expect(matchesPattern(pattern, hint({ rolloutRepin: false, rolloutPromote: true }))).toBe(true);
    expect(matchesPattern(pattern, hint({ rolloutRepin: false, rolloutPromote: false }))).toBe(false);
  });
});

describe('Function: validatePattern', () => {
  it.each<[string, unknown, string]>([
    ['empty pattern', {}, 'non-empty JSON object'],
    ['not an object', ['x'], 'non-empty JSON object'],
    ['scalar leaf', { source: 'ome.pinning' }, 'source: must be an array'],
    ['empty value list', { source: [] }, 'source: an empty array matches nothing'],
    ['unknown operator', { detail: { kind: [{ contains: 'x' }] } }, 'detail.kind[0]: unsupported operator "contains"'],
    ['cidr unsupported', { detail: { ip: [{ cidr: '10.0.0.0/24' }] } }, 'cidr filter is not supported'],
    ['two operators in one filter', { detail: { a: [{ prefix: 'a', suffix: 'b' }] } }, 'exactly one operator'],
    ['exists not boolean', { detail: { a: [{ exists: 'yes' }] } }, 'exists takes true or false'],
    ['numeric bad operator', { detail: { a: [{ numeric: ['!=', 1] }] } }, 'numeric operators'],
    ['numeric odd length', { detail: { a: [{ numeric: ['>', 1, '<'] }] } }, 'one or two'],
    ['numeric empty range', { detail: { a: [{ numeric: ['>', 5, '<', 1] }] } }, 'numeric range is empty'],
    ['numeric bounds order', { detail: { a: [{ numeric: ['<', 5, '>', 1] }] } }, 'lower bound'],
    ['double wildcard', { detail: { a: [{ wildcard: 'a**b' }] } }, 'consecutive *'],
    ['anything-but mixed list', { detail: { a: [{ 'anything-but': ['a', 1] }] } }, 'only strings or only numbers'],
    ['anything-but nested numeric', { detail: { a: [{ 'anything-but': { numeric: ['>', 1] } }] } }, 'does not support "numeric"'],
    ['$or with one branch', { $or: [{ source: ['a'] }] }, 'at least two'],
    ['problem inside an $or branch', { $or: [{ source: ['a'] }, { source: 'b' }] }, '$or[1].source: must be an array'],
  ])('rejects %s', (_name, pattern, message) => {
    expect(() => validatePattern(pattern)).toThrow(InvalidPatternError);
    expect(findPatternProblems(pattern).join('\n')).toContain(message);
  });

  it('lists every problem at once', () => {
    expect(findPatternProblems({ source: 'x', detail: { kind: [] } })).toHaveLength(2);
  });
});

/** Each problem exactly as validatePattern reports it, path included. */
describe('Function: findPatternProblems, exact messages', () => {
  it.each<[string, unknown, string[]]>([
    ['null', null, ['(root): a pattern must be a non-empty JSON object']],
    ['a nested empty object', { detail: {} }, ['detail: a nested pattern must not be empty']],
    ['a scalar', { a: 1 }, ['a: must be an array of values or filters, or a nested object (got 1)']],
    ['an empty list deep down', { detail: { kind: [] } }, ['detail.kind: an empty array matches nothing; list at least one value or filter']],
    ['$or not a list', { $or: { a: ['x'] } }, ['$or: $or takes an array of at least two sub-patterns']],
    ['$or with an empty branch', { $or: [{ a: ['x'] }, {}] }, ['$or[1]: each $or branch must be a non-empty object']],
    ['$or with a scalar branch', { $or: [{ a: ['x'] }, 'b'] }, ['$or[1]: each $or branch must be a non-empty object']],
    ['a list inside a filter list', { a: [['x']] }, ['a[0]: unsupported filter ["x"]']],
    ['a filter with no operator', { a: [{}] }, ['a[0]: a filter object has exactly one operator (got {})']],
    ['prefix not a string', { a: [{ prefix: 1 }] }, ['a[0]: prefix takes a string or {"equals-ignore-case": string}']],
    ['suffix with a bad ignore-case', { a: [{ suffix: { 'equals-ignore-case': 1 } }] }, ['a[0]: suffix takes a string or {"equals-ignore-case": string}']],
    ['prefix with two keys', { a: [{ prefix: { 'equals-ignore-case': 'x', other: 'y' } }] }, ['a[0]: prefix takes a string or {"equals-ignore-case": string}']],
    ['equals-ignore-case not a string', { a: [{ 'equals-ignore-case': 1 }] }, ['a[0]: equals-ignore-case takes a string']],
    ['wildcard not a string', { a: [{ wildcard: 1 }] }, ['a[0]: wildcard takes a string']],
    ['wildcard escaping another character', { a: [{ wildcard: 'a\\b' }] }, ['a[0]: wildcard only escapes * and \\']],
    ['numeric not a list', { a: [{ numeric: '>' }] }, ['a[0]: numeric takes one or two [operator, number] pairs']],
    ['numeric of three pairs', { a: [{ numeric: ['>', 1, '<', 5, '=', 3] }] }, ['a[0]: numeric takes one or two [operator, number] pairs']],
    ['numeric with a string bound', { a: [{ numeric: ['>', '1'] }] }, ['a[0]: numeric bounds must be numbers']],
    ['numeric with an infinite bound', { a: [{ numeric: ['<', Number.POSITIVE_INFINITY] }] }, ['a[0]: numeric bounds must be numbers']],
    ['numeric range of equal bounds', { a: [{ numeric: ['>=', 1, '<=', 1] }] }, ['a[0]: numeric range is empty (1 .. 1)']],
    ['numeric range of two lower bounds', { a: [{ numeric: ['>', 1, '>=', 2] }] }, ['a[0]: a numeric range is a lower bound (> or >=) followed by an upper bound (< or <=)']],
    ['anything-but empty list', { a: [{ 'anything-but': [] }] }, ['a[0]: anything-but takes a non-empty list']],
    ['anything-but boolean', { a: [{ 'anything-but': true }] }, ['a[0]: anything-but takes a value, a list, or one of prefix, suffix, equals-ignore-case, wildcard']],
    ['anything-but with two operators', { a: [{ 'anything-but': { prefix: 'a', suffix: 'b' } }] }, ['a[0]: anything-but takes exactly one nested operator']],
    ['anything-but with no operator', { a: [{ 'anything-but': {} }] }, ['a[0]: anything-but takes exactly one nested operator']],
    ['anything-but prefix not a string', { a: [{ 'anything-but': { prefix: 1 } }] }, ['a[0]: anything-but prefix takes a string']],
    ['anything-but suffix not a string', { a: [{ 'anything-but': { suffix: ['x'] } }] }, ['a[0]: anything-but suffix takes a string']],
    ['anything-but ignore-case empty list', { a: [{ 'anything-but': { 'equals-ignore-case': [] } }] }, ['a[0]: anything-but equals-ignore-case takes a string or a list of strings']],
    ['anything-but wildcard number', { a: [{ 'anything-but': { wildcard: 1 } }] }, ['a[0]: anything-but wildcard takes a string or a list of strings']],
    ['anything-but wildcard with a double star', { a: [{ 'anything-but': { wildcard: ['ok*', 'a**'] } }] }, ['a[0]: wildcard must not contain consecutive * characters']],
    ['problems in several places, in order', { a: 'x', b: { c: [{ exists: 1 }, { cidr: '10.0.0.0/8' }] } }, [
      'a: must be an array of values or filters, or a nested object (got "x")',
      'b.c[0]: exists takes true or false',
      'b.c[1]: the cidr filter is not supported by this matcher',
    ]],
  ])('%s', (_name, pattern, problems) => {
    expect(findPatternProblems(pattern)).toEqual(problems);
  });

  it.each<[string, EventPattern]>([
    ['every value kind', { a: ['x', 1, true, null] }],
    ['prefix ignoring case', { a: [{ prefix: { 'equals-ignore-case': 'x' } }] }],
    ['an escaped star and an escaped backslash', { a: [{ wildcard: 'a\\*b\\\\c*' }] }],
    ['a numeric range', { a: [{ numeric: ['>=', 0, '<', 1] }] }],
    ['numeric equals', { a: [{ numeric: ['=', 0] }] }],
    ['anything-but numbers', { a: [{ 'anything-but': [1, 2] }] }],
    ['anything-but a number', { a: [{ 'anything-but': 1 }] }],
    ['anything-but wildcard list', { a: [{ 'anything-but': { wildcard: ['a*', 'b*'] } }] }],
    ['anything-but ignore-case string', { a: [{ 'anything-but': { 'equals-ignore-case': 'x' } }] }],
    ['exists false', { a: [{ exists: false }] }],
  ])('accepts %s', (_name, pattern) => {
    expect(findPatternProblems(pattern)).toEqual([]);
    expect(() => validatePattern(pattern)).not.toThrow();
  });

  it('names every problem in the thrown error', () => {
    expect(() => validatePattern({ a: 'x' })).toThrow('invalid event pattern: a: must be an array of values or filters, or a nested object (got "x")');
  });
});

describe('Function: matchesPattern, edges', () => {
  it.each<[string, EventPattern, unknown, boolean]>([
    ['numeric >= at the bound', { n: [{ numeric: ['>=', 5] }] }, { n: 5 }, true],
    ['numeric > at the bound', { n: [{ numeric: ['>', 5] }] }, { n: 5 }, false],
    ['numeric < at the bound', { n: [{ numeric: ['<', 5] }] }, { n: 5 }, false],
    ['numeric <= at the bound', { n: [{ numeric: ['<=', 5] }] }, { n: 5 }, true],
    ['numeric = another number', { n: [{ numeric: ['=', 5] }] }, { n: 6 }, false],
    ['numeric range, lower bound', { n: [{ numeric: ['>=', 1, '<', 5] }] }, { n: 1 }, true],
    ['numeric range, below it', { n: [{ numeric: ['>=', 1, '<', 5] }] }, { n: 0.5 }, false],
    ['wildcard dot is literal', { f: [{ wildcard: 'a.c' }] }, { f: 'abc' }, false],
    ['wildcard escaped backslash', { f: [{ wildcard: 'a\\\\b' }] }, { f: 'a\\b' }, true],
    ['wildcard anchored at both ends', { f: [{ wildcard: 'b*' }] }, { f: 'ab' }, false],
    ['wildcard star matches a newline', { f: [{ wildcard: 'a*b' }] }, { f: 'a\nb' }, true],
    ['wildcard on a number', { f: [{ wildcard: '*' }] }, { f: 1 }, false],
    ['prefix ignoring case, mismatch', { f: [{ prefix: { 'equals-ignore-case': 'xy' } }] }, { f: 'XZ' }, false],
    ['suffix on a number', { f: [{ suffix: '0' }] }, { f: 10 }, false],
    ['equals-ignore-case on a number', { f: [{ 'equals-ignore-case': '1' }] }, { f: 1 }, false],
    ['anything-but a string, on null', { f: [{ 'anything-but': 'x' }] }, { f: null }, true],
    ['anything-but prefix, on a number', { f: [{ 'anything-but': { prefix: '1' } }] }, { f: 2 }, false],
    ['anything-but ignore-case, another value', { f: [{ 'anything-but': { 'equals-ignore-case': 'A' } }] }, { f: 'b' }, true],
    ['anything-but list of numbers, excluded', { f: [{ 'anything-but': [1, 2] }] }, { f: 2 }, false],
    ['an unknown operator matches nothing', { f: [{ contains: 'a' }] }, { f: 'a' }, false],
    ['an unknown anything-but operator matches nothing', { f: [{ 'anything-but': { numeric: ['>', 1] } }] }, { f: 'a' }, false],
    ['exists false on an empty array', { f: [{ exists: false }] }, { f: [] }, true],
    ['exists true on an array of values', { f: [{ exists: true }] }, { f: ['a'] }, true],
    ['values in nested arrays', { f: ['b'] }, { f: [['a'], ['b']] }, true],
    ['a nested pattern over an array of scalars', { f: { g: ['a'] } }, { f: ['a'] }, false],
    ['a nested exists false over an array of scalars', { f: { g: [{ exists: false }] } }, { f: ['a'] }, true],
    ['a nested pattern over a scalar', { f: { g: ['a'] } }, { f: 'a' }, false],
    ['an event that is not an object', { f: ['a'] }, 'f', false],
    ['$or inside an array of objects', { items: { $or: [{ a: ['1'] }, { b: ['2'] }] } }, { items: [{ a: '0' }, { b: '2' }] }, true],
  ])('%s', (_name, pattern, event, expected) => {
    expect(matchesPattern(pattern, event)).toBe(expected);
  });
});
