import { describe, expect, it } from 'vitest';
import {
  collapsesToSequential,
  passSequence,
  sequenceTurn,
  type CoordinationGroupStatus,
  type SequenceGroupObservation,
  type SequenceMember,
} from '../../shared/domain/rollout/sequence';
import type { RolloutGroup } from '../../shared/domain/rollout/types';

const blueGreen = (component: string, extra: Partial<RolloutGroup> = {}): RolloutGroup => ({ components: [component], blueGreen: {}, ...extra }) as RolloutGroup;
const bare = (component: string): RolloutGroup => ({ components: [component] }) as RolloutGroup;
const canary = (component: string): RolloutGroup => ({ components: [component], canary: { steps: [{ capacity: '50%', traffic: 50 }] } }) as RolloutGroup;
const rolling = (component: string): RolloutGroup => ({ components: [component], rollingUpdate: {} }) as RolloutGroup;

describe('collapsesToSequential (upstream rolloutCollapsesToSequential under Sequential ordering)', () => {
  const cases: [string, RolloutGroup[], string | undefined, boolean][] = [
    ['two single-component blueGreen groups', [blueGreen('decoder'), blueGreen('engine')], undefined, true],
    ['groups with no progression count as blueGreen', [bare('decoder'), bare('engine')], undefined, true],
    ['explicit Sequential ordering', [blueGreen('decoder'), blueGreen('engine')], 'Sequential', true],
    ['Concurrent ordering runs them at once', [blueGreen('decoder'), blueGreen('engine')], 'Concurrent', false],
    ['one blueGreen group is not a sequence', [blueGreen('engine')], undefined, false],
    ['canary groups do not count toward the two', [canary('router'), blueGreen('engine')], undefined, false],
    ['canary groups stay outside a sequence', [blueGreen('decoder'), canary('router'), blueGreen('engine')], undefined, true],
    ['a rollingUpdate group breaks the collapse', [blueGreen('decoder'), rolling('engine')], undefined, false],
    ['a multi-component group breaks the collapse', [blueGreen('decoder'), { components: ['engine', 'router'] } as RolloutGroup], undefined, false],
    ['a policyRef progression shapes it like its inline form', [{ components: ['decoder'], policyRef: { name: 'p', progression: 'blueGreen' } } as RolloutGroup, bare('engine')], undefined, true],
    ['a policyRef rollingUpdate breaks it', [{ components: ['decoder'], policyRef: { name: 'p', progression: 'rollingUpdate' } } as RolloutGroup, bare('engine')], undefined, false],
    ['no groups', [], undefined, false],
  ];
  it.each(cases)('%s', (_name, groups, ordering, expected) => {
    expect(collapsesToSequential(groups, ordering)).toBe(expected);
  });
});

describe('sequenceTurn', () => {
  const now = new Date('2026-01-01T00:10:00Z');
  const member = (index: number, fields: Partial<SequenceMember> = {}): SequenceMember => ({ index, targeted: true, complete: false, ...fields });
  const cases: [string, SequenceMember[], ReturnType<typeof sequenceTurn>][] = [
    ['the first incomplete group is active, later ones held', [member(0), member(1), member(2)], { active: 0, held: [1, 2] }],
    ['a completed group without soak hands over at once', [member(0, { complete: true, completedAt: '2026-01-01T00:09:59Z' }), member(1)], { active: 1, held: [] }],
    [
      'a soak not yet elapsed holds the next group, with the seconds left',
      [member(0, { complete: true, completedAt: '2026-01-01T00:09:30Z', soak: '1m' }), member(1)],
      { held: [1], soakRemainingSeconds: 30 },
    ],
    ['an elapsed soak hands over', [member(0, { complete: true, completedAt: '2026-01-01T00:09:00Z', soak: '1m' }), member(1)], { active: 1, held: [] }],
    ['the soak counts in Go durations', [member(0, { complete: true, completedAt: '2026-01-01T00:09:00Z', soak: '1m30s' }), member(1)], { held: [1], soakRemainingSeconds: 30 }],
    ['a soak with no recorded completion has not started', [member(0, { complete: true, soak: '45s' }), member(1)], { held: [1], soakRemainingSeconds: 45 }],
    ['a later group already at its target is not held', [member(0), member(1, { complete: true, completedAt: '2026-01-01T00:09:59Z', soak: '1h' })], { active: 0, held: [] }],
    ['soak after the last targeted group holds nothing', [member(0, { complete: true, completedAt: '2026-01-01T00:09:59Z', soak: '1h' }), member(1, { targeted: false })], { held: [] }],
    ['soak after the last group of all', [member(0, { complete: true, completedAt: '2026-01-01T00:09:59Z', soak: '1h' })], { held: [] }],
    ['an untargeted group is passed over', [member(0, { targeted: false }), member(1), member(2)], { active: 1, held: [2] }],
    [
      'an untargeted group between does not absorb the soak',
      [member(0, { complete: true, completedAt: '2026-01-01T00:09:50Z', soak: '20s' }), member(1, { targeted: false }), member(2)],
      { held: [2], soakRemainingSeconds: 10 },
    ],
    ['every group complete: nothing active', [member(0, { complete: true }), member(1, { complete: true })], { held: [] }],
    [
      'a soak holds every later group, not only the next',
      [member(0, { complete: true, completedAt: '2026-01-01T00:09:55Z', soak: '10s' }), member(1), member(2)],
      { held: [1, 2], soakRemainingSeconds: 5 },
    ],
    ['sub-second soak rounds up', [member(0, { complete: true, completedAt: '2026-01-01T00:10:00Z', soak: '500ms' }), member(1)], { held: [1], soakRemainingSeconds: 1 }],
  ];
  it.each(cases)('%s', (_name, members, expected) => {
    expect(sequenceTurn(members, now)).toEqual(expected);
  });
});

describe('passSequence', () => {
  const at = '2026-01-01T00:10:00Z';
  const now = new Date(at);
  const group = (index: number, fields: Partial<SequenceGroupObservation> = {}): SequenceGroupObservation => ({
    index,
    components: [['decoder', 'engine', 'router'][index] as string],
    targeted: true,
    complete: false,
    ...fields,
  });
  const cases: [string, SequenceGroupObservation[], CoordinationGroupStatus[] | undefined, ReturnType<typeof passSequence>][] = [
    [
      'at run open the first group begins',
      [group(0), group(1)],
      undefined,
      { groups: [{ name: '0', components: ['decoder'], phase: 'Waiting', lastTransitionTime: at }], turn: { active: 0, held: [1] }, begun: [0] },
    ],
    [
      'a group still coming up keeps its entry and does not begin again',
      [group(0), group(1)],
      [{ name: '0', components: ['decoder'], phase: 'Waiting', lastTransitionTime: '2026-01-01T00:05:00Z' }],
      { groups: [{ name: '0', components: ['decoder'], phase: 'Waiting', lastTransitionTime: '2026-01-01T00:05:00Z' }], turn: { active: 0, held: [1] }, begun: [] },
    ],
    [
      'a group seen complete is recorded Idle now and its soak starts',
      [group(0, { complete: true, soak: '1m' }), group(1)],
      [{ name: '0', components: ['decoder'], phase: 'Waiting', lastTransitionTime: '2026-01-01T00:05:00Z' }],
      {
        groups: [{ name: '0', components: ['decoder'], phase: 'Idle', lastTransitionTime: at, compositePhase: 'Sequential.AwaitingNextComponent' }],
        turn: { held: [1], soakRemainingSeconds: 60 },
        begun: [],
      },
    ],
    [
      'a recorded completion keeps its time; once the soak elapsed the next group begins',
      [group(0, { complete: true, soak: '1m' }), group(1)],
      [{ name: '0', components: ['decoder'], phase: 'Idle', lastTransitionTime: '2026-01-01T00:08:00Z', compositePhase: 'Sequential.AwaitingNextComponent' }],
      {
        groups: [
          { name: '0', components: ['decoder'], phase: 'Idle', lastTransitionTime: '2026-01-01T00:08:00Z' },
          { name: '1', components: ['engine'], phase: 'Waiting', lastTransitionTime: at },
        ],
        turn: { active: 1, held: [] },
        begun: [1],
      },
    ],
    [
      'an untargeted group gets no entry',
      [group(0, { targeted: false }), group(1)],
      undefined,
      { groups: [{ name: '1', components: ['engine'], phase: 'Waiting', lastTransitionTime: at }], turn: { active: 1, held: [] }, begun: [1] },
    ],
  ];
  it.each(cases)('%s', (_name, observed, recorded, expected) => {
    expect(passSequence(observed, recorded, at, now)).toEqual(expected);
  });
});
