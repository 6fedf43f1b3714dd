import { describe, expect, it } from 'vitest';
import { compareGoStrings, quoteGoString } from '../../shared/domain/go-string';
import { flattenGoStruct, marshalGoJson, type GoStructTable } from '../../shared/domain/runtime/go-json';
import { canonicalizeQuantity } from '../../shared/domain/runtime/quantity';
import { InvalidInputError } from '../../shared/domain/errors';

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

/**
 * Go's `omitempty`, field type by field type. Expected bytes follow encoding/json's
 * documented rule: a field is omitted when its value is false, 0, a nil pointer, or an
 * array, slice, map or string of length zero; a struct value is never omitted (so a
 * resource.Quantity, a struct, is written even when zero). A pointer to a zero value
 * is not nil, so it is written. Fields without `omitempty` are always written, with
 * the zero value when absent (a nil slice or map as `null`).
 */
describe('marshalGoJson: zero values and omitempty', () => {
  it.each([
    // int, omitempty: 0 is dropped whether absent or given; any other value is kept.
    ['int omitempty absent', 'ome.ModelFormat', { name: 'm' }, '{"name":"m"}'],
    ['int omitempty 0', 'ome.ModelFormat', { name: 'm', weight: 0 }, '{"name":"m"}'],
    ['int omitempty 3', 'ome.ModelFormat', { name: 'm', weight: 3 }, '{"name":"m","weight":3}'],
    ['int omitempty -1', 'ome.ModelFormat', { name: 'm', weight: -1 }, '{"name":"m","weight":-1}'],
    ['several int omitempty 0 and one set', 'core.Probe', { initialDelaySeconds: 0, timeoutSeconds: 0, periodSeconds: 10, successThreshold: 0, failureThreshold: 0 }, '{"periodSeconds":10}'],
    // int without omitempty: written, 0 when absent.
    ['int 0', 'core.ContainerPort', { containerPort: 0 }, '{"containerPort":0}'],
    ['int absent', 'core.ContainerPort', {}, '{"containerPort":0}'],
    ['int omitempty 0 beside a kept int', 'core.ContainerPort', { hostPort: 0, containerPort: 80 }, '{"containerPort":80}'],
    ['int without omitempty after strings', 'core.ISCSIVolumeSource', { targetPortal: 't', iqn: 'q' }, '{"targetPortal":"t","iqn":"q","lun":0}'],
    // *int, omitempty: nil is dropped; a pointer to 0 is kept.
    ['*int omitempty nil', 'ome.TensorParallelismConfig', {}, '{}'],
    ['*int omitempty null', 'ome.TensorParallelismConfig', { tensorParallelSize: null }, '{}'],
    ['*int omitempty pointing to 0', 'ome.TensorParallelismConfig', { tensorParallelSize: 0 }, '{"tensorParallelSize":0}'],
    // bool, omitempty: false is dropped, true kept.
    ['bool omitempty false', 'core.NFSVolumeSource', { server: 's', path: '/p', readOnly: false }, '{"server":"s","path":"/p"}'],
    ['bool omitempty true', 'core.NFSVolumeSource', { server: 's', path: '/p', readOnly: true }, '{"server":"s","path":"/p","readOnly":true}'],
    // *bool, omitempty: a pointer to false is kept.
    ['*bool omitempty pointing to false', 'core.CSIVolumeSource', { driver: 'd', readOnly: false }, '{"driver":"d","readOnly":false}'],
    ['*bool omitempty nil', 'core.CSIVolumeSource', { driver: 'd' }, '{"driver":"d"}'],
    // string: omitempty drops ""; without omitempty "" (or absent) is written as "".
    ['string omitempty ""', 'core.ContainerPort', { name: '', containerPort: 1 }, '{"containerPort":1}'],
    ['string omitempty set', 'core.ContainerPort', { name: 'http', containerPort: 1 }, '{"name":"http","containerPort":1}'],
    ['string without omitempty absent', 'core.NFSVolumeSource', {}, '{"server":"","path":""}'],
    ['*string omitempty pointing to ""', 'ome.ModelFormat', { name: 'm', version: '' }, '{"name":"m","version":""}'],
    // map, omitempty: nil and empty are dropped; one entry is kept.
    ['map omitempty empty', 'core.FlexVolumeSource', { driver: 'd', options: {} }, '{"driver":"d"}'],
    ['map omitempty null', 'core.FlexVolumeSource', { driver: 'd', options: null }, '{"driver":"d"}'],
    ['map omitempty one entry', 'core.FlexVolumeSource', { driver: 'd', options: { a: '1' } }, '{"driver":"d","options":{"a":"1"}}'],
    ['map of quantities omitempty empty', 'core.ResourceRequirements', { limits: {}, requests: {} }, '{}'],
    ['map of quantities omitempty one entry', 'core.ResourceRequirements', { limits: { cpu: '1000m' } }, '{"limits":{"cpu":"1"}}'],
    // slice, omitempty: nil and empty are dropped; [0] is not empty.
    ['slice omitempty empty', 'core.FCVolumeSource', { targetWWNs: [] }, '{}'],
    ['slice omitempty null', 'core.FCVolumeSource', { targetWWNs: null }, '{}'],
    ['slice omitempty one item', 'core.FCVolumeSource', { targetWWNs: ['w'] }, '{"targetWWNs":["w"]}'],
    ['[]int omitempty with a zero item', 'core.PodSecurityContext', { supplementalGroups: [0] }, '{"supplementalGroups":[0]}'],
    ['[]int omitempty empty', 'core.PodSecurityContext', { supplementalGroups: [] }, '{}'],
    // slice without omitempty: nil is null, empty is [].
    ['slice without omitempty absent', 'core.CephFSVolumeSource', {}, '{"monitors":null}'],
    ['slice without omitempty empty', 'core.CephFSVolumeSource', { monitors: [] }, '{"monitors":[]}'],
    // A struct value is never empty: Quantity (a struct) and nested structs are written.
    ['quantity omitempty absent is "0"', 'core.ResourceFieldSelector', { resource: 'cpu' }, '{"resource":"cpu","divisor":"0"}'],
    ['quantity omitempty 0 is "0"', 'core.ResourceFieldSelector', { resource: 'cpu', divisor: '0' }, '{"resource":"cpu","divisor":"0"}'],
    ['struct omitempty absent is {}', 'core.Container', { name: 'c' }, '{"name":"c","resources":{}}'],
    // A nil pointer without omitempty is null.
    ['*string without omitempty nil', 'core.GRPCAction', { port: 5 }, '{"port":5,"service":null}'],
  ])('%s (%s)', (_name, type, input, expected) => {
    expect(marshalGoJson(input, type)).toBe(expected);
  });

  it.each([
    [0, 'float', '0'],
    [1.5, 'float', '1.5'],
    [-0, 'float', '-0'],
    [1e21, 'float', '1e+21'],
    [1e20, 'float', '100000000000000000000'],
    [1e-7, 'float', '1e-7'],
    [undefined, 'float', '0'],
    [undefined, 'int', '0'],
    [undefined, 'bool', 'false'],
    [undefined, 'string', '""'],
    [undefined, 'quantity', '"0"'],
    [undefined, 'intstr', '0'],
    [undefined, 'time', 'null'],
    [undefined, 'bytes', 'null'],
    [undefined, '[]string', 'null'],
    [undefined, 'map[string]string', 'null'],
    [undefined, '*int', 'null'],
    [true, 'bool', 'true'],
    [false, 'bool', 'false'],
    ['2026-01-02T03:04:05Z', 'time', '"2026-01-02T03:04:05Z"'],
    ['aGk=', 'bytes', '"aGk="'],
    [7, '*int', '7'],
    [{ b: 1, a: null, c: [true, 'x'] }, 'raw', '{"b":1,"a":null,"c":[true,"x"]}'],
    [{ z: '1', a: '2' }, 'map[string]string', '{"a":"2","z":"1"}'],
  ])('writes %j as Go %s: %s', (input, type, expected) => {
    expect(marshalGoJson(input, type)).toBe(expected);
  });

  it.each([
    [Number.NaN, 'float'],
    [Number.POSITIVE_INFINITY, 'float'],
    ['1', 'float'],
    ['true', 'bool'],
    [1, 'time'],
    [1, 'bytes'],
    [true, 'quantity'],
    [1.5, 'intstr'],
    [{}, 'intstr'],
    ['x', 'ome.ModelFormat'],
    [['x'], 'ome.ModelFormat'],
    [['x'], 'map[string]string'],
    [{ a: 1 }, 'map[string]string'],
    [{ a: Number.NaN }, 'raw'],
    [{ a: () => 1 }, 'raw'],
  ])('rejects %j as Go %s', (input, type) => {
    expect(() => marshalGoJson(input, type)).toThrow(InvalidInputError);
  });

  it('names the field and the Go type it cannot decode into', () => {
    expect(() => marshalGoJson({ containers: [{ name: 'c', ports: [{ containerPort: 'x' }] }] })).toThrow(
      'json: cannot unmarshal "x" into .containers[0].ports[0].containerPort of type int',
    );
    expect(() => marshalGoJson('x', 'int')).toThrow('json: cannot unmarshal "x" into value of type int');
  });

  it('rejects an unknown Go struct', () => {
    expect(() => marshalGoJson({}, 'ome.Nope')).toThrow('unknown Go struct ome.Nope');
  });
});

/**
 * Go's encoding/json rule for field names several (embedded) fields share: the
 * shallowest field wins; among equally shallow fields a single tagged one wins;
 * otherwise every one of them is dropped, silently. An embedded struct is expanded
 * once per path, so a cycle stops.
 */
describe('flattenGoStruct: embedded fields', () => {
  const structs: GoStructTable = {
    Outer: [['', 'Inner', 'i'], ['name', 'string'], ['', '*Other', 'i'], ['last', 'int', 'o']],
    Inner: [['name', 'int'], ['deep', 'string', 'o'], ['', 'Deeper', 'i'], ['both', 'string']],
    Other: [['deep', 'bool'], ['both', 'string', 'u'], ['solo', 'string', 'm:key']],
    Deeper: [['both', 'int'], ['', 'Outer', 'i']],
    Tie: [['', 'Inner', 'i'], ['', 'Twin', 'i']],
    Twin: [['both', 'string'], ['deep', 'string', 'u']],
  };
  const fieldsOf = (name: string) => flattenGoStruct(name, structs).map((f) => `${f.json}:${f.type}${f.omitEmpty ? ',o' : ''}${f.mergeStrategy ? `,m=${f.mergeKey ?? ''}` : ''}`);

  it('lets the shallower field hide a deeper one, and a tagged field an untagged one at the same depth', () => {
    // name: Outer's own (depth 0) hides Inner's (depth 1). deep: Inner's and Other's
    // tie at depth 1, both tagged: dropped. both: Inner's (tagged) beats Other's
    // (untagged) at depth 1; Deeper's is at depth 2. Outer inside Deeper is a cycle.
    expect(fieldsOf('Outer')).toEqual(['both:string', 'name:string', 'solo:string,m=key', 'last:int,o']);
  });

  it('drops a name two tagged fields share at the same depth, and expands a struct again on another path', () => {
    // both: Inner's and Twin's, tagged, at depth 1: dropped. deep: Inner's tagged one
    // beats Twin's untagged one. Outer, reached through Inner > Deeper, is expanded at
    // depth 3: its name loses to Inner's, its solo and last stand alone.
    expect(fieldsOf('Tie')).toEqual(['name:int', 'deep:string,o', 'solo:string,m=key', 'last:int,o']);
  });

  it("gives the table's own structs unchanged", () => {
    expect(flattenGoStruct('core.ContainerPort').map((f) => f.json)).toEqual(['name', 'hostPort', 'containerPort', 'protocol', 'hostIP']);
  });
});
