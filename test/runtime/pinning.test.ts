import { describe, expect, it } from 'vitest';
import { applyRuntimeSpecDefaults } from '../../shared/domain/runtime/defaults';
import { normalizeGoJson, type JsonValue } from '../../shared/domain/runtime/go-json';
import { decidePin, findUnusableSyncToken, type PinDecision, type PinInput, type PinningSubject, type StoredRevision } from '../../shared/domain/runtime/pinning';
import { buildSeedRuntimeSpec } from './fixtures/seed-runtime';

const V1 = normalizeGoJson(applyRuntimeSpecDefaults(buildSeedRuntimeSpec('0.9')));
const V2 = normalizeGoJson(applyRuntimeSpecDefaults(buildSeedRuntimeSpec('0.85')));
const REV1 = 'r-llama-demo-sglang-llama-3-2-3b-590753e8';
const REV2 = 'r-llama-demo-sglang-llama-3-2-3b-af9539ac';
const RUNTIME = 'sglang-llama-3-2-3b';

function revision(data: JsonValue, runtimeOf = RUNTIME): StoredRevision {
  return { labels: { 'ome.io/runtime-of': runtimeOf }, data };
}

function input(isvc: Partial<PinningSubject>, options: { live?: JsonValue | 'missing' | 'broken'; revisions?: Record<string, StoredRevision> } = {}): PinInput {
  const live = options.live ?? V1;
  return {
    isvc: { namespace: 'llama-demo', name: 'llama-3-2-3b-instruct', runtime: { name: RUNTIME, kind: 'ServingRuntime', autoSync: false }, ...isvc },
    live:
      live === 'missing'
        ? { status: 'not-found', message: `ServingRuntime ${RUNTIME} not found in namespace llama-demo` }
        : live === 'broken'
          ? { status: 'error', message: 'inherit-from parent "gone" not found (chain so far: [sglang-llama-3-2-3b])' }
          : { status: 'found', spec: live },
    lookupRevision: (name) => options.revisions?.[name],
    omeNamespace: 'ome',
  };
}

const autoSyncOff = { name: RUNTIME, kind: 'ServingRuntime', autoSync: false };

describe('decidePin', () => {
  it.each<[string, PinInput, Record<string, unknown> & { tokenConsumed: boolean }]>([
    [
      'autoSync true follows live and keeps status',
      input({ runtime: { name: RUNTIME, kind: 'ServingRuntime', autoSync: true }, pinnedRevisionName: REV1 }),
      { outcome: 'follow-live', serve: { source: 'live' }, drift: { action: 'keep' }, status: undefined, pausesUpdates: false, tokenConsumed: false },
    ],
    ['autoSync unset follows live', input({ runtime: { name: RUNTIME } }), { outcome: 'follow-live', tokenConsumed: false }],
    ['an unnamed runtime cannot pin', input({ runtime: { autoSync: false } }), { outcome: 'follow-live', tokenConsumed: false }],
    [
      'an unresolvable chain is a RuntimePinError that changes nothing',
      input({ pinnedRevisionName: REV1 }, { live: 'broken' }),
      {
        outcome: 'error',
        serve: { source: 'unchanged' },
        drift: { action: 'keep' },
        status: undefined,
        event: { type: 'Warning', reason: 'RuntimePinError', message: 'resolve live runtime sglang-llama-3-2-3b: inherit-from parent "gone" not found (chain so far: [sglang-llama-3-2-3b])' },
        tokenConsumed: false,
      },
    ],
    [
      'a missing runtime at the first pin is a RuntimePinError',
      input({}, { live: 'missing' }),
      { outcome: 'error', event: { reason: 'RuntimePinError', message: 'resolve live runtime sglang-llama-3-2-3b: ServingRuntime sglang-llama-3-2-3b not found in namespace llama-demo' }, tokenConsumed: false },
    ],
    [
      'the first pin creates the revision and records a present token without acting on it',
      input({ syncToken: 'early' }),
      {
        outcome: 'pinned',
        serve: { source: 'revision', revisionName: REV1 },
        createRevision: { metadata: { name: REV1, namespace: 'ome' } },
        status: { pinnedRevisionName: REV1, lastRuntimeSyncToken: 'early' },
        drift: { action: 'remove' },
        tokenConsumed: false,
      },
    ],
    [
      'the first pin records an empty token and reuses an existing revision',
      input({}, { revisions: { [REV1]: revision(V1) } }),
      { outcome: 'pinned', createRevision: undefined, status: { pinnedRevisionName: REV1, lastRuntimeSyncToken: '' }, tokenConsumed: false },
    ],
    [
      'an explicit pin that does not exist is RevisionMissing and pauses',
      input({ runtime: { ...autoSyncOff, revision: REV1 }, pinnedRevisionName: REV2 }),
      {
        outcome: 'drifted',
        serve: { source: 'unchanged' },
        drift: { action: 'set', reason: 'RevisionMissing', message: `explicit pin ${REV1} not found in namespace ome` },
        pausesUpdates: true,
        status: undefined,
        tokenConsumed: false,
      },
    ],
    [
      "an explicit pin of another runtime's revision is RuntimeMismatch and pauses",
      input({ runtime: { ...autoSyncOff, revision: 'r-llama-demo-other-0123abcd' } }, { revisions: { 'r-llama-demo-other-0123abcd': revision(V1, 'other') } }),
      {
        outcome: 'drifted',
        drift: { action: 'set', reason: 'RuntimeMismatch', message: 'revision r-llama-demo-other-0123abcd belongs to runtime "other" but ISVC references "sglang-llama-3-2-3b"' },
        pausesUpdates: true,
        tokenConsumed: false,
      },
    ],
    [
      'an explicit pin serves that revision, ignores the token and never drifts on a live change',
      input({ runtime: { ...autoSyncOff, revision: REV1 }, pinnedRevisionName: REV2, syncToken: 'new', lastRuntimeSyncToken: 'old' }, { live: V2, revisions: { [REV1]: revision(V1) } }),
      {
        outcome: 'pinned',
        serve: { source: 'revision', revisionName: REV1, spec: V1 },
        status: { pinnedRevisionName: REV1, lastRuntimeSyncToken: 'old' },
        drift: { action: 'remove' },
        tokenConsumed: false,
      },
    ],
    [
      'an explicit pin with the source gone keeps serving with SourceRuntimeMissing',
      input({ runtime: { ...autoSyncOff, revision: REV1 } }, { live: 'missing', revisions: { [REV1]: revision(V1) } }),
      {
        outcome: 'pinned',
        serve: { source: 'revision', revisionName: REV1 },
        drift: { action: 'set', reason: 'SourceRuntimeMissing', message: `runtime sglang-llama-3-2-3b not found; serving from pinned revision ${REV1}` },
        pausesUpdates: false,
        tokenConsumed: false,
      },
    ],
    [
      'a deleted pinned revision is RevisionMissing, and a token does not clear it',
      input({ pinnedRevisionName: REV1, syncToken: 'new' }, { live: V2 }),
      { outcome: 'drifted', drift: { action: 'set', reason: 'RevisionMissing', message: `pinned revision ${REV1} missing from ome` }, pausesUpdates: true, holdAt: undefined, tokenConsumed: false },
    ],
    [
      'a missing source keeps serving the pin with SourceRuntimeMissing',
      input({ pinnedRevisionName: REV1 }, { live: 'missing', revisions: { [REV1]: revision(V1) } }),
      {
        outcome: 'pinned',
        serve: { source: 'revision', revisionName: REV1 },
        drift: { action: 'set', reason: 'SourceRuntimeMissing', message: `runtime sglang-llama-3-2-3b not found; serving from pinned revision ${REV1}` },
        pausesUpdates: false,
        tokenConsumed: false,
      },
    ],
    [
      'equal hashes clear drift and do not record a new token',
      input({ pinnedRevisionName: REV1, syncToken: 'waiting', lastRuntimeSyncToken: '' }, { revisions: { [REV1]: revision(V1) } }),
      { outcome: 'pinned', serve: { source: 'revision', revisionName: REV1 }, drift: { action: 'remove' }, status: undefined, tokenConsumed: false },
    ],
    [
      'a live change is RevisionMismatch with the seed message, and pauses',
      input({ pinnedRevisionName: REV1 }, { live: V2, revisions: { [REV1]: revision(V1) } }),
      {
        outcome: 'drifted',
        serve: { source: 'unchanged' },
        drift: {
          action: 'set',
          reason: 'RevisionMismatch',
          message: 'pinned r-llama-demo-sglang-llama-3-2-3b-590753e8, live spec differs; bump ome.io/runtime-sync annotation to advance',
        },
        pausesUpdates: true,
        // The workload stays at the pin: one rendered from another revision is brought to it.
        holdAt: { source: 'revision', revisionName: REV1, spec: V1 },
        tokenConsumed: false,
      },
    ],
    [
      'the token already consumed does not roll forward again',
      input({ pinnedRevisionName: REV1, syncToken: 'mem-frac-0-85', lastRuntimeSyncToken: 'mem-frac-0-85' }, { live: V2, revisions: { [REV1]: revision(V1) } }),
      { outcome: 'drifted', drift: { reason: 'RevisionMismatch' }, tokenConsumed: false },
    ],
    [
      'a new token rolls forward once to a revision of the live spec',
      input({ pinnedRevisionName: REV1, syncToken: 'mem-frac-0-85', lastRuntimeSyncToken: '' }, { live: V2, revisions: { [REV1]: revision(V1) } }),
      {
        outcome: 'pinned',
        serve: { source: 'revision', revisionName: REV2, spec: V2 },
        createRevision: { metadata: { name: REV2 } },
        status: { pinnedRevisionName: REV2, lastRuntimeSyncToken: 'mem-frac-0-85' },
        drift: { action: 'remove' },
        tokenConsumed: true,
      },
    ],
    [
      'resuming pinning after autoSync true resumes from the last pinned revision',
      input({ pinnedRevisionName: REV1, lastRuntimeSyncToken: 'x' }, { live: V2, revisions: { [REV1]: revision(V1) } }),
      { outcome: 'drifted', drift: { reason: 'RevisionMismatch', message: expect.stringContaining(REV1) }, tokenConsumed: false },
    ],
    [
      'a token with spaces rolls forward like any other (upstream accepts any value)',
      input({ pinnedRevisionName: REV1, syncToken: 'has space' }, { live: V2, revisions: { [REV1]: revision(V1) } }),
      { outcome: 'pinned', status: { pinnedRevisionName: REV2, lastRuntimeSyncToken: 'has space' }, tokenConsumed: true, unusableToken: undefined },
    ],
    [
      'an RFC 3339 timestamp token rolls forward',
      input({ pinnedRevisionName: REV1, syncToken: '2026-09-28T14:15:57Z' }, { live: V2, revisions: { [REV1]: revision(V1) } }),
      { outcome: 'pinned', status: { pinnedRevisionName: REV2, lastRuntimeSyncToken: '2026-09-28T14:15:57Z' }, tokenConsumed: true },
    ],
    [
      'a token that cannot be recorded is ignored, with a warning: drift is still reported',
      input({ pinnedRevisionName: REV1, syncToken: 'a\u0000b' }, { live: V2, revisions: { [REV1]: revision(V1) } }),
      { outcome: 'drifted', drift: { reason: 'RevisionMismatch' }, event: undefined, tokenConsumed: false, unusableToken: expect.stringContaining('NUL') },
    ],
    [
      'a token that cannot be recorded does not hold back the first pin, and is not recorded',
      input({ syncToken: 'a\u0000b' }),
      { outcome: 'pinned', status: { pinnedRevisionName: REV1, lastRuntimeSyncToken: '' }, unusableToken: expect.stringContaining('NUL'), tokenConsumed: false },
    ],
    [
      'a runtime whose revision name would be too long fails the pin clearly',
      input({ runtime: { ...autoSyncOff, name: 'r'.repeat(250) } }),
      { outcome: 'error', event: { message: expect.stringContaining('at most 253') }, tokenConsumed: false },
    ],
  ])('%s', (_name, pinInput, expected) => {
    const decision = decidePin(pinInput);
    // Every row says whether the sync token was consumed: only a roll forward consumes it.
    expect(decision.tokenConsumed).toBe(expected.tokenConsumed);
    const present = Object.fromEntries(Object.entries(expected).filter(([, value]) => value !== undefined));
    expect(decision).toMatchObject(present);
    // An undefined expectation means the decision must not carry that field at all.
    for (const [key, value] of Object.entries(expected)) if (value === undefined) expect(decision).not.toHaveProperty(key);
  });

  it('is deterministic: the same input gives the same decision', () => {
    const pinInput = input({ pinnedRevisionName: REV1, syncToken: 't1' }, { live: V2, revisions: { [REV1]: revision(V1) } });
    expect(decidePin(pinInput)).toEqual(decidePin(pinInput));
  });
});

describe('decidePin: RuntimeReady', () => {
  const followLive = { name: RUNTIME, kind: 'ServingRuntime', autoSync: true };
  it.each<[string, PinInput, PinDecision['runtimeReady']]>([
    [
      'a runtime followed live is missing: unresolved, with upstream\'s message',
      input({ runtime: followLive }, { live: 'missing' }),
      { state: 'unresolved', message: 'runtime sglang-llama-3-2-3b not found in namespace llama-demo or at cluster scope' },
    ],
    ['autoSync unset follows live too', input({ runtime: { name: RUNTIME } }, { live: 'missing' }), { state: 'unresolved', message: expect.stringContaining('not found in namespace llama-demo') }],
    ['a runtime followed live is found: resolved', input({ runtime: followLive }), { state: 'resolved' }],
    ['a pinned service\'s runtime is found: resolved', input({ pinnedRevisionName: REV1 }, { revisions: { [REV1]: revision(V1) } }), { state: 'resolved' }],
    ['a pinned service\'s runtime is missing: left to RuntimeDrifted', input({ pinnedRevisionName: REV1 }, { live: 'missing', revisions: { [REV1]: revision(V1) } }), undefined],
    ['the first pin of a missing runtime: left to its RuntimePinError', input({}, { live: 'missing' }), undefined],
    ['a lookup that failed otherwise tells nothing', input({ runtime: followLive }, { live: 'broken' }), undefined],
    ['no runtime named', input({ runtime: { autoSync: true } }, { live: 'missing' }), undefined],
    ['no runtime at all', input({ runtime: undefined }, { live: 'missing' }), undefined],
  ])('%s', (_name, pinInput, expected) => {
    const decision = decidePin(pinInput);
    if (expected === undefined) expect(decision).not.toHaveProperty('runtimeReady');
    else expect(decision.runtimeReady).toEqual(expected);
  });
});

describe('findUnusableSyncToken', () => {
  it.each([
    ['mem-frac-0-85', undefined],
    ['cli-runtime-sync-3f0c9a52-8d1e-4b7a-9c65-2e4f1d7b8a90', undefined],
    ['2026-09-28T14:15:57Z', undefined],
    ['has space', undefined],
    ['a/b:c#d', undefined],
    ['multi\nline', undefined],
    ['x'.repeat(200), undefined],
    ['x'.repeat(262_000), undefined],
    ['emoji \u{1F680}', undefined],
    ['nul\u0000inside', 'it contains a NUL character'],
    ['lone \uD800 high', 'it is not valid Unicode'],
    ['lone \uDC00 low', 'it is not valid Unicode'],
  ])('%j: %s', (token, problem) => {
    const message = findUnusableSyncToken(token);
    if (problem === undefined) expect(message).toBeUndefined();
    else expect(message).toContain(problem);
  });

  it('quotes at most 64 characters of a long value, with its length', () => {
    const message = findUnusableSyncToken(`${'y'.repeat(5000)}\u0000`) ?? '';
    expect(message).toContain(`"${'y'.repeat(64)}"… (5001 characters)`);
    expect(message.length).toBeLessThan(400);
  });
});
