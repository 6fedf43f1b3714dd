/**
 * Every hostile input the plane meets, at the rule that handles it: each row gives the
 * input, the clear error or event it gets, and shows that it is refused (or accepted)
 * without doing work in proportion to what the input claims. The integration tests beside
 * this file send the same inputs through the embedded API server and DynamoDB Local.
 *
 * | input                                           | where                      | outcome                                   |
 * | ----------------------------------------------- | -------------------------- | ----------------------------------------- |
 * | quantity with a huge exponent (`1e-300000000`)   | runtime spec hash          | canonical value, a bounded number of digits |
 * | quantity exponent beyond int32, or 257+ chars   | runtime spec hash          | InvalidInputError → RuntimePinError       |
 * | object name or namespace `.` / `..`              | functions' API client      | InvalidInputError, no request             |
 * | JSON Patch through `__proto__`                  | embedded API server        | 422, nothing polluted                     |
 * | `spec.runtime.revision` of another kind/ns       | pin decision               | RuntimeMismatch, nothing rolled out       |
 * | `ome.io/runtime-sync` with `:`, spaces, 200+ chars | pin decision, keys       | a token like any other, hashed in keys    |
 * | `ome.io/runtime-sync` with NUL / lone surrogate  | pin decision               | ignored, one Warning event                |
 * | `ome.io/rollout-repin` neither `now` nor digest  | repin decision             | RolloutRepinRejected, bounded message     |
 */
import { describe, expect, it } from 'vitest';
import { applyJsonPatch } from '../../local/cluster/patch';
import { validateObjectMeta, type NameRule } from '../../local/cluster/validation';
import { objectPath } from '../../shared/adapters/kubernetes/paths';
import { InvalidInputError } from '../../shared/domain/errors';
import { idempotencyKey } from '../../shared/ports/store';
import { decideRepin } from '../../shared/domain/rollout/repin';
import type { LivePlanResult } from '../../shared/domain/rollout/plan';
import { applyRuntimeSpecDefaults } from '../../shared/domain/runtime/defaults';
import { normalizeGoJson } from '../../shared/domain/runtime/go-json';
import { decidePin, findUnusableSyncToken, type PinInput, type StoredRevision } from '../../shared/domain/runtime/pinning';
import { canonicalizeQuantity, MAX_QUANTITY_LENGTH } from '../../shared/domain/runtime/quantity';
import { buildSeedRuntimeSpec } from '../runtime/fixtures/seed-runtime';

const V1 = normalizeGoJson(applyRuntimeSpecDefaults(buildSeedRuntimeSpec('0.9')));
const V2 = normalizeGoJson(applyRuntimeSpecDefaults(buildSeedRuntimeSpec('0.85')));
const RUNTIME = 'sglang-llama-3-2-3b';
const REV1 = 'r-llama-demo-sglang-llama-3-2-3b-590753e8';
const REV2 = 'r-llama-demo-sglang-llama-3-2-3b-af9539ac';

describe('resource quantities with hostile exponents and lengths', () => {
  it.each([
    // Below one nano: apimachinery rounds any positive value up to 1n (DecimalExponent prints 1e-9).
    ['1e-300000000', '1e-9'],
    ['-1e-300000000', '-1e-9'],
    ['1e-2147483648', '1e-9'],
    ['0.0000000000001Ki', '1n'],
    // A large exponent stays an exponent, as Go's inf.Dec keeps it.
    ['1e300000000', '1e300000000'],
    ['1e2147483647', '10e2147483646'],
    ['0e999', '0'],
    // Binary quantities are capped at the largest int64, as apimachinery caps them.
    ['9999999999999999999999Ki', '9223372036854775807'],
    [`1${'0'.repeat(MAX_QUANTITY_LENGTH - 1)}`, `1e${MAX_QUANTITY_LENGTH - 1}`],
  ])('%j canonicalises to %j with output bounded by the input, not the exponent', (input, expected) => {
    const result = canonicalizeQuantity(input);
    expect(result).toBe(expected);
    expect(result.length).toBeLessThanOrEqual(input.length + 2);
  });

  it.each([
    ['1e2147483648', "unable to parse quantity's suffix"],
    ['1e-2147483649', "unable to parse quantity's suffix"],
    [`1e${'9'.repeat(200)}`, "unable to parse quantity's suffix"],
    [`1${'0'.repeat(MAX_QUANTITY_LENGTH)}`, `is longer than ${MAX_QUANTITY_LENGTH} characters`],
    ['1'.repeat(1_000_000), `is longer than ${MAX_QUANTITY_LENGTH} characters`],
  ])('%s is refused: %s', (input, message) => {
    expect(() => canonicalizeQuantity(input)).toThrow(InvalidInputError);
    expect(() => canonicalizeQuantity(input)).toThrow(message);
    // The message quotes a bounded preview of the input.
    expect(((): string => { try { canonicalizeQuantity(input); return ''; } catch (e) { return (e as Error).message; } })().length).toBeLessThan(200);
  });

  it('a runtime asking for cpu 1e-300000000 pins like any other, its revision holding the canonical 1e-9', () => {
    const spec = structuredClone(buildSeedRuntimeSpec('0.9')) as { engineConfig: { runner: { resources?: unknown } } };
    spec.engineConfig.runner.resources = { requests: { cpu: '1e-300000000' } };
    const decision = decidePin({
      isvc: { namespace: 'llama-demo', name: 'isvc', runtime: { name: RUNTIME, kind: 'ServingRuntime', autoSync: false } },
      live: { status: 'found', spec: normalizeGoJson(applyRuntimeSpecDefaults(spec)) },
      lookupRevision: () => undefined,
      omeNamespace: 'ome',
    });
    expect(decision).toMatchObject({ outcome: 'pinned', createRevision: { metadata: { name: expect.stringMatching(/^r-llama-demo-sglang-llama-3-2-3b-[0-9a-f]{8}$/) } } });
    expect(JSON.stringify(decision.createRevision?.data)).toContain('"cpu":"1e-9"');
  });

  it('a runtime whose cpu overflows the exponent fails its pin with a clear RuntimePinError', () => {
    const spec = structuredClone(buildSeedRuntimeSpec('0.9')) as { engineConfig: { runner: { resources?: unknown } } };
    spec.engineConfig.runner.resources = { requests: { cpu: '1e2147483648' } };
    const decision = decidePin({
      isvc: { namespace: 'llama-demo', name: 'isvc', runtime: { name: RUNTIME, kind: 'ServingRuntime', autoSync: false } },
      live: { status: 'found', spec: spec as never },
      lookupRevision: () => undefined,
      omeNamespace: 'ome',
    });
    expect(decision).toMatchObject({ outcome: 'error', serve: { source: 'unchanged' }, event: { reason: 'RuntimePinError', message: expect.stringContaining("unable to parse quantity's suffix") } });
    expect(decision.createRevision).toBeUndefined();
  });
});

describe('names that are not path segments', () => {
  const isvc = { group: 'ome.io', version: 'v1beta1', plural: 'inferenceservices', kind: 'InferenceService', namespaced: true };
  it.each([
    ['llama-demo', '..', 'InferenceService name "..": may not be \'..\''],
    ['llama-demo', '.', 'InferenceService name ".": may not be \'.\''],
    ['llama-demo', 'a/b', 'InferenceService name "a/b": may not contain \'/\''],
    ['llama-demo', '100%', 'InferenceService name "100%": may not contain \'%\''],
    ['..', 'chat', 'InferenceService namespace "..": may not be \'..\''],
    ['.', 'chat', 'InferenceService namespace ".": may not be \'.\''],
  ])('%j/%j: %s', (namespace, name, message) => {
    expect(() => objectPath(isvc, namespace, name)).toThrow(new InvalidInputError(message));
  });

  it.each<[string, NameRule, string]>([
    ['..', 'path', 'metadata.name: Invalid value: "..": may not be \'..\''],
    ['.', 'path', 'metadata.name: Invalid value: ".": may not be \'.\''],
    ['a%b', 'path', 'metadata.name: Invalid value: "a%b": may not contain \'%\''],
    ['..', 'subdomain', 'metadata.name: Invalid value: "..": a lowercase RFC 1123 subdomain must consist of'],
  ])('the embedded API server refuses to create %j (%s names): %s', (name, rule, message) => {
    const errors = validateObjectMeta({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'llama-demo' } }, rule);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message.startsWith(message)).toBe(true);
  });

  it('ordinary dotted names still make object paths', () => {
    expect(objectPath(isvc, 'llama-demo', 'chat.v2', 'status')).toBe('/apis/ome.io/v1beta1/namespaces/llama-demo/inferenceservices/chat.v2/status');
  });
});

describe('JSON Patch paths through the prototype', () => {
  it.each([
    [[{ op: 'add', path: '/__proto__/polluted', value: true }]],
    [[{ op: 'add', path: '/metadata/__proto__/polluted', value: true }]],
    [[{ op: 'replace', path: '/constructor/prototype/polluted', value: true }]],
    [[{ op: 'copy', from: '/metadata', path: '/__proto__/polluted' }]],
  ])('%j is 422 and leaves Object.prototype alone', (patch) => {
    const target = { metadata: { name: 'x' } };
    expect(() => applyJsonPatch(target, patch)).toThrow(expect.objectContaining({ status: expect.objectContaining({ code: 422 }) }));
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect(target).toEqual({ metadata: { name: 'x' } });
  });
});

function revision(labels: Record<string, string>): StoredRevision {
  return { labels: { 'ome.io/runtime-of': RUNTIME, ...labels }, data: V1 };
}

function pinInput(kind: string, stored: StoredRevision, revisionName = REV1): PinInput {
  return {
    isvc: { namespace: 'llama-demo', name: 'isvc', runtime: { name: RUNTIME, kind, autoSync: false, revision: revisionName }, pinnedRevisionName: REV2 },
    live: { status: 'found', spec: V2 },
    lookupRevision: (name) => (name === revisionName ? stored : undefined),
    omeNamespace: 'ome',
  };
}

describe('an explicit revision of another runtime', () => {
  it.each([
    [
      'a ServingRuntime of the same name in another namespace',
      pinInput('ServingRuntime', revision({ 'ome.io/runtime-of-kind': 'ServingRuntime', 'ome.io/runtime-of-namespace': 'team-b' })),
      `revision ${REV1} belongs to runtime "${RUNTIME}" (ServingRuntime in namespace "team-b") but ISVC references "${RUNTIME}" (ServingRuntime in namespace "llama-demo")`,
    ],
    [
      'the ClusterServingRuntime of the same name',
      pinInput('ServingRuntime', revision({ 'ome.io/runtime-of-kind': 'ClusterServingRuntime', 'ome.io/runtime-of-namespace': '' })),
      `revision ${REV1} belongs to runtime "${RUNTIME}" (ClusterServingRuntime, cluster-scoped) but ISVC references "${RUNTIME}" (ServingRuntime in namespace "llama-demo")`,
    ],
    [
      'a ServingRuntime, named by a ClusterServingRuntime reference',
      pinInput('ClusterServingRuntime', revision({ 'ome.io/runtime-of-kind': 'ServingRuntime', 'ome.io/runtime-of-namespace': 'llama-demo' }), `cr-${RUNTIME}-590753e8`),
      `revision cr-${RUNTIME}-590753e8 belongs to runtime "${RUNTIME}" (ServingRuntime in namespace "llama-demo") but ISVC references "${RUNTIME}" (ClusterServingRuntime, cluster-scoped)`,
    ],
    [
      'another runtime name (upstream\'s own check)',
      pinInput('ServingRuntime', { labels: { 'ome.io/runtime-of': 'other' }, data: V1 }),
      `revision ${REV1} belongs to runtime "other" but ISVC references "${RUNTIME}"`,
    ],
  ])('%s: RuntimeMismatch, nothing served, status kept', (_label, input, message) => {
    const decision = decidePin(input);
    expect(decision).toMatchObject({ outcome: 'drifted', serve: { source: 'unchanged' }, drift: { action: 'set', reason: 'RuntimeMismatch', message }, pausesUpdates: true });
    expect(decision.status).toBeUndefined();
    expect(decision.createRevision).toBeUndefined();
  });

  it('a revision of this runtime (labels matching, or absent as on hand-made revisions) is served', () => {
    const matching = revision({ 'ome.io/runtime-of-kind': 'ServingRuntime', 'ome.io/runtime-of-namespace': 'llama-demo' });
    expect(decidePin(pinInput('ServingRuntime', matching))).toMatchObject({ outcome: 'pinned', serve: { source: 'revision', revisionName: REV1 } });
    expect(decidePin(pinInput('ServingRuntime', revision({})))).toMatchObject({ outcome: 'pinned', serve: { source: 'revision', revisionName: REV1 } });
  });
});

describe('ome.io/runtime-sync values', () => {
  const drifted = (syncToken: string): PinInput => ({
    isvc: { namespace: 'llama-demo', name: 'isvc', runtime: { name: RUNTIME, kind: 'ServingRuntime', autoSync: false }, pinnedRevisionName: REV1, lastRuntimeSyncToken: 'before', syncToken },
    live: { status: 'found', spec: V2 },
    lookupRevision: (name) => (name === REV1 ? { labels: { 'ome.io/runtime-of': RUNTIME }, data: V1 } : undefined),
    omeNamespace: 'ome',
  });

  it.each([
    ['an RFC 3339 timestamp', '2026-09-28T14:15:57Z'],
    ['200 characters', 'x'.repeat(200)],
    ['spaces', 'after the mem-frac change'],
    ['separators of our keys', 'a#b|c/d:e'],
    ['a newline', 'line one\nline two'],
    ['the annotation limit', 'y'.repeat(262_000)],
  ])('%s: rolls forward and is recorded as it is', (_label, token) => {
    expect(findUnusableSyncToken(token)).toBeUndefined();
    expect(decidePin(drifted(token))).toMatchObject({ outcome: 'pinned', tokenConsumed: true, status: { pinnedRevisionName: REV2, lastRuntimeSyncToken: token } });
  });

  it.each([
    ['a NUL character', 'ticket\u00001', 'ome.io/runtime-sync value "ticket\\u00001" is ignored: it contains a NUL character'],
    ['an unpaired surrogate', 'ticket\uD8001', 'ome.io/runtime-sync value "ticket\\ud8001" is ignored: it is not valid Unicode (an unpaired UTF-16 surrogate)'],
    ['NUL in 200,000 characters', `${'z'.repeat(200_000)}\u0000`, `ome.io/runtime-sync value "${'z'.repeat(64)}"… (200001 characters) is ignored: it contains a NUL character`],
  ])('%s: ignored with one warning, drift still reported', (_label, token, message) => {
    const decision = decidePin(drifted(token));
    expect(decision).toMatchObject({ outcome: 'drifted', drift: { reason: 'RevisionMismatch' }, tokenConsumed: false });
    expect(decision.event).toBeUndefined();
    expect(decision.unusableToken?.startsWith(message)).toBe(true);
    expect(decision.unusableToken?.length).toBeLessThan(400);
  });

  it('idempotency keys hold a fixed-size hash, distinct per value, whatever the value', () => {
    const values = ['2026-09-28T14:15:57Z', 'a#b', 'a', '#b', 'x'.repeat(262_000), ''];
    const keys = values.map((value) => idempotencyKey('east', 'uid-1', 'runtime-sync', value));
    for (const key of keys) expect(key).toMatch(/^runtime-sync#east#uid-1#sha256:[0-9a-f]{64}$/);
    expect(new Set(keys).size).toBe(values.length);
    expect(idempotencyKey('east', 'uid-1', 'runtime-sync', 'a')).not.toBe(idempotencyKey('east', 'uid-1', 'rollout-repin', 'a'));
  });
});

describe('ome.io/rollout-repin values', () => {
  const live: LivePlanResult = { ok: false, reason: 'PolicyNotFound', message: 'unused', groups: [] };
  it.each([
    ['oversized', 'rp1:'.padEnd(250_000, 'a'), `"${'rp1:'.padEnd(64, 'a')}"… (250000 characters)`],
    ['junk', 'latest', '"latest"'],
    ['NUL', 'now\u0000', '"now\\u0000"'],
  ])('%s: rejected first, with a bounded message', (_label, value, quoted) => {
    const decision = decideRepin({ annotationValue: value, run: undefined, live, canaries: new Map(), now: new Date(0) });
    expect(decision).toMatchObject({
      action: 'reject',
      removeAnnotation: true,
      event: { type: 'Warning', reason: 'RolloutRepinRejected', message: `repin rejected: annotation value ${quoted} is neither "now" nor a plan digest (rp1: followed by 12 lowercase hex characters)` },
    });
  });
});
