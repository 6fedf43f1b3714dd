import { describe, expect, it } from 'vitest';
import { formatGoDuration, normalizeGoDuration, parseGoDuration } from '../../shared/domain/go-duration';
import { quoteGoString } from '../../shared/domain/go-string';
import { goBool, goDuration, goInt, goIntOrString, goMap, goPointer, goSlice, goString, goStruct, marshalGoJson, type GoType } from '../../shared/domain/go-json';
import { rolloutGroupSchema, rolloutPolicySpecSchema } from '../../shared/domain/rollout/schema';

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

/**
 * Go's omitempty for the rollout structs, type by type (encoding/json: false, 0, a nil
 * pointer, an empty string, slice or map are omitted; a struct value, and so
 * metav1.Duration and IntOrString, never is), and the zero value Go writes for a field
 * without omitempty.
 */
describe('Function: marshalGoJson (rollout types): zero values and omitempty', () => {
  const one = (type: GoType, omitempty: boolean) =>
    goStruct([{ name: 'f', type, ...(omitempty ? { omitempty: true } : {}) }, { name: 'z', type: goInt }]);
  it.each<[string, GoType, boolean, unknown, string]>([
    ['string omitempty ""', goString, true, '', '{"z":0}'],
    ['string omitempty set', goString, true, 'a', '{"f":"a","z":0}'],
    ['string absent', goString, false, undefined, '{"f":"","z":0}'],
    ['int omitempty 0', goInt, true, 0, '{"z":0}'],
    ['int omitempty 2', goInt, true, 2, '{"f":2,"z":0}'],
    ['bool omitempty false', goBool, true, false, '{"z":0}'],
    ['bool omitempty true', goBool, true, true, '{"f":true,"z":0}'],
    ['bool absent', goBool, false, undefined, '{"f":false,"z":0}'],
    ['bool false', goBool, false, false, '{"f":false,"z":0}'],
    ['slice omitempty empty', goSlice(goString), true, [], '{"z":0}'],
    ['slice omitempty one item', goSlice(goString), true, ['a'], '{"f":["a"],"z":0}'],
    ['slice absent', goSlice(goString), false, undefined, '{"f":null,"z":0}'],
    ['slice empty', goSlice(goString), false, [], '{"f":[],"z":0}'],
    ['map omitempty empty', goMap(goString), true, {}, '{"z":0}'],
    ['map omitempty one entry', goMap(goString), true, { a: 'b' }, '{"f":{"a":"b"},"z":0}'],
    ['map absent', goMap(goString), false, undefined, '{"f":null,"z":0}'],
    ['map sorted', goMap(goInt), false, { b: 1, a: 2 }, '{"f":{"a":2,"b":1},"z":0}'],
    ['pointer omitempty nil', goPointer(goBool), true, undefined, '{"z":0}'],
    ['pointer omitempty to false', goPointer(goBool), true, false, '{"f":false,"z":0}'],
    ['pointer nil', goPointer(goInt), false, null, '{"f":null,"z":0}'],
    ['duration omitempty absent is "0s"', goDuration, true, undefined, '{"f":"0s","z":0}'],
    ['duration normalised', goDuration, false, '90s', '{"f":"1m30s","z":0}'],
    ['intOrString omitempty absent is 0', goIntOrString, true, undefined, '{"f":0,"z":0}'],
    ['intOrString string', goIntOrString, false, '25%', '{"f":"25%","z":0}'],
    ['intOrString int', goIntOrString, false, 3, '{"f":3,"z":0}'],
    ['struct omitempty absent is {}', goStruct([{ name: 'g', type: goString, omitempty: true }]), true, undefined, '{"f":{},"z":0}'],
  ])('%s', (_name, type, omitempty, value, expected) => {
    expect(marshalGoJson({ f: value, z: undefined }, one(type, omitempty))).toBe(expected);
  });

  it.each<[string, GoType, unknown, string]>([
    ['a number for a string', goString, 1, '$.f: expected a string, got 1'],
    ['a string for a bool', goBool, 'true', '$.f: expected a boolean, got "true"'],
    ['a number for a duration', goDuration, 60, '$.f: expected a duration string, got 60'],
    ['a fraction for an int', goInt, 1.5, '$.f: expected an integer, got 1.5'],
    ['a string for an int', goInt, '1', '$.f: expected an integer, got "1"'],
    ['a boolean for an IntOrString', goIntOrString, true, '$.f: expected an integer, got true'],
    ['an object for a list', goSlice(goString), {}, '$.f: expected a list, got {}'],
    ['a list for a map', goMap(goString), [], '$.f: expected an object, got []'],
    ['a string for a map', goMap(goString), 'x', '$.f: expected an object, got "x"'],
    ['a list for a struct', goStruct([]), [], '$.f: expected an object, got []'],
    ['a number for a struct', goStruct([]), 1, '$.f: expected an object, got 1'],
    ['a bad item deep down', goSlice(goMap(goInt)), [{ a: 'x' }], '$.f[0].a: expected an integer, got "x"'],
  ])('rejects %s, naming the path', (_name, type, value, message) => {
    expect(() => marshalGoJson({ f: value }, goStruct([{ name: 'f', type }]))).toThrow(message);
  });
});

/**
 * Every field of the rollout structs, populated, in upstream's declaration order
 * (rollout_types.go, rolloutpolicy_types.go): a field renamed, dropped, moved or given
 * the wrong omitempty changes these bytes, and every digest with them.
 */
describe('Rollout schemas: every field, in declaration order', () => {
  it('writes a fully populated RolloutGroup', () => {
    const group = {
      components: ['engine'],
      order: ['engine'],
      canary: {
        steps: [
          {
            capacity: '25%',
            traffic: 10,
            pause: { duration: '60s' },
            analysis: { interval: '1m', initialDelay: '30s', failureLimit: 2, onInconclusive: 'Pause', metrics: [{ name: 'm', query: 'q', operator: '<', threshold: '1' }] },
          },
        ],
        prometheus: { providerRef: { name: 'p' }, serverAddress: 'http://x', authRef: { name: 's', key: 'k', optional: true }, headers: { b: '2', a: '1' } },
        scaleDownDelaySeconds: 30,
        readyTimeout: '10m',
      },
      rollingUpdate: { maxSurge: 1, maxUnavailable: '10%' },
      policyRef: { name: 'guarded', progression: 'canary', kind: 'RolloutPolicy' },
      soak: '1h',
      maintainRatio: { tolerance: 5 },
    };
    expect(marshalGoJson(group, rolloutGroupSchema)).toBe(
      '{"components":["engine"],"order":["engine"],' +
        '"canary":{"steps":[{"capacity":"25%","traffic":10,"pause":{"duration":"1m0s"},' +
        '"analysis":{"interval":"1m0s","initialDelay":"30s","failureLimit":2,"onInconclusive":"Pause","metrics":[{"name":"m","query":"q","operator":"\\u003c","threshold":"1"}]}}],' +
        '"prometheus":{"providerRef":{"name":"p"},"serverAddress":"http://x","authRef":{"name":"s","key":"k","optional":true},"headers":{"a":"1","b":"2"}},' +
        '"scaleDownDelaySeconds":30,"readyTimeout":"10m0s"},' +
        '"rollingUpdate":{"maxSurge":1,"maxUnavailable":"10%"},' +
        '"policyRef":{"name":"guarded","progression":"canary","kind":"RolloutPolicy"},' +
        '"soak":"1h0m0s","maintainRatio":{"tolerance":5}}',
    );
  });

  it('writes the zero values of the same structs: omitempty fields dropped, the rest as Go writes them', () => {
    const group = {
      components: [],
      canary: { steps: [{ analysis: {} }], prometheus: { providerRef: {}, authRef: {} } },
      blueGreen: {},
      policyRef: {},
      maintainRatio: {},
    };
    expect(marshalGoJson(group, rolloutGroupSchema)).toBe(
      '{"components":[],' +
        '"canary":{"steps":[{"capacity":0,"traffic":0,"analysis":{"interval":"0s","failureLimit":0,"metrics":null}}],' +
        '"prometheus":{"providerRef":{"name":""},"authRef":{"key":""}}},' +
        '"blueGreen":{},"policyRef":{"name":"","progression":""},"maintainRatio":{}}',
    );
  });

  it('writes a policy spec with only its progression arms', () => {
    expect(marshalGoJson({ blueGreen: {}, rollingUpdate: { maxSurge: '25%' }, soak: '1m' }, rolloutPolicySpecSchema)).toBe('{"blueGreen":{},"rollingUpdate":{"maxSurge":"25%"}}');
  });
});
