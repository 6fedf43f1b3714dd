import { describe, expect, it } from 'vitest';
import { buildExplainRows, formatExplainTable, type ExplainInput } from '../../shared/rollout/explain';
import type { RolloutGroup, RolloutRun } from '../../shared/rollout/types';
import { manualCanary } from './fixtures';

const pinnedFromPolicy: RolloutRun = {
  runID: 'chat-0123456789ab',
  openedAt: '2026-08-31T18:00:00Z',
  pinnedAt: '2026-08-31T18:00:00Z',
  targetRevisions: [{ component: 'engine', revision: 'bbbbbbbb', stableRevision: 'aaaaaaaa' }],
  plan: {
    groups: [
      {
        source: 'Policy',
        policyRef: { name: 'guarded', progression: 'canary' },
        policyGeneration: 4,
        portableDigest: 'rp1:aaaaaaaaaaaa',
        group: { components: ['engine'], canary: { steps: [{ capacity: '50%', traffic: 20, pause: {} }, { capacity: '100%', traffic: 100 }] } },
      },
    ],
  },
};

const docExample: ExplainInput = {
  specGroups: [manualCanary(10)],
  rollout: { activeRun: pinnedFromPolicy },
  conditions: [
    { type: 'RolloutPlanReady', status: 'True', reason: 'Pinned', message: 'run chat-0123456789ab pinned' },
    { type: 'RolloutPlanDrift', status: 'True', reason: 'SpecNewerThanRun', message: '' },
  ],
  observed: new Map([[0, { phase: 'Canarying' }]]),
  traffic: [
    { component: 'engine', revision: 'aaaaaaaa', percent: 80 },
    { component: 'engine', revision: 'bbbbbbbb', percent: 20 },
  ],
};

describe('Function: formatExplainTable', () => {
  it('prints the documented example byte for byte', () => {
    expect(formatExplainTable(buildExplainRows(docExample))).toBe(
      [
        'VIEW        ITEM        DETAIL',
        'Declared    PLAN        groups=1',
        '            GROUP 0     Canary; components=engine; source=Declared/Inline',
        '            STEP 1/2    capacity=25%; traffic=10%; gate=Manual',
        '            STEP 2/2    capacity=100%; traffic=100%; gate=Immediate',
        'Live        PLAN        mode=Live; groups=1',
        '            GROUP 0     Canary; components=engine; source=Declared/Inline',
        '            STEP 1/2    capacity=25%; traffic=10%; gate=Manual',
        '            STEP 2/2    capacity=100%; traffic=100%; gate=Immediate',
        'Effective   PLAN        mode=Pinned; evidence=Reported; groups=1',
        '            READY       True/Pinned; evidence=Reported',
        '            DRIFT       True/SpecNewerThanRun; evidence=Reported',
        '            GROUP 0     Canary; components=engine; source=Reported/Policy',
        '            CONFIG      policy=RolloutPolicy/guarded@4',
        '                        digest=rp1:aaaaaaaaaaaa',
        '            PHASE       Canarying',
        '            REVISIONS   stable=aaaaaaaa,target=bbbbbbbb',
        '            TRAFFIC     engine:aaaaaaaa=80%,engine:bbbbbbbb=20%',
        '            STEP 1/2    capacity=50%; traffic=20%; gate=Manual',
        '            STEP 2/2    capacity=100%; traffic=100%; gate=Immediate',
        '            ISSUES      EpochUnverifiable',
        '',
      ].join('\n'),
    );
  });
});

describe('Function: buildExplainRows', () => {
  const detailOf = (input: ExplainInput, view: string, item: string) =>
    buildExplainRows(input).filter((row) => row.view === view && row.item === item).map((row) => row.detail);

  it.each<[string, ExplainInput, string, string, string[]]>([
    ['no conditions yet', { specGroups: [manualCanary()] }, 'Effective', 'READY', ['Unobserved; evidence=Unavailable']],
    ['no run: the live plan is in force', { specGroups: [{ components: ['engine'] }] }, 'Effective', 'PLAN', ['mode=Live; evidence=Declared; groups=1']],
    ['default group', { specGroups: [{ components: ['engine'] }] }, 'Declared', 'GROUP 0', ['BlueGreen; components=engine; source=Declared/Defaulted']],
    ['default group config', { specGroups: [{ components: ['engine'] }] }, 'Declared', 'CONFIG', ['strategy=defaulted']],
    ['live policy group without its body', { specGroups: [{ components: ['engine'], policyRef: { name: 'guarded', progression: 'canary' } }] }, 'Live', 'ISSUES', ['PolicyBodyUnavailable']],
    ['global pause', { specGroups: [manualCanary()], annotations: { 'ome.io/rollout-paused': 'freeze' } }, 'Effective', 'HOLD', ['GlobalPause; evidence=Declared']],
    ['parked plan', { specGroups: [manualCanary()], conditions: [{ type: 'RolloutPlanReady', status: 'False', reason: 'PolicyNotFound' }] }, 'Effective', 'HOLD', ['PlanParked; evidence=Reported']],
    ['pre-step hold after a repin', { ...docExample, observed: new Map([[0, { phase: 'Pending', canary: { currentStep: 0, observedTrafficWeight: 10, preStepHold: true, canaryRevisionHash: 'bbbbbbbb' } }]]) }, 'Effective', 'HOLD', ['CanaryPreStep; evidence=Reported']],
    ['no rollout groups: no issues', {}, 'Effective', 'ISSUES', []],
    ['rolling update budgets', { specGroups: [{ components: ['engine', 'decoder'], rollingUpdate: { maxSurge: 1 }, maintainRatio: { tolerance: 5 } }] }, 'Declared', 'CONFIG', ['surge=1(Configured)']],
  ])('%s', (_name, input, view, item, expected) => {
    expect(detailOf(input, view, item)).toEqual(expected);
  });

  it('shows soak and ratio effects', () => {
    const groups: RolloutGroup[] = [{ components: ['decoder'], soak: '60s' }, { components: ['engine'], soak: '1m', maintainRatio: {} }];
    const details = buildExplainRows({ specGroups: groups }).filter((row) => row.view === 'Declared').map((row) => row.detail);
    expect(details).toContain('soak=1m0s(Configured)');
    expect(details).toContain('soak=1m0s(Configured;IgnoredFinalGroup)');
    expect(details).toContain('ratio=Unresolved');
  });
});
