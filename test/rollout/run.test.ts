import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { resolveLivePlan } from '../../shared/rollout/plan';
import { closeRun, computeRunID, formatKubeTime, keepNewerPin, nextPinnedAt, openRun } from '../../shared/rollout/run';
import { manualCanary, NOW, policies } from './fixtures';

const hash = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 12);

describe('Function: computeRunID', () => {
  it.each([
    [[{ component: 'engine', revision: 'bbbbbbbb' }], ['rp1:aaaaaaaaaaaa'], 'engine=bbbbbbbb;rp1:aaaaaaaaaaaa2026-08-31T18:00:00Z'],
    [
      [{ component: 'engine', revision: 'e1' }, { component: 'decoder', revision: 'd1' }],
      ['rp1:aaaaaaaaaaaa', 'rp1:cca45ec1fb0f'],
      'decoder=d1;engine=e1;rp1:aaaaaaaaaaaa,rp1:cca45ec1fb0f2026-08-31T18:00:00Z',
    ],
  ])('hashes targets, digests and openedAt (%#)', (targets, digests, preimage) => {
    expect(computeRunID('chat', targets, digests, '2026-08-31T18:00:00Z')).toBe(`chat-${hash(preimage)}`);
  });
});

describe('Function: openRun / closeRun', () => {
  const live = resolveLivePlan([manualCanary()], policies());
  if (!live.ok) throw new Error('fixture');
  const run = openRun({
    isvcName: 'chat',
    targetRevisions: [{ component: 'engine', revision: 'bbbbbbbb', stableRevision: 'aaaaaaaa' }],
    plan: live.plan,
    now: new Date('2026-08-31T18:00:00.123Z'),
  });

  it('pins the plan with openedAt = pinnedAt at second precision', () => {
    expect(run.openedAt).toBe('2026-08-31T18:00:00Z');
    expect(run.pinnedAt).toBe(run.openedAt);
    expect(run.runID).toBe(computeRunID('chat', run.targetRevisions ?? [], live.plan.groupDigests, run.openedAt));
    expect(run.plan.groups).toEqual(live.plan.groups);
    expect(run.targetRevisions).toEqual([{ component: 'engine', revision: 'bbbbbbbb', stableRevision: 'aaaaaaaa' }]);
  });

  it.each(['Completed', 'RolledBack', 'Superseded'] as const)('closes into lastRun with outcome %s', (outcome) => {
    const record = closeRun(run, outcome, NOW);
    expect(record).toEqual({
      outcome,
      runID: run.runID,
      openedAt: run.openedAt,
      closedAt: '2026-08-31T18:30:00Z',
      targetRevisions: run.targetRevisions,
      groups: [{ source: 'Inline', portableDigest: live.plan.groupDigests[0] }],
    });
  });
});

describe('Function: keepNewerPin', () => {
  const base = { runID: 'chat-1', openedAt: '2026-08-31T18:00:00Z', pinnedAt: '2026-08-31T18:00:00Z', plan: { groups: [] } };
  const repinned = { ...base, pinnedAt: '2026-08-31T18:10:00Z' };
  it.each([
    ['stale write after a repin keeps the repin', repinned, base, repinned],
    ['newer write wins', base, repinned, repinned],
    ['another run is taken as is', repinned, { ...base, runID: 'chat-2' }, { ...base, runID: 'chat-2' }],
    ['no current', undefined, base, base],
  ])('%s', (_name, current, incoming, expected) => {
    expect(keepNewerPin(current, incoming)).toEqual(expected);
  });
});

describe('Function: nextPinnedAt', () => {
  it.each([
    ['2026-08-31T18:00:00Z', NOW, formatKubeTime(NOW)],
    ['2026-08-31T19:00:00Z', NOW, '2026-08-31T19:00:00Z'],
  ])('from %s never moves backwards', (previous, now, expected) => {
    expect(nextPinnedAt(previous, now)).toBe(expected);
  });
});
