/**
 * The pure rules of a fleet sync wave, as tables: which step comes next, which
 * InferenceServices a wave rolls forward, the acknowledgement rule of `kubectl ome wait`,
 * and when a cluster halts the wave.
 */
import { describe, expect, it } from 'vitest';
import {
  WaveFailureReason,
  acknowledgeCluster,
  chooseWaveTargets,
  createSyncWave,
  haltWave,
  hashTokenValue,
  isSyncAcknowledged,
  isWaveCandidate,
  judgeCluster,
  isRepinCandidate,
  maxUpdateOf,
  nextWaveStep,
  observeWaveTarget,
  orderClusters,
  parseWaveRuntime,
  startCluster,
  waveLever,
  waveToken,
} from '../../shared/domain/fleet/sync-wave';
import type { SyncWave, TargetObservation, WaveRuntime, WaveTarget } from '../../shared/domain/fleet/sync-wave';
import type { Event } from '../../shared/domain/model/core';
import type { InferenceService } from '../../shared/domain/model/inference-service';

const RUNTIME: WaveRuntime = { kind: 'ServingRuntime', namespace: 'ns', name: 'rt' };
const TOKEN = waveToken('w1');
const T0 = Date.parse('2026-12-01T10:00:00Z');

function isvc(edit: { annotation?: string; lastToken?: string; reason?: string; autoSync?: boolean; revision?: string; runtime?: string; kind?: string; namespace?: string; pinned?: string; uid?: string } = {}): InferenceService {
  return {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name: 'chat', namespace: edit.namespace ?? 'ns', uid: edit.uid ?? 'u1', ...(edit.annotation === undefined ? {} : { annotations: { 'ome.io/runtime-sync': edit.annotation } }) },
    spec: { runtime: { name: edit.runtime ?? 'rt', kind: (edit.kind ?? 'ServingRuntime') as 'ServingRuntime', autoSync: edit.autoSync ?? false, ...(edit.revision ? { revision: edit.revision } : {}) } },
    status: {
      ...(edit.pinned === '' ? {} : { pinnedRevisionName: edit.pinned ?? 'r-ns-rt-11111111' }),
      ...(edit.lastToken === undefined ? {} : { lastRuntimeSyncToken: edit.lastToken }),
      conditions: edit.reason === undefined ? [] : [{ type: 'RuntimeDrifted', status: 'True', reason: edit.reason, message: `why ${edit.reason}` }],
    },
  };
}

const target = (prior?: string): WaveTarget => ({ namespace: 'ns', name: 'chat', uid: 'u1', priorTokenHash: hashTokenValue(prior) });

function pinError(at: string, uid = 'u1'): Event {
  return { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e', namespace: 'ns' }, involvedObject: { uid, name: 'chat' }, reason: 'RuntimePinError', message: 'resolve live runtime rt: boom', lastTimestamp: at };
}

function wave(states: Array<SyncWave['clusters'][number]['state']>, state: SyncWave['state'] = 'Running'): SyncWave {
  const base = createSyncWave({ id: 'w1', runtime: RUNTIME, clusterIds: states.map((_, i) => `c${i + 1}`), ackTimeout: '30m', ackTimeoutMs: 1_800_000, now: T0 });
  return { ...base, state, clusters: base.clusters.map((step, i) => ({ ...step, state: states[i] ?? 'Pending' })) };
}

describe('nextWaveStep', () => {
  it.each([
    { name: 'a new wave starts its first cluster', wave: wave(['Pending', 'Pending', 'Pending']), want: { kind: 'start', index: 0 } },
    { name: 'a syncing cluster is awaited; the next is not started', wave: wave(['Syncing', 'Pending']), want: { kind: 'await', index: 0 } },
    { name: 'after an acknowledged cluster the next one starts', wave: wave(['Acknowledged', 'Pending', 'Pending']), want: { kind: 'start', index: 1 } },
    { name: 'the first unacknowledged cluster is the one awaited', wave: wave(['Acknowledged', 'Acknowledged', 'Syncing']), want: { kind: 'await', index: 2 } },
    { name: 'a halted wave does nothing', wave: wave(['Acknowledged', 'Failed', 'Pending'], 'Halted'), want: { kind: 'done' } },
    { name: 'a completed wave does nothing', wave: wave(['Acknowledged', 'Acknowledged'], 'Completed'), want: { kind: 'done' } },
  ])('$name', ({ wave: w, want }) => {
    expect(nextWaveStep(w)).toEqual(want);
  });
});

/** A staged wave: clusters by stage, each with its state (and acknowledgement time). */
function stagedWave(stages: Array<Array<SyncWave['clusters'][number]['state']>>, options: { maxUpdate?: string; soakMs?: number; acknowledgedAt?: number } = {}): SyncWave {
  const clusterIds = stages.flatMap((states, stage) => states.map((_, i) => `s${stage + 1}c${i + 1}`));
  const stageOf = stages.flatMap((states, stage) => states.map(() => stage));
  const base = createSyncWave({
    id: 'w1',
    runtime: RUNTIME,
    clusterIds,
    ackTimeout: '30m',
    ackTimeoutMs: 1_800_000,
    now: T0,
    stages: { stages: stages.map((_, i) => ({ selector: `stage=${i + 1}` })), stageOf },
    ...(options.maxUpdate ? { maxUpdate: options.maxUpdate } : {}),
    ...(options.soakMs ? { soak: { text: 'soak', ms: options.soakMs } } : {}),
  });
  const states = stages.flat();
  return {
    ...base,
    clusters: base.clusters.map((step, i) => ({ ...step, state: states[i] ?? 'Pending', ...(states[i] === 'Acknowledged' ? { acknowledgedAt: options.acknowledgedAt ?? T0 } : {}) })),
  };
}

describe('nextWaveStep, in stages', () => {
  const SOAK = 600_000;
  it.each([
    { name: 'half of a stage of four starts at once', wave: stagedWave([['Syncing', 'Pending', 'Pending', 'Pending']], { maxUpdate: '50%' }), checked: [0], want: { kind: 'start', index: 1 } },
    { name: 'no more than half are syncing', wave: stagedWave([['Syncing', 'Syncing', 'Pending', 'Pending']], { maxUpdate: '50%' }), checked: [0, 1], want: { kind: 'wait' } },
    { name: 'a syncing cluster not checked yet comes first', wave: stagedWave([['Syncing', 'Syncing', 'Pending', 'Pending']], { maxUpdate: '50%' }), checked: [0], want: { kind: 'await', index: 1 } },
    { name: 'an acknowledged one frees its place', wave: stagedWave([['Acknowledged', 'Syncing', 'Pending', 'Pending']], { maxUpdate: '50%' }), checked: [1], want: { kind: 'start', index: 2 } },
    { name: 'a count is a count', wave: stagedWave([['Syncing', 'Syncing', 'Pending']], { maxUpdate: '3' }), checked: [0, 1], want: { kind: 'start', index: 2 } },
    { name: 'a share rounds down, but never to none', wave: stagedWave([['Syncing', 'Pending']], { maxUpdate: '10%' }), checked: [0], want: { kind: 'wait' } },
    { name: 'the next stage waits for every cluster of the one before', wave: stagedWave([['Acknowledged', 'Syncing'], ['Pending']], { maxUpdate: '100%' }), checked: [1], want: { kind: 'wait' } },
    { name: 'the next stage soaks after the last acknowledgement', wave: stagedWave([['Acknowledged'], ['Pending']], { soakMs: SOAK }), checked: [], want: { kind: 'soak', stage: 1, until: T0 + SOAK } },
    { name: 'and starts once the soak is over', wave: stagedWave([['Acknowledged'], ['Pending']], { soakMs: SOAK, acknowledgedAt: T0 - SOAK }), checked: [], want: { kind: 'start', index: 1 } },
    { name: 'a stage under way does not soak again', wave: stagedWave([['Acknowledged'], ['Acknowledged', 'Pending']], { soakMs: SOAK }), checked: [], want: { kind: 'start', index: 2 } },
    { name: 'the first stage never soaks', wave: stagedWave([['Pending'], ['Pending']], { soakMs: SOAK }), checked: [], want: { kind: 'start', index: 0 } },
  ])('$name', ({ wave: w, checked, want }) => {
    expect(nextWaveStep(w, T0, new Set(checked))).toEqual(want);
  });

  it.each([
    [undefined, 7, 1],
    ['1', 7, 1],
    ['3', 2, 3],
    ['50%', 4, 2],
    ['50%', 3, 1],
    ['100%', 3, 3],
    ['1%', 3, 1],
  ])('maxUpdate %s of a stage of %d lets %d sync at once', (maxUpdate, size, want) => {
    expect(maxUpdateOf(maxUpdate, size)).toBe(want);
  });

  it.each(['0', '-1', '0%', '101%', 'half', '1.5', '50 %'])('refuses maxUpdate %s', (maxUpdate) => {
    expect(() => maxUpdateOf(maxUpdate, 4)).toThrow(RangeError);
  });

  it('orders the clusters stage by stage, keeping the order within a stage', () => {
    const created = createSyncWave({ id: 'w', runtime: RUNTIME, clusterIds: ['a', 'b', 'c', 'd'], ackTimeout: '30m', ackTimeoutMs: 1, now: T0, stages: { stages: [{ selector: 'x' }, { selector: 'y' }], stageOf: [1, 0, 1, 0] } });
    expect(created.clusters.map((step) => `${step.stage}:${step.clusterId}`)).toEqual(['0:b', '0:d', '1:a', '1:c']);
  });
});

describe('wave transitions', () => {
  it('acknowledges a cluster with no targets at once, and completes after the last cluster', () => {
    const started = startCluster(wave(['Acknowledged', 'Pending']), 1, [], T0 + 5);
    expect(started.clusters[1]).toMatchObject({ state: 'Acknowledged', startedAt: T0 + 5, acknowledgedAt: T0 + 5, targets: [] });
    expect(started.state).toBe('Completed');
  });

  it('moves a cluster with targets to Syncing, then Acknowledged, without touching the next', () => {
    const syncing = startCluster(wave(['Pending', 'Pending']), 0, [target()], T0);
    expect(syncing.clusters.map((s) => s.state)).toEqual(['Syncing', 'Pending']);
    const acked = acknowledgeCluster(syncing, 0, T0 + 1);
    expect(acked.clusters.map((s) => s.state)).toEqual(['Acknowledged', 'Pending']);
    expect(acked.state).toBe('Running');
  });

  it('halts at a cluster naming it; later clusters stay Pending; the input is not changed', () => {
    const before = wave(['Acknowledged', 'Syncing', 'Pending']);
    const halted = haltWave(before, 1, { namespace: 'ns', name: 'chat', reason: WaveFailureReason.pinError, message: 'm' }, T0 + 9);
    expect(halted).toMatchObject({ state: 'Halted', failure: { clusterId: 'c2', namespace: 'ns', name: 'chat', reason: 'RuntimePinError', message: 'm' }, updatedAt: T0 + 9 });
    expect(halted.clusters.map((s) => s.state)).toEqual(['Acknowledged', 'Failed', 'Pending']);
    expect(before.clusters[1]?.state).toBe('Syncing');
  });

  it('derives the token from the wave id, the same on every cluster', () => {
    expect(createSyncWave({ id: '20261201t100000-abc123', runtime: RUNTIME, clusterIds: ['a'], ackTimeout: '1m', ackTimeoutMs: 60_000, now: T0 }).token).toBe('fleet-sync-20261201t100000-abc123');
    expect(orderClusters(['b', 'a', 'b', 'c'])).toEqual(['a', 'b', 'c']);
  });
});

describe('isWaveCandidate', () => {
  it.each([
    { name: 'a managed pin of the runtime drifting with RevisionMismatch', object: isvc({ reason: 'RevisionMismatch' }), want: true },
    { name: 'in sync (no drift)', object: isvc(), want: false },
    { name: 'drifting for another reason', object: isvc({ reason: 'RevisionMissing' }), want: false },
    { name: 'autoSync true', object: isvc({ reason: 'RevisionMismatch', autoSync: true }), want: false },
    { name: 'an explicit revision pin', object: isvc({ reason: 'RevisionMismatch', revision: 'r-ns-rt-22222222' }), want: false },
    { name: 'another runtime', object: isvc({ reason: 'RevisionMismatch', runtime: 'other' }), want: false },
    { name: 'the same name as a ClusterServingRuntime', object: isvc({ reason: 'RevisionMismatch', kind: 'ClusterServingRuntime' }), want: false },
    { name: 'a ServingRuntime of the same name in another namespace', object: isvc({ reason: 'RevisionMismatch', namespace: 'other' }), want: false },
  ])('$name: $want', ({ object, want }) => {
    expect(isWaveCandidate(object, RUNTIME)).toBe(want);
  });

  it('a ClusterServingRuntime wave takes candidates from every namespace, remembering each prior token', () => {
    const csr: WaveRuntime = { kind: 'ClusterServingRuntime', namespace: '', name: 'rt' };
    const targets = chooseWaveTargets(
      [isvc({ reason: 'RevisionMismatch', kind: 'ClusterServingRuntime', namespace: 'z', uid: 'u2', annotation: 'old' }), isvc({ reason: 'RevisionMismatch', kind: 'ClusterServingRuntime', namespace: 'a' })],
      csr,
    );
    expect(targets).toEqual([
      { namespace: 'a', name: 'chat', uid: 'u1', priorTokenHash: hashTokenValue(undefined) },
      { namespace: 'z', name: 'chat', uid: 'u2', priorTokenHash: hashTokenValue('old') },
    ]);
  });
});

describe('isSyncAcknowledged (the rule of kubectl ome wait --for=runtime-sync=acknowledged)', () => {
  it.each([
    { name: 'annotation and status hold the token, no drift, managed pin', object: isvc({ annotation: TOKEN, lastToken: TOKEN }), want: true },
    { name: 'status still holds the old token', object: isvc({ annotation: TOKEN, lastToken: 'old' }), want: false },
    { name: 'status holds the token but the annotation changed', object: isvc({ annotation: 'newer', lastToken: TOKEN }), want: false },
    { name: 'RuntimeDrifted still present', object: isvc({ annotation: TOKEN, lastToken: TOKEN, reason: 'RevisionMismatch' }), want: false },
    { name: 'an explicit pin', object: isvc({ annotation: TOKEN, lastToken: TOKEN, revision: 'r-ns-rt-22222222' }), want: false },
    { name: 'no pinned revision', object: isvc({ annotation: TOKEN, lastToken: TOKEN, pinned: '' }), want: false },
  ])('$name: $want', ({ object, want }) => {
    expect(isSyncAcknowledged(object, TOKEN)).toBe(want);
  });
});

describe('observeWaveTarget', () => {
  const base = { target: target('old'), token: TOKEN, events: [] as Event[], since: T0 + 400, now: T0 + 60_000, ackTimeoutMs: 1_800_000, ackTimeout: '30m' };
  it.each<{ name: string; object: InferenceService | undefined; events?: Event[]; now?: number; want: TargetObservation['state'] | string }>([
    { name: 'acknowledged', object: isvc({ annotation: TOKEN, lastToken: TOKEN }), want: 'acknowledged' },
    { name: 'upstream has not acted yet', object: isvc({ annotation: TOKEN, lastToken: 'old', reason: 'RevisionMismatch' }), want: 'waiting' },
    { name: 'the wave patch has not landed (the prior value is still there)', object: isvc({ annotation: 'old', lastToken: 'old', reason: 'RevisionMismatch' }), want: 'unpatched' },
    { name: 'someone set another token', object: isvc({ annotation: 'someone-else', reason: 'RevisionMismatch' }), want: WaveFailureReason.superseded },
    { name: 'the object is gone', object: undefined, want: WaveFailureReason.gone },
    { name: 'the object was replaced (another uid)', object: isvc({ annotation: TOKEN, uid: 'u9' }), want: WaveFailureReason.gone },
    { name: 'no longer a managed pin', object: isvc({ annotation: TOKEN, autoSync: true }), want: WaveFailureReason.unpinned },
    { name: 'RuntimeDrifted with another reason', object: isvc({ annotation: TOKEN, lastToken: TOKEN, reason: 'RevisionMissing' }), want: WaveFailureReason.drifted },
    { name: 'a RuntimePinError since the step started (same second counts)', object: isvc({ annotation: TOKEN, reason: 'RevisionMismatch' }), events: [pinError('2026-12-01T10:00:00Z')], want: WaveFailureReason.pinError },
    { name: 'a RuntimePinError from before the step', object: isvc({ annotation: TOKEN, reason: 'RevisionMismatch' }), events: [pinError('2026-12-01T09:59:59Z')], want: 'waiting' },
    { name: 'a RuntimePinError about another object', object: isvc({ annotation: TOKEN, reason: 'RevisionMismatch' }), events: [pinError('2026-12-01T10:00:05Z', 'u9')], want: 'waiting' },
    { name: 'the deadline passed', object: isvc({ annotation: TOKEN, reason: 'RevisionMismatch' }), now: T0 + 400 + 1_800_000, want: WaveFailureReason.timedOut },
    { name: 'just inside the deadline', object: isvc({ annotation: TOKEN, reason: 'RevisionMismatch' }), now: T0 + 400 + 1_799_999, want: 'waiting' },
    { name: 'acknowledged after the deadline still counts', object: isvc({ annotation: TOKEN, lastToken: TOKEN }), now: T0 + 9_999_999, want: 'acknowledged' },
  ])('$name → $want', ({ object, events, now, want }) => {
    const observation = observeWaveTarget({ ...base, isvc: object, ...(events ? { events } : {}), ...(now === undefined ? {} : { now }) });
    expect(observation.state === 'failed' ? observation.reason : observation.state).toBe(want);
  });

  it('names the object and upstream message in a failure', () => {
    const observation = observeWaveTarget({ ...base, isvc: isvc({ annotation: TOKEN, reason: 'RevisionMismatch' }), events: [pinError('2026-12-01T10:00:01Z')] });
    expect(observation).toEqual({ state: 'failed', reason: 'RuntimePinError', message: 'ns/chat: RuntimePinError: resolve live runtime rt: boom' });
  });
});

describe('judgeCluster', () => {
  const a = { ...target(), name: 'a' };
  const b = { ...target(), name: 'b' };
  it.each([
    { name: 'all acknowledged', obs: [{ target: a, observation: { state: 'acknowledged' } }, { target: b, observation: { state: 'acknowledged' } }], want: { state: 'acknowledged' } },
    { name: 'one waiting', obs: [{ target: a, observation: { state: 'acknowledged' } }, { target: b, observation: { state: 'waiting' } }], want: { state: 'waiting', unpatched: [] } },
    { name: 'one unpatched is sent again', obs: [{ target: a, observation: { state: 'unpatched' } }, { target: b, observation: { state: 'waiting' } }], want: { state: 'waiting', unpatched: [a] } },
    {
      name: 'one failure halts, even with others waiting',
      obs: [{ target: a, observation: { state: 'waiting' } }, { target: b, observation: { state: 'failed', reason: 'TokenSuperseded', message: 'm' } }],
      want: { state: 'failed', target: b, reason: 'TokenSuperseded', message: 'm' },
    },
  ] as const)('$name', ({ obs, want }) => {
    expect(judgeCluster(obs as never)).toEqual(want);
  });
});

describe('parseWaveRuntime', () => {
  it.each([
    { text: 'ServingRuntime/rt', ns: 'ns', want: { kind: 'ServingRuntime', namespace: 'ns', name: 'rt' } },
    { text: 'servingruntimes/rt', ns: 'ns', want: { kind: 'ServingRuntime', namespace: 'ns', name: 'rt' } },
    { text: 'ClusterServingRuntime/rt', ns: 'ns', want: { kind: 'ClusterServingRuntime', namespace: '', name: 'rt' } },
    { text: 'rt', ns: undefined, want: { kind: 'ClusterServingRuntime', namespace: '', name: 'rt' } },
  ])('$text', ({ text, ns, want }) => {
    expect(parseWaveRuntime(text, ns)).toEqual(want);
  });

  it.each(['Deployment/x', 'ServingRuntime/', 'ServingRuntime/a/b'])('refuses %s', (text) => {
    expect(() => parseWaveRuntime(text, 'ns')).toThrow(RangeError);
  });

  it('needs a namespace for a ServingRuntime', () => {
    expect(() => parseWaveRuntime('ServingRuntime/rt', undefined)).toThrow('needs a namespace');
  });
});

describe('a policy wave\'s targets (RolloutPolicy edits)', () => {
  const POLICY: WaveRuntime = { kind: 'RolloutPolicy', namespace: 'ns', name: 'steps' };
  const lever = waveLever({ runtime: POLICY, token: TOKEN });
  /** An InferenceService whose run pins a group of `policy`, with its RolloutPlanDrift and repin annotation. */
  function running(edit: { policy?: string; drift?: 'PolicyNewerThanRun' | 'SpecNewerThanRun' | 'InSync'; repin?: string; namespace?: string; noRun?: boolean } = {}): InferenceService {
    const drift = edit.drift ?? 'PolicyNewerThanRun';
    return {
      apiVersion: 'ome.io/v1beta1',
      kind: 'InferenceService',
      metadata: { name: 'chat', namespace: edit.namespace ?? 'ns', uid: 'u1', ...(edit.repin === undefined ? {} : { annotations: { 'ome.io/rollout-repin': edit.repin } }) },
      status: {
        ...(edit.noRun ? {} : { rollout: { activeRun: { runID: 'r1', openedAt: 'x', pinnedAt: 'x', plan: { groups: [{ source: 'Policy', policyRef: { name: edit.policy ?? 'steps', progression: 'canary' }, group: { components: ['engine'] } }] } } } }),
        conditions: [{ type: 'RolloutPlanDrift', status: drift === 'InSync' ? 'False' : 'True', reason: drift, message: 'm' }],
      },
    } as unknown as InferenceService;
  }
  const observe = (object: InferenceService | undefined, events: Event[] = [], now = T0 + 60_000): TargetObservation =>
    observeWaveTarget({ target: target(), token: TOKEN, lever, isvc: object, events, since: T0, now, ackTimeoutMs: 1_800_000, ackTimeout: '30m' });
  const rejected = (at: string): Event => ({ ...pinError(at), reason: 'RolloutRepinRejected', message: 'repin rejected: live and pinned rollout topology differ (group count)' });

  it.each([
    { name: 'a run of the policy, left on its older plan', object: running(), want: true },
    { name: 'a run of another policy', object: running({ policy: 'other' }), want: false },
    { name: 'a run whose own spec is newer (not the policy)', object: running({ drift: 'SpecNewerThanRun' }), want: false },
    { name: 'a run in sync', object: running({ drift: 'InSync' }), want: false },
    { name: 'the same policy name in another namespace', object: running({ namespace: 'other' }), want: false },
    { name: 'no active run', object: running({ noRun: true }), want: false },
  ])('is chosen: $name → $want', ({ object, want }) => {
    expect(isRepinCandidate(object, POLICY)).toBe(want);
    expect(chooseWaveTargets([object], POLICY).length).toBe(want ? 1 : 0);
  });

  it.each<{ name: string; object: InferenceService | undefined; events?: Event[]; now?: number; want: TargetObservation['state'] | string }>([
    { name: 'the request consumed and the run repinned', object: running({ drift: 'InSync' }), want: 'acknowledged' },
    { name: 'the run closed meanwhile', object: running({ noRun: true, drift: 'InSync' }), want: 'acknowledged' },
    { name: 'the request still waiting', object: running({ repin: 'now' }), want: 'waiting' },
    { name: 'the request not sent yet', object: running(), want: 'unpatched' },
    { name: 'refused since the step started', object: running(), events: [rejected('2026-12-01T10:00:30Z')], want: WaveFailureReason.repinRejected },
    { name: 'a refusal from before the step', object: running(), events: [rejected('2026-12-01T09:59:00Z')], want: 'unpatched' },
    { name: 'someone else asked for another plan', object: running({ repin: 'rp1:0123456789ab' }), want: WaveFailureReason.superseded },
    { name: 'past the deadline', object: running({ repin: 'now' }), now: T0 + 1_800_000, want: WaveFailureReason.timedOut },
    { name: 'deleted', object: undefined, want: WaveFailureReason.gone },
  ])('reads $name as $want', ({ object, events, now, want }) => {
    const observation = observe(object, events, now);
    expect(observation.state === 'failed' ? observation.reason : observation.state).toBe(want);
  });

  it('asks for a repin to the live plan, and watches for RolloutRepinRejected', () => {
    expect(lever).toEqual({ annotation: 'ome.io/rollout-repin', value: 'now', refusal: 'RolloutRepinRejected' });
    expect(waveLever({ runtime: RUNTIME, token: TOKEN })).toEqual({ annotation: 'ome.io/runtime-sync', value: TOKEN, refusal: 'RuntimePinError' });
  });
});
