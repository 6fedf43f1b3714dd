import { describe, expect, it } from 'vitest';
import { analysisStateOf, buildExplainRows, formatExplainTable, type ExplainInput } from '../../shared/domain/rollout/explain';
import type { RolloutGroup, RolloutRun } from '../../shared/domain/rollout/types';
import { manualCanary, policies, policy } from './fixtures';

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

/**
 * Whole tables for the cases the documented example does not reach: policy groups with
 * and without a readable body, shadowed policies, unreadable conditions, a pinned mixed
 * plan with holds, rejections and per-component traffic, and the CONFIG effects.
 */
describe('Function: buildExplainRows, whole tables', () => {
  const table = (input: ExplainInput) => formatExplainTable(buildExplainRows(input)).split('\n');

  it('shows a policy group live from its body, a shadowed policy, unreadable conditions and a global pause', () => {
    const input: ExplainInput = {
      specGroups: [
        { components: ['engine'], policyRef: { name: 'guarded', progression: 'canary' } },
        { components: ['router'], blueGreen: {}, policyRef: { name: 'bg', progression: 'blueGreen' } },
      ],
      rollout: { groups: [{ index: 0, source: 'Policy', observedDigest: 'rp1:bbbbbbbbbbbb' }, { index: 1, source: 'Inline' }] },
      policiesByName: policies(policy('guarded', { canary: { steps: [{ capacity: 1, traffic: 5, pause: { duration: '1m' } }] } }, { generation: 2 })),
      conditions: [
        { type: 'RolloutPlanReady', status: 'True', reason: 'NoActiveRun' },
        { type: 'RolloutPlanReady', status: 'True', reason: 'NoActiveRun' },
        { type: 'RolloutPlanDrift', status: 'False', reason: '' },
      ],
      annotations: { 'ome.io/rollout-paused': 'true' },
    };
    expect(table(input)).toEqual([
      'VIEW        ITEM       DETAIL',
      'Declared    PLAN       groups=2',
      '            GROUP 0    Canary; components=engine; source=Declared/Policy',
      '            CONFIG     policy=RolloutPolicy/guarded',
      '            GROUP 1    BlueGreen; components=router; source=Declared/Inline',
      '            CONFIG     shadowed=RolloutPolicy/bg',
      'Live        PLAN       mode=Live; groups=2',
      '            GROUP 0    Canary; components=engine; source=Reported/Policy',
      '            CONFIG     policy=RolloutPolicy/guarded',
      '                       digest=rp1:bbbbbbbbbbbb',
      '            STEP 1/1   capacity=1; traffic=5%; gate=Timed',
      '            GROUP 1    BlueGreen; components=router; source=Declared/Inline',
      '            CONFIG     shadowed=RolloutPolicy/bg',
      'Effective   PLAN       mode=Live; evidence=Declared; groups=2',
      '            READY      Invalid/Unknown; evidence=Reported',
      '            DRIFT      Invalid/Unknown; evidence=Reported',
      '            HOLD       GlobalPause; evidence=Declared',
      '            GROUP 0    Canary; components=engine; source=Declared/Policy',
      '            CONFIG     policy=RolloutPolicy/guarded',
      '                       digest=rp1:bbbbbbbbbbbb',
      '            STEP 1/1   capacity=1; traffic=5%; gate=Timed',
      '            GROUP 1    BlueGreen; components=router; source=Declared/Inline',
      '            CONFIG     shadowed=RolloutPolicy/bg',
      '            ISSUES     EpochUnverifiable',
      '',
    ]);
  });

  it('shows a pinned mixed plan: origin, policy without generation, hold, rejection and per-group traffic', () => {
    const canaryGroup: RolloutGroup = { components: ['engine', 'decoder'], canary: { steps: [{ capacity: '50%', traffic: 50 }] }, maintainRatio: { tolerance: 3 }, soak: '90s' };
    const input: ExplainInput = {
      specGroups: [{ components: ['router'] }, canaryGroup],
      rollout: {
        activeRun: {
          ...pinnedFromPolicy,
          plan: {
            groups: [
              { source: 'Inline', group: { components: ['router'], blueGreen: {} } },
              {
                source: 'Policy',
                policyRef: { name: 'p', progression: 'canary' },
                group: { ...canaryGroup, canary: { steps: [{ capacity: '50%', traffic: 50, analysis: { interval: '1m', failureLimit: 1, metrics: [] } }] } },
              },
            ],
          },
        },
      },
      observed: new Map([[1, { phase: 'Paused', hold: 'ObservedPaused', canary: { currentStep: 0, observedTrafficWeight: 50, rolledBackRevisionHash: 'cccccccc' } }]]),
      traffic: [
        { component: 'router', revision: 'r1', percent: 100 },
        { component: 'decoder', revision: 'd1', percent: 100 },
      ],
      annotations: { 'ome.io/rollout-paused': 'false' },
    };
    expect(table(input).slice(15)).toEqual([
      'Effective   PLAN        mode=Pinned; evidence=Reported; groups=2',
      '            READY       Unobserved; evidence=Unavailable',
      '            DRIFT       Unobserved; evidence=Unavailable',
      '            GROUP 0     BlueGreen; components=router; source=Reported/Inline',
      '            CONFIG      origin=Unknown',
      '            TRAFFIC     router:r1=100%',
      '            GROUP 1     Canary; components=engine,decoder; source=Reported/Policy',
      '            CONFIG      policy=RolloutPolicy/p',
      '                        soak=1m30s(Configured;IgnoredPlanShape)',
      '                        ratio=3(Configured;IgnoredPlanShape)',
      '            PHASE       Paused',
      '            HOLD        ObservedPaused; evidence=Reported',
      '            REVISIONS   stable=aaaaaaaa,target=bbbbbbbb,rejected=cccccccc',
      '            TRAFFIC     decoder:d1=100%',
      '            ANALYSIS    step=1/1; state=Unobserved; evidence=Reported',
      '                        evaluated=never; conclusive=never',
      '                        failedChecks=0/1',
      '                        interval=1m0s; warmUp=none; bake=none; onInconclusive=Hold',
      '            STEP 1/1    capacity=50%; traffic=50%; gate=Analysis',
      '            ISSUES      EpochUnverifiable',
      '',
    ]);
  });

  it('prefers the observed canary hashes over the run targets for REVISIONS', () => {
    const input: ExplainInput = { ...docExample, observed: new Map([[0, { canary: { currentStep: 0, observedTrafficWeight: 0, stableRevisionHash: '11111111', canaryRevisionHash: '22222222' } }]]) };
    expect(buildExplainRows(input).filter((row) => row.item === 'REVISIONS').map((row) => row.detail)).toEqual(['stable=11111111,target=22222222']);
    expect(buildExplainRows({ ...docExample, rollout: { activeRun: { ...pinnedFromPolicy, targetRevisions: [] } } }).some((row) => row.item === 'REVISIONS')).toBe(false);
  });

  it('shows each CONFIG effect of soak, budgets and ratio', () => {
    const groups: RolloutGroup[] = [
      { components: ['router'], soak: 'later' },
      { components: ['engine'], blueGreen: {}, maintainRatio: { tolerance: 1 } },
      { components: ['decoder'], rollingUpdate: { maxUnavailable: '10%' }, soak: '5m' },
    ];
    const declared = buildExplainRows({ specGroups: groups }).filter((row) => row.view === 'Declared').map((row) => `${row.item}|${row.detail}`);
    expect(declared).toEqual([
      'PLAN|groups=3',
      'GROUP 0|BlueGreen; components=router; source=Declared/Defaulted',
      'CONFIG|strategy=defaulted',
      '|soak=later(Configured;IgnoredPlanShape)',
      'GROUP 1|BlueGreen; components=engine; source=Declared/Inline',
      'CONFIG|ratio=1(Configured;IgnoredSingleComponent)',
      'GROUP 2|RollingUpdate; components=decoder; source=Declared/Inline',
      'CONFIG|soak=5m0s(Configured;IgnoredPlanShape)',
      '|surge=25%(Defaulted)',
      '|unavailable=10%(Configured)',
    ]);
    const single = buildExplainRows({ specGroups: [{ components: ['engine', 'decoder'], blueGreen: {}, soak: '1m', maintainRatio: { tolerance: 2 } }] });
    expect(single.filter((row) => row.view === 'Declared' && (row.item === 'CONFIG' || row.item === '')).map((row) => row.detail)).toEqual([
      'soak=1m0s(Configured;IgnoredPlanShape)',
      'ratio=2(Configured)',
    ]);
  });

  it('reads READY and DRIFT only when each is reported once with a reason', () => {
    const conditions = [{ type: 'RolloutPlanReady', status: 'True' as const, reason: '' }, { type: 'RolloutPlanDrift', status: 'True' as const, reason: 'SpecNewerThanRun' }];
    const rows = buildExplainRows({ specGroups: [manualCanary()], conditions });
    expect(rows.filter((row) => row.item === 'READY' || row.item === 'DRIFT').map((row) => row.detail)).toEqual([
      'Invalid/Unknown; evidence=Reported',
      'True/SpecNewerThanRun; evidence=Reported',
    ]);
    const parked = [{ type: 'RolloutPlanReady', status: 'False' as const, reason: 'X' }, { type: 'RolloutPlanReady', status: 'False' as const, reason: 'X' }];
    expect(buildExplainRows({ specGroups: [manualCanary()], conditions: parked }).some((row) => row.item === 'HOLD')).toBe(false);
  });

  it('prints an empty plan with its header only', () => {
    expect(formatExplainTable(buildExplainRows({}))).toBe(
      ['VIEW        ITEM    DETAIL', 'Declared    PLAN    groups=0', 'Live        PLAN    mode=Live; groups=0', 'Effective   PLAN    mode=Live; evidence=Declared; groups=0', '            READY   Unobserved; evidence=Unavailable', '            DRIFT   Unobserved; evidence=Unavailable', ''].join('\n'),
    );
  });
});

describe('Function: analysisStateOf', () => {
  const at = '2026-12-01T20:00:00Z';
  it.each([
    ['no record', undefined, 'Unobserved'],
    ['results but never evaluated', { metricResults: [{ name: 'err', passed: true }] }, 'Unobserved'],
    ['evaluated with no metrics', { lastEvaluationTime: at }, 'Inconclusive'],
    ['every metric passed', { lastEvaluationTime: at, metricResults: [{ name: 'a', value: '0.01', passed: true }, { name: 'b', value: '3', passed: true }] }, 'Passing'],
    ['one breached', { lastEvaluationTime: at, metricResults: [{ name: 'a', value: '0.2', passed: false }, { name: 'b', passed: false, message: 'no data' }] }, 'Failing'],
    ['none breached, one without data', { lastEvaluationTime: at, metricResults: [{ name: 'a', value: '0.01', passed: true }, { name: 'b', passed: false, message: 'no data' }] }, 'Inconclusive'],
    ['an auth entry', { lastEvaluationTime: at, metricResults: [{ name: 'auth', passed: false, message: 'resolve bearer token: secret not found' }] }, 'Inconclusive'],
  ] as const)('%s: %s', (_name, canary, state) => {
    expect(analysisStateOf(canary as Parameters<typeof analysisStateOf>[0])).toBe(state);
  });
});

describe('Function: buildExplainRows, analysis', () => {
  const analysis = { interval: '1s', initialDelay: '2s', failureLimit: 3, onInconclusive: 'Rollback' as const, metrics: [{ name: 'err', query: 'q', operator: 'LT' as const, threshold: '0.05' }] };
  const steps = [{ capacity: '50%', traffic: 50, pause: { duration: '10s' }, analysis }, { capacity: '100%', traffic: 100 }];
  const canary = {
    currentStep: 0,
    observedTrafficWeight: 50,
    canaryRevisionHash: 'bbbbbbbb',
    analysisFailedChecks: 1,
    lastEvaluationTime: '2026-12-01T20:00:05Z',
    lastConclusiveEvaluationTime: '2026-12-01T20:00:05Z',
    metricResults: [
      { name: 'err', value: '0.25', threshold: '0.05', operator: 'LT' as const, passed: false, time: '2026-12-01T20:00:05Z' },
      { name: 'p99', threshold: '2', operator: 'LTE' as const, passed: false, message: 'no data', time: '2026-12-01T20:00:05Z' },
    ],
  };
  /** The ANALYSIS row, its continuation rows and the METRIC rows after it. */
  const analysisRows = (input: ExplainInput): string[] => {
    const rows = buildExplainRows(input);
    const start = rows.findIndex((row) => row.item === 'ANALYSIS');
    if (start < 0) return [];
    const end = rows.findIndex((row, index) => index > start && !['', 'METRIC'].includes(row.item));
    return rows.slice(start, end < 0 ? undefined : end).map((row) => `${row.item || '-'} ${row.detail}`);
  };

  it('shows the state, times, failed checks against the limit, the timing and each metric of the active run', () => {
    const run: RolloutRun = { ...pinnedFromPolicy, plan: { groups: [{ source: 'Inline', group: { components: ['engine'], canary: { steps } } }] } };
    expect(analysisRows({ specGroups: [], rollout: { activeRun: run }, observed: new Map([[0, { phase: 'Paused', canary }]]) })).toEqual([
      'ANALYSIS step=1/2; state=Failing; evidence=Reported',
      '- evaluated=2026-12-01T20:00:05Z; conclusive=2026-12-01T20:00:05Z',
      '- failedChecks=1/3',
      '- interval=1s; warmUp=2s; bake=10s; onInconclusive=Rollback',
      'METRIC err; value=0.25; LT 0.05; failed',
      'METRIC p99; LTE 2; inconclusive; message=no data',
    ]);
  });

  it('keeps showing the sample that rolled a canary back once its run closed', () => {
    const rejected = { ...canary, analysisFailedChecks: 3, rolledBackRevisionHash: 'bbbbbbbb' };
    const rows = analysisRows({ specGroups: [{ components: ['engine'], canary: { steps } }], rollout: {}, observed: new Map([[0, { canary: rejected }]]) });
    expect(rows[0]).toBe('ANALYSIS step=1/2; state=Failing; evidence=Reported');
    expect(rows).toContain('- failedChecks=3/3');
    // Declared and Live views carry no observed state.
    expect(buildExplainRows({ specGroups: [{ components: ['engine'], canary: { steps } }], rollout: {}, observed: new Map([[0, { canary: rejected }]]) }).filter((row) => row.item === 'ANALYSIS').map((row) => row.view)).toEqual(['Effective']);
  });

  it('shows no analysis rows for a step without analysis and no record', () => {
    const manual = { ...canary, lastEvaluationTime: undefined, metricResults: undefined, currentStep: 1 };
    const run: RolloutRun = { ...pinnedFromPolicy, plan: { groups: [{ source: 'Inline', group: { components: ['engine'], canary: { steps } } }] } };
    expect(analysisRows({ rollout: { activeRun: run }, observed: new Map([[0, { canary: manual }]]) })).toEqual([]);
  });
});
