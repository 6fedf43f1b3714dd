import { describe, expect, it } from 'vitest';
import type { InferenceServiceStatus } from '../../shared/domain/model/inference-service';
import { computeNextStatus } from '../../shared/use-cases/pinning/pin-status';
import type { PinDecision } from '../../shared/domain/runtime';

const REVISION = 'r-llama-demo-sglang-llama-3-2-3b-590753e8';
const NOW = Date.parse('2026-09-28T14:15:57Z');

/** A decision that keeps the pin as it is: hashes equal, nothing to report. */
const unchanged: PinDecision = {
  outcome: 'pinned',
  serve: { source: 'unchanged' },
  status: { pinnedRevisionName: REVISION, lastRuntimeSyncToken: '' },
  drift: { action: 'keep' },
  pausesUpdates: false,
  tokenConsumed: false,
};

const pinned: InferenceServiceStatus = { pinnedRevisionName: REVISION, observedGeneration: 2 };

describe('Function: computeNextStatus', () => {
  it.each<[string, InferenceServiceStatus, number | undefined, number | undefined]>([
    ['writes nothing when neither the pin nor the generation moved', pinned, 2, undefined],
    ['writes nothing when no generation is given (the drift fan-out)', pinned, undefined, undefined],
    ['records a new generation even when the pin stays', pinned, 3, 3],
    ['records the first generation it sees', { pinnedRevisionName: REVISION }, 1, 1],
  ])('%s', (_case, status, generation, expected) => {
    const next = computeNextStatus(status, unchanged, NOW, generation);
    expect(next?.observedGeneration).toBe(expected);
    if (next) expect(next.pinnedRevisionName).toBe(REVISION);
  });

  it('sets RuntimeDrifted with its message, keeping the generation current', () => {
    const next = computeNextStatus(
      pinned,
      { ...unchanged, outcome: 'drifted', drift: { action: 'set', reason: 'RevisionMismatch', message: `pinned ${REVISION}, live spec differs; bump ome.io/runtime-sync annotation to advance` } },
      NOW,
      2,
    );
    expect(next?.observedGeneration).toBe(2);
    expect(next?.conditions).toEqual([
      {
        type: 'RuntimeDrifted',
        status: 'True',
        reason: 'RevisionMismatch',
        message: `pinned ${REVISION}, live spec differs; bump ome.io/runtime-sync annotation to advance`,
        lastTransitionTime: '2026-09-28T14:15:57Z',
      },
    ]);
  });

  it.each([
    ['the reason changes', 'RevisionMissing', `pinned revision ${REVISION} missing from ome`, '2026-09-28T14:15:57Z'],
    ['only the message changes', 'RevisionMismatch', 'pinned r-other, live spec differs; bump ome.io/runtime-sync annotation to advance', '2026-09-28T14:15:57Z'],
    ['nothing changes', 'RevisionMismatch', `pinned ${REVISION}, live spec differs; bump ome.io/runtime-sync annotation to advance`, '2026-09-01T00:00:00Z'],
  ] as const)('moves RuntimeDrifted\'s lastTransitionTime when %s, as upstream', (_case, reason, message, expected) => {
    const drifted: InferenceServiceStatus = {
      ...pinned,
      conditions: [{ type: 'RuntimeDrifted', status: 'True', reason: 'RevisionMismatch', message: `pinned ${REVISION}, live spec differs; bump ome.io/runtime-sync annotation to advance`, lastTransitionTime: '2026-09-01T00:00:00Z' }],
    };
    const next = computeNextStatus(drifted, { ...unchanged, outcome: 'drifted', drift: { action: 'set', reason, message } }, NOW, 2);
    expect((next ?? drifted).conditions?.[0]?.lastTransitionTime).toBe(expected);
  });
});

describe('Function: computeNextStatus, RuntimeReady', () => {
  const message = 'runtime srt not found in namespace prod or at cluster scope';
  const followLive: PinDecision = { outcome: 'follow-live', serve: { source: 'live' }, drift: { action: 'keep' }, pausesUpdates: false, tokenConsumed: false };
  const notFound = { type: 'RuntimeReady', status: 'False' as const, reason: 'RuntimeNotFound', message, lastTransitionTime: '2026-09-01T00:00:00Z' };
  it.each<[string, InferenceServiceStatus, PinDecision['runtimeReady'], unknown[] | 'no write']>([
    ['turns False with the lookup\'s message while the runtime is missing', {}, { state: 'unresolved', message }, [{ ...notFound, lastTransitionTime: '2026-09-28T14:15:57Z' }]],
    ['writes nothing while it stays missing', { conditions: [notFound] }, { state: 'unresolved', message }, 'no write'],
    ['turns True/RuntimeResolved, without a message, once the runtime is found', { conditions: [notFound] }, { state: 'resolved' }, [{ type: 'RuntimeReady', status: 'True', reason: 'RuntimeResolved', lastTransitionTime: '2026-09-28T14:15:57Z' }]],
    ['adds no condition to a service that never missed its runtime', {}, { state: 'resolved' }, 'no write'],
    ['writes nothing once resolved', { conditions: [{ type: 'RuntimeReady', status: 'True' as const, reason: 'RuntimeResolved', lastTransitionTime: 't' }] }, { state: 'resolved' }, 'no write'],
    ['leaves it as it is when the decision tells nothing', { conditions: [notFound] }, undefined, 'no write'],
  ])('%s', (_case, status, runtimeReady, expected) => {
    const next = computeNextStatus(status, { ...followLive, ...(runtimeReady ? { runtimeReady } : {}) }, NOW);
    expect(next === undefined ? 'no write' : next.conditions).toEqual(expected);
  });
});
