import { describe, expect, it } from 'vitest';
import { compareGoStrings, quoteGoString } from '../../shared/go-string';
import { marshalGoJson } from '../../shared/runtime/go-json';
import { canonicalizeQuantity } from '../../shared/runtime/quantity';
import { InvalidInputError } from '../../shared/errors';

describe('quoteGoString', () => {
  it.each([
    ['plain', '"plain"'],
    ['<a & b>', '"\\u003ca \\u0026 b\\u003e"'],
    ['q"b\\s', '"q\\"b\\\\s"'],
    ['\n\r\t\b\f', '"\\n\\r\\t\\b\\f"'],
    ['\u0001\u001f', '"\\u0001\\u001f"'],
    ['\u2028\u2029', '"\\u2028\\u2029"'],
    ['é😀', '"é😀"'],
    ['\ud800', '"\\ufffd"'],
    ['\u007f', '"\u007f"'],
  ])('quotes %j as Go does', (input, expected) => {
    expect(quoteGoString(input)).toBe(expected);
  });
});

describe('compareGoStrings', () => {
  it('orders by code point, as Go orders UTF-8 bytes', () => {
    expect(['b', '😀', '\uffff', 'a', '10', '9'].sort(compareGoStrings)).toEqual(['10', '9', 'a', 'b', '\uffff', '😀']);
  });
});

describe('canonicalizeQuantity', () => {
  it.each([
    ['10', '10'],
    ['30Gi', '30Gi'],
    ['1', '1'],
    [10, '10'],
    ['1000m', '1'],
    ['0.5', '500m'],
    ['1.5', '1500m'],
    ['1024Mi', '1Gi'],
    ['1.5Gi', '1536Mi'],
    ['512', '512'],
    ['1Ki', '1Ki'], ['1023Mi', '1023Mi'], ['0.5Ki', '512'],
    ['2048', '2048'],
    ['1e3', '1e3'],
    ['1k', '1k'],
    ['1000', '1k'],
    ['0', '0'],
    ['0Gi', '0'],
    ['100M', '100M'],
    ['1.0000000001', '1000000001n'],
    ['-1.5', '-1500m'],
    ['+5', '5'],
  ])('%j → %j', (input, expected) => {
    expect(canonicalizeQuantity(input)).toBe(expected);
  });

  it.each(['', 'abc', '1.2.3', '5Xi'])('rejects %j', (input) => {
    expect(() => canonicalizeQuantity(input)).toThrow(InvalidInputError);
  });
});

describe('marshalGoJson', () => {
  it.each([
    ['an empty spec keeps the non-omitempty containers as null', {}, '{"containers":null}'],
    ['unknown fields are dropped', { bogus: 1, disabled: true }, '{"disabled":true,"containers":null}'],
    ['a pointer to false is kept', { disabled: false }, '{"disabled":false,"containers":null}'],
    ['an empty omitempty slice is dropped', { protocolVersions: [] }, '{"containers":null}'],
    ['an empty non-omitempty slice is []', { containers: [] }, '{"containers":[]}'],
    ['an omitempty string "" is dropped', { schedulerName: '' }, '{"containers":null}'],
    ['an omitempty bool false is dropped', { hostIPC: false }, '{"containers":null}'],
    ['maps are sorted', { nodeSelector: { b: '1', a: '2' } }, '{"containers":null,"nodeSelector":{"a":"2","b":"1"}}'],
    ['fields follow declaration order, not input order', { acceleratorRequirements: {}, disabled: true, modelSizeRange: { max: '4B', min: '2B' } }, '{"modelSizeRange":{"min":"2B","max":"4B"},"disabled":true,"containers":null,"acceleratorRequirements":{}}'],
    ['a container always has name and resources', { containers: [{}] }, '{"containers":[{"name":"","resources":{}}]}'],
    ['a nil non-omitempty pointer is null', { supportedModelFormats: [{}] }, '{"supportedModelFormats":[{"name":"","modelFormat":null}],"containers":null}'],
    ['embedded structs are promoted in place', { engineConfig: { runner: { name: 'r' }, minReplicas: 1, volumes: [{ name: 'v' }] } }, '{"engineConfig":{"volumes":[{"name":"v"}],"minReplicas":1,"runner":{"name":"r","resources":{}}},"containers":null}'],
    ['IntOrString keeps its kind', { containers: [{ name: 'c', livenessProbe: { httpGet: { port: 'http' } }, readinessProbe: { httpGet: { port: 80 } } }] }, '{"containers":[{"name":"c","resources":{},"livenessProbe":{"httpGet":{"port":"http"}},"readinessProbe":{"httpGet":{"port":80}}}]}'],
    ['input keys match case-insensitively', { Disabled: true }, '{"disabled":true,"containers":null}'],
  ])('%s', (_name, input, expected) => {
    expect(marshalGoJson(input)).toBe(expected);
  });

  it.each([
    ['a string for an int', { engineConfig: { maxReplicas: 'two' } }],
    ['a number for a string', { schedulerName: 1 }],
    ['an object for a list', { containers: {} }],
    ['a fraction for an int', { engineConfig: { maxReplicas: 1.5 } }],
    ['a bad quantity', { containers: [{ name: 'c', resources: { limits: { cpu: 'lots' } } }] }],
  ])('rejects %s as Go would', (_name, input) => {
    expect(() => marshalGoJson(input)).toThrow(InvalidInputError);
  });
});
