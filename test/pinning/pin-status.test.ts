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
