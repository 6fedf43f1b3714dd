import { describe, expect, it } from 'vitest';
import { formatGoDuration, normalizeGoDuration, parseGoDuration } from '../../shared/rollout/go-duration';
import { quoteGoString } from '../../shared/go-string';
import { goInt, goMap, goPointer, goSlice, goString, goStruct, marshalGoJson } from '../../shared/rollout/go-json';
import { rolloutGroupSchema, rolloutPolicySpecSchema } from '../../shared/rollout/schema';

describe('Function: normalizeGoDuration', () => {
  it.each([
    ['10m', '10m0s'],
    ['10m0s', '10m0s'],
    ['600s', '10m0s'],
    ['1h', '1h0m0s'],
    ['1.5h', '1h30m0s'],
    ['90s', '1m30s'],
    ['1.5s', '1.5s'],
    ['300ms', '300ms'],
    ['1500ms', '1.5s'],
    ['2us', '2µs'],
    ['2µs', '2µs'],
    ['500ns', '500ns'],
    ['0', '0s'],
    ['0s', '0s'],
    ['-1m', '-1m0s'],
    ['1h1m1s', '1h1m1s'],
    ['25h', '25h0m0s'],
  ])('%s -> %s', (input, expected) => {
    expect(normalizeGoDuration(input)).toBe(expected);
  });

  it.each(['', '10', 'm', '1x', '.m', '--1s'])('rejects %j as Go does', (input) => {
    expect(() => parseGoDuration(input)).toThrow(/time: /);
  });

  it('formats nanoseconds like Duration.String', () => {
    expect(formatGoDuration(1n)).toBe('1ns');
    expect(formatGoDuration(1_234_567n)).toBe('1.234567ms');
  });
});

describe('Function: quoteGoString', () => {
  it.each([
    ['plain', '"plain"'],
    ['a<b>&c', '"a\\u003cb\\u003e\\u0026c"'],
    ['quote " and \\ slash', '"quote \\" and \\\\ slash"'],
    ['line\nbreak\ttab\r', '"line\\nbreak\\ttab\\r"'],
    ['\u0001', '"\\u0001"'],
    ['\u2028\u2029', '"\\u2028\\u2029"'],
    ['ünïcode', '"ünïcode"'],
  ])('%j', (input, expected) => {
    expect(quoteGoString(input)).toBe(expected);
  });
});

describe('Function: marshalGoJson', () => {
  const sample = goStruct([
    { name: 'b', type: goString },
    { name: 'a', type: goInt, omitempty: true },
    { name: 'list', type: goSlice(goString) },
    { name: 'ptr', type: goPointer(goString), omitempty: true },
    { name: 'm', type: goMap(goString), omitempty: true },
  ]);

  it.each([
    [{}, '{"b":"","list":null}'],
    [{ a: 0, list: [] }, '{"b":"","list":[]}'],
    [{ a: 2, b: 'x', list: ['y'], extra: true }, '{"b":"x","a":2,"list":["y"]}'],
    [{ ptr: '', m: { z: '1', a: '2' } }, '{"b":"","list":null,"ptr":"","m":{"a":"2","z":"1"}}'],
  ])('%j -> declared order, omitempty, unknown keys dropped', (input, expected) => {
    expect(marshalGoJson(input, sample)).toBe(expected);
  });

  it('writes a group in RolloutGroup declaration order, whatever the input order', () => {
    const group = {
      maintainRatio: { tolerance: 5 },
      soak: '60s',
      policyRef: { progression: 'canary', name: 'p' },
      canary: { readyTimeout: '5m', steps: [{ traffic: 10, capacity: '25%', pause: {} }] },
      components: ['engine'],
    };
    expect(marshalGoJson(group, rolloutGroupSchema)).toBe(
      '{"components":["engine"],"canary":{"steps":[{"capacity":"25%","traffic":10,"pause":{}}],"readyTimeout":"5m0s"},' +
        '"policyRef":{"name":"p","progression":"canary"},"soak":"1m0s","maintainRatio":{"tolerance":5}}',
    );
  });

  it('keeps analysis fields without omitempty, as Go emits them', () => {
    const spec = { canary: { steps: [{ capacity: 1, traffic: 0, analysis: { interval: '30s' } }] } };
    expect(marshalGoJson(spec, rolloutPolicySpecSchema)).toBe(
      '{"canary":{"steps":[{"capacity":1,"traffic":0,"analysis":{"interval":"30s","failureLimit":0,"metrics":null}}]}}',
    );
  });

  it('rejects a value of the wrong type', () => {
    expect(() => marshalGoJson({ components: 'engine' }, rolloutGroupSchema)).toThrow(/expected a list/);
  });
});

/** Go's time.ParseDuration and Duration.String, including their error texts. */
describe('Function: parseGoDuration / formatGoDuration, edges', () => {
  it.each([
    ['+5s', '5s'],
    ['-0', '0s'],
    ['+0', '0s'],
    ['1.s', '1s'],
    ['.5s', '500ms'],
    ['1μs', '1µs'],
    ['1.5us', '1.5µs'],
    ['0.5ms', '500µs'],
    ['1000ms', '1s'],
    ['61s', '1m1s'],
    ['3600s', '1h0m0s'],
    ['1.000000001s', '1.000000001s'],
    ['1m0.5s', '1m0.5s'],
    ['9223372036854775807ns', '2562047h47m16.854775807s'],
    ['-9223372036854775808ns', '-2562047h47m16.854775808s'],
  ])('%s -> %s', (input, expected) => {
    expect(normalizeGoDuration(input)).toBe(expected);
  });

  it.each([
    ['', 'time: invalid duration ""'],
    ['-', 'time: invalid duration "-"'],
    ['m', 'time: invalid duration "m"'],
    ['.m', 'time: invalid duration ".m"'],
    ['--1s', 'time: invalid duration "--1s"'],
    ['1h-1m', 'time: unknown unit "h-" in duration "1h-1m"'],
    ['10', 'time: missing unit in duration "10"'],
    ['1.5.5s', 'time: missing unit in duration "1.5.5s"'],
    ['1x', 'time: unknown unit "x" in duration "1x"'],
    ['1sec', 'time: unknown unit "sec" in duration "1sec"'],
    ['9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'],
    ['2562048h', 'time: invalid duration "2562048h"'],
  ])('rejects %j with Go\'s message', (input, message) => {
    expect(() => parseGoDuration(input)).toThrow(message);
  });

  it.each<[bigint, string]>([
    [0n, '0s'],
    [999n, '999ns'],
    [-5n, '-5ns'],
    [1_000n, '1µs'],
    [-1_500n, '-1.5µs'],
    [1_000_000n, '1ms'],
    [999_999_999n, '999.999999ms'],
    [1_000_000_000n, '1s'],
    [59_999_999_999n, '59.999999999s'],
    [60_000_000_000n, '1m0s'],
    [-3_600_000_000_000n, '-1h0m0s'],
  ])('formats %s ns as %s', (nanoseconds, expected) => {
    expect(formatGoDuration(nanoseconds)).toBe(expected);
  });

  it('sums several units in nanoseconds', () => {
    expect(parseGoDuration('1h2m3s4ms5us6ns')).toBe(3_723_004_005_006n);
    expect(parseGoDuration('-1.5s')).toBe(-1_500_000_000n);
  });
});
