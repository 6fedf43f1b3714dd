import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { applyRuntimeSpecDefaults } from '../../shared/domain/runtime/defaults';
import { marshalGoJson } from '../../shared/domain/runtime/go-json';
import {
  buildControllerRevision,
  computeRevisionHash,
  computeRevisionName,
  matchesRevisionName,
  parseRevisionName,
  validateRevisionName,
} from '../../shared/domain/runtime/revision';
import { InvalidInputError } from '../../shared/domain/errors';
import { buildSeedRuntimeSpec, SEED_RUNTIME_GO_JSON } from './fixtures/seed-runtime';

const stableFixture = JSON.parse(readFileSync(new URL('./fixtures/stable-runtime.json', import.meta.url), 'utf8')) as {
  spec: unknown;
  expectedHash: string;
};

describe('computeRevisionHash', () => {
  it.each([
    ['0.9', 'r-llama-demo-sglang-llama-3-2-3b-590753e8'],
    ['0.85', 'r-llama-demo-sglang-llama-3-2-3b-af9539ac'],
  ] as const)('reproduces the seed revision for --mem-frac=%s', (memFrac, revisionName) => {
    const { short } = computeRevisionHash(applyRuntimeSpecDefaults(buildSeedRuntimeSpec(memFrac)));
    expect(computeRevisionName({ kind: 'ServingRuntime', namespace: 'llama-demo', runtimeName: 'sglang-llama-3-2-3b', hash: short })).toBe(revisionName);
  });

  it('hashes the bytes Go writes for the seed runtime', () => {
    expect(marshalGoJson(applyRuntimeSpecDefaults(buildSeedRuntimeSpec()))).toBe(SEED_RUNTIME_GO_JSON);
  });

  it('differs without the CRD defaults a real API server stores', () => {
    expect(computeRevisionHash(buildSeedRuntimeSpec()).short).not.toBe('590753e8');
  });

  it('keeps the checked-in fixture hash stable across releases', () => {
    expect(computeRevisionHash(stableFixture.spec).full).toBe(stableFixture.expectedHash);
  });

  it('ignores key order and unknown fields', () => {
    const spec = buildSeedRuntimeSpec();
    const reordered = Object.fromEntries(Object.entries({ ...spec, extra: { a: 1 } }).reverse());
    expect(computeRevisionHash(reordered)).toEqual(computeRevisionHash(spec));
  });

  it.each([null, [], 'spec'])('rejects %j', (input) => {
    expect(() => computeRevisionHash(input)).toThrow(InvalidInputError);
  });
});

describe('computeRevisionName', () => {
  it.each([
    [{ kind: 'ClusterServingRuntime', namespace: 'team', runtimeName: 'srt', hash: '0123abcd' }, 'cr-srt-0123abcd'],
    [{ kind: 'ServingRuntime', namespace: 'team', runtimeName: 'srt', hash: '0123abcd' }, 'r-team-srt-0123abcd'],
  ] as const)('%j → %s', (input, expected) => {
    expect(computeRevisionName(input)).toBe(expected);
  });

  /**
   * Each row is refused by the guard it names and by no other: the hashes below would
   * make valid DNS-1123 names, and the long name is otherwise well formed.
   */
  it.each([
    ['a hash of 7 hex chars', { kind: 'ServingRuntime', namespace: 'ns', runtimeName: 'rt', hash: '0123abc' }, 'revision hash "0123abc" is not 8 lowercase hex chars'],
    ['a hash of 9 hex chars', { kind: 'ServingRuntime', namespace: 'ns', runtimeName: 'rt', hash: '0123abcde' }, 'revision hash "0123abcde" is not 8 lowercase hex chars'],
    ['a hash of 8 lowercase letters that are not hex', { kind: 'ServingRuntime', namespace: 'ns', runtimeName: 'rt', hash: 'ghijklmn' }, 'revision hash "ghijklmn" is not 8 lowercase hex chars'],
    ['an uppercase hash', { kind: 'ClusterServingRuntime', namespace: '', runtimeName: 'rt', hash: 'ABCDEF12' }, 'revision hash "ABCDEF12" is not 8 lowercase hex chars'],
    [
      'a name over 253 characters',
      { kind: 'ServingRuntime', namespace: 'n'.repeat(63), runtimeName: 'r'.repeat(190), hash: '0123abcd' },
      `revision name r-${'n'.repeat(38)}… is 265 characters; ControllerRevision names are at most 253: shorten the runtime's name`,
    ],
    ['a name that is not a DNS-1123 subdomain', { kind: 'ClusterServingRuntime', namespace: '', runtimeName: 'Bad_Name', hash: '0123abcd' }, 'revision name "cr-Bad_Name-0123abcd" is not a DNS-1123 subdomain'],
    ['a name with an empty label', { kind: 'ServingRuntime', namespace: 'ns', runtimeName: 'a..b', hash: '0123abcd' }, 'revision name "r-ns-a..b-0123abcd" is not a DNS-1123 subdomain'],
  ] as const)('refuses %s, with that guard\'s message', (_name, input, message) => {
    expect(() => computeRevisionName(input)).toThrow(InvalidInputError);
    expect(() => computeRevisionName(input)).toThrow(new InvalidInputError(message));
  });

  it('accepts a dotted name of valid labels', () => {
    expect(computeRevisionName({ kind: 'ServingRuntime', namespace: 'ns', runtimeName: 'a.b', hash: '0123abcd' })).toBe('r-ns-a.b-0123abcd');
  });

  it('accepts a name of exactly 253 characters', () => {
    const name = computeRevisionName({ kind: 'ServingRuntime', namespace: 'n'.repeat(63), runtimeName: 'r'.repeat(253 - 2 - 63 - 1 - 1 - 8), hash: '0123abcd' });
    expect(name).toHaveLength(253);
  });
});

describe('parseRevisionName', () => {
  it.each([
    ['cr-sglang-llama-3-2-3b-590753e8', { kind: 'ClusterServingRuntime', rest: 'sglang-llama-3-2-3b', hash: '590753e8' }],
    ['r-llama-demo-sglang-llama-3-2-3b-590753e8', { kind: 'ServingRuntime', rest: 'llama-demo-sglang-llama-3-2-3b', hash: '590753e8' }],
    ['x-foo-590753e8', undefined],
    ['cr-foo-590753E8', undefined],
    ['cr-590753e8', undefined],
  ])('%s', (name, expected) => {
    expect(parseRevisionName(name)).toEqual(expected);
  });
});

describe('validateRevisionName', () => {
  const source = { kind: 'ServingRuntime', namespace: 'llama-demo', runtimeName: 'sglang-llama-3-2-3b' } as const;

  it('gives the seed message for a cluster revision named with kind ServingRuntime', () => {
    expect(validateRevisionName('cr-sglang-llama-3-2-3b-590753e8', source)).toBe(
      'spec.runtime.revision "cr-sglang-llama-3-2-3b-590753e8" does not match the expected naming convention for runtime "sglang-llama-3-2-3b" (ServingRuntime); expected the form r-llama-demo-sglang-llama-3-2-3b-<8 lowercase hex chars>',
    );
  });

  it.each([
    ['r-llama-demo-sglang-llama-3-2-3b-590753e8', true],
    ['r-llama-demo-sglang-llama-3-2-3b-590753e', false],
    ['r-llama-demo-sglang-llama-3-2-3b-590753e8x', false],
    ['r-other-sglang-llama-3-2-3b-590753e8', false],
  ])('%s matches: %s', (name, matches) => {
    expect(matchesRevisionName(name, source)).toBe(matches);
    expect(validateRevisionName(name, source) === undefined).toBe(matches);
  });

  it('names the cluster form for a ClusterServingRuntime', () => {
    expect(validateRevisionName('r-ns-srt-0123abcd', { kind: 'ClusterServingRuntime', namespace: 'ns', runtimeName: 'srt' })).toBe(
      'spec.runtime.revision "r-ns-srt-0123abcd" does not match the expected naming convention for runtime "srt" (ClusterServingRuntime); expected the form cr-srt-<8 lowercase hex chars>',
    );
  });
});

describe('buildControllerRevision', () => {
  it.each([
    ['ServingRuntime', 'r-llama-demo-sglang-llama-3-2-3b-590753e8', 'llama-demo'],
    ['ClusterServingRuntime', 'cr-sglang-llama-3-2-3b-590753e8', ''],
  ] as const)('stores a %s revision as upstream does', (kind, name, sourceNamespace) => {
    const revision = buildControllerRevision({
      kind,
      namespace: 'llama-demo',
      runtimeName: 'sglang-llama-3-2-3b',
      mergedSpec: applyRuntimeSpecDefaults(buildSeedRuntimeSpec()),
      omeNamespace: 'ome',
    });
    expect(revision.metadata).toEqual({
      name,
      namespace: 'ome',
      labels: {
        'ome.io/runtime-of': 'sglang-llama-3-2-3b',
        'ome.io/runtime-of-kind': kind,
        'ome.io/runtime-of-namespace': sourceNamespace,
        'ome.io/revision-hash': '590753e8',
      },
      annotations: { 'ome.io/created-by': 'ome-controller' },
    });
    expect(revision.revision).toBe(1);
    expect(JSON.stringify(revision.data)).toBe(SEED_RUNTIME_GO_JSON);
    expect(computeRevisionHash(revision.data).short).toBe('590753e8');
  });
});
