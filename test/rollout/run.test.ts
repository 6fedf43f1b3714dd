import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { resolveLivePlan } from '../../shared/domain/rollout/plan';
import { closeRun, computeRunID, formatKubeTime, keepNewerPin, nextPinnedAt, openRun, orderTargetsByPlan, recordedRunID } from '../../shared/domain/rollout/run';
import { manualCanary, NOW, policies } from './fixtures';

const hash = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 12);

describe('Function: computeRunID', () => {
  it.each([
    [[{ component: 'engine', revision: 'bbbbbbbb' }], ['rp1:aaaaaaaaaaaa'], 'engine=bbbbbbbb;rp1:aaaaaaaaaaaa2026-08-31T18:00:00Z'],
    [
      [{ component: 'engine', revision: 'e1' }, { component: 'decoder', revision: 'd1' }],
      ['rp1:aaaaaaaaaaaa', 'rp1:cca45ec1fb0f'],
      // In the order given, never sorted: upstream hashes the targets in plan order.
      'engine=e1;decoder=d1;rp1:aaaaaaaaaaaa,rp1:cca45ec1fb0f2026-08-31T18:00:00Z',
    ],
  ])('hashes targets, digests and openedAt (%#)', (targets, digests, preimage) => {
    expect(computeRunID('chat', targets, digests, '2026-08-31T18:00:00Z')).toBe(`chat-${hash(preimage)}`);
  });
});

describe('Function: orderTargetsByPlan', () => {
  const group = (...components: ('router' | 'engine' | 'decoder')[]) => ({ group: { components } });
  it.each<[string, string[], ReturnType<typeof group>[], string[]]>([
    ['plan order across groups', ['engine', 'decoder', 'router'], [group('router'), group('decoder', 'engine')], ['router', 'decoder', 'engine']],
    ['a component listed twice counts once', ['engine'], [group('engine'), group('engine')], ['engine']],
    ['a target no group names goes last', ['router', 'engine'], [group('engine')], ['engine', 'router']],
    ['a group component without a target is skipped', ['engine'], [group('router', 'engine')], ['engine']],
  ])('%s', (_name, components, groups, expected) => {
    const targets = components.map((component) => ({ component, revision: `${component}-rev` }));
    expect(orderTargetsByPlan(targets, groups).map((target) => target.component)).toEqual(expected);
  });

  it('opens a run whose targets and runID follow the plan order', () => {
    const live = resolveLivePlan([{ components: ['router'] }, { components: ['decoder', 'engine'] }], policies());
    if (!live.ok) throw new Error('fixture');
    const run = openRun({
      isvcName: 'chat',
      targetRevisions: [
        { component: 'engine', revision: 'e1', stableRevision: 'e0' },
        { component: 'decoder', revision: 'd1', stableRevision: 'd0' },
        { component: 'router', revision: 'r1', stableRevision: 'r0' },
      ],
      plan: live.plan,
      now: new Date('2026-08-31T18:00:00Z'),
    });
    expect(run.targetRevisions?.map((target) => target.component)).toEqual(['router', 'decoder', 'engine']);
    expect(run.runID).toBe(`chat-${hash(`router=r1;decoder=d1;engine=e1;${live.plan.groupDigests.join(',')}2026-08-31T18:00:00Z`)}`);
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
    // Upstream's RolloutRunRecord has no runID field: a real API server would prune one.
    expect(record).toEqual({
      outcome,
      openedAt: run.openedAt,
      closedAt: '2026-08-31T18:30:00Z',
      targetRevisions: run.targetRevisions,
      groups: [{ source: 'Inline', portableDigest: live.plan.groupDigests[0] }],
    });
  });

  it('recomputes the closed run ID from what lastRun keeps', () => {
    const record = closeRun(run, 'Completed', NOW);
    expect(recordedRunID('chat', record)).toBe(run.runID);
    expect(recordedRunID('other', record)).not.toBe(run.runID);
    const { openedAt: _gone, ...withoutOpenedAt } = record;
    expect(recordedRunID('chat', withoutOpenedAt)).toBeUndefined();
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

describe('Function: computeRunID, target order', () => {
  it('hashes targets in the order given (so listing order changes the ID), and an absent revision as empty', () => {
    const targets = [{ component: 'router', revision: 'r1' }, { component: 'decoder', revision: undefined as unknown as string }, { component: 'engine', revision: 'e1' }];
    const expected = `chat-${hash('router=r1;decoder=;engine=e1;rp1:aaaaaaaaaaaa2026-08-31T18:00:00Z')}`;
    expect(computeRunID('chat', targets, ['rp1:aaaaaaaaaaaa'], '2026-08-31T18:00:00Z')).toBe(expected);
    expect(computeRunID('chat', [...targets].reverse(), ['rp1:aaaaaaaaaaaa'], '2026-08-31T18:00:00Z')).not.toBe(expected);
  });
});

describe('Function: closeRun, provenance', () => {
  it('keeps each group source, policyRef and digest, and copes with a plan without groups', () => {
    const run = {
      runID: 'chat-1',
      openedAt: '2026-08-31T18:00:00Z',
      pinnedAt: '2026-08-31T18:00:00Z',
      plan: {
        groups: [
          { source: 'Policy' as const, policyRef: { name: 'guarded', progression: 'canary' as const }, portableDigest: 'rp1:aaaaaaaaaaaa', group: { components: ['engine' as const] } },
          { source: 'Inline' as const, group: { components: ['router' as const] } },
        ],
      },
    };
    expect(closeRun(run, 'Completed', NOW)).toEqual({
      outcome: 'Completed',
      openedAt: '2026-08-31T18:00:00Z',
      closedAt: '2026-08-31T18:30:00Z',
      groups: [{ source: 'Policy', policyRef: { name: 'guarded', progression: 'canary' }, portableDigest: 'rp1:aaaaaaaaaaaa' }, { source: 'Inline' }],
    });
    expect(closeRun({ ...run, plan: {} }, 'Superseded', NOW).groups).toEqual([]);
  });
});

describe('Function: keepNewerPin / nextPinnedAt, equal times', () => {
  it('takes the incoming copy when both were pinned at the same second', () => {
    const current = { runID: 'chat-1', openedAt: '2026-08-31T18:00:00Z', pinnedAt: '2026-08-31T18:10:00Z', plan: { groups: [] } };
    const incoming = { ...current, targetRevisions: [] };
    expect(keepNewerPin(current, incoming)).toBe(incoming);
    expect(keepNewerPin(current, undefined)).toBeUndefined();
  });

  it('writes now in its own format when it equals the previous pin', () => {
    expect(nextPinnedAt('2026-08-31T18:30:00.000+00:00', NOW)).toBe('2026-08-31T18:30:00Z');
  });
});
