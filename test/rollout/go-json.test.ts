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
