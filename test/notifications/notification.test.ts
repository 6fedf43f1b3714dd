import { describe, expect, it } from 'vitest';
import type { Logger } from '../../shared/app/logger';
import {
  CollectedRevisionTally,
  driftTransitionsOf,
  revisionNotificationsOf,
  rolloutTransitionsOf,
  statusTransitionsOf,
  toNotificationEvent,
  waveNotificationsOf,
  type RolloutStatusView,
} from '../../shared/domain/notification';
import type { SyncWave } from '../../shared/domain/fleet/sync-wave';
import { digestPinnedPlan } from '../../shared/domain/rollout/repin';
import type { CanaryState, RolloutRun } from '../../shared/domain/rollout/types';
import { createNotificationOutbox, notificationBus } from '../../shared/app/notifications';
import type { AppContext } from '../../shared/app/context';
import type { BusEvent, EventPublisher, PublishResult } from '../../shared/ports/event-publisher';
import type { NotificationEvent } from '../../shared/domain/notification';

const run = (runID: string): RolloutRun => ({
  runID,
  openedAt: '2026-12-05T10:00:00Z',
  pinnedAt: '2026-12-05T10:00:00Z',
  targetRevisions: [{ component: 'engine', revision: 'srt-b', stableRevision: 'srt-a' }],
  plan: { groups: [] },
});
const canary = (fields: Partial<CanaryState> = {}): CanaryState => ({ canaryRevisionHash: 'srt-b', currentStep: 0, observedTrafficWeight: 50, ...fields });
const active = (runID: string, phase: string, slot: Partial<CanaryState> = {}): RolloutStatusView => ({
  rollout: { activeRun: run(runID) },
  components: { engine: { rolloutPhase: phase, canary: canary(slot) } },
});
const closed = (outcome: 'Completed' | 'RolledBack' | 'Superseded', phase: string, slot: Partial<CanaryState> = {}): RolloutStatusView => ({
  rollout: { lastRun: { outcome, openedAt: '2026-12-05T10:00:00Z', closedAt: '2026-12-05T10:05:00Z' } },
  components: { engine: { rolloutPhase: phase, canary: canary(slot) } },
});
const failedMetric = { name: 'error-ratio', value: '0.5', operator: 'LT' as const, threshold: '0.05', passed: false };

describe('Function: rolloutTransitionsOf', () => {
  it.each<[string, RolloutStatusView | undefined, RolloutStatusView | undefined, string[]]>([
    ['nothing changed', active('r1', 'Canarying'), active('r1', 'Canarying'), []],
    ['no rollout at all', undefined, {}, []],
    ['a run opened', {}, active('r1', 'Pending'), ['RolloutRunOpened r1']],
    ['a run completed', active('r1', 'Promoting'), closed('Completed', 'Stable'), ['RolloutRunClosed r1 Completed']],
    ['a run rolled back', active('r1', 'RollingBack'), closed('RolledBack', 'RolledBack'), ['RolloutRunClosed r1 RolledBack']],
    ['a run superseded by the next', active('r1', 'Canarying'), { ...active('r2', 'Pending'), rollout: { activeRun: run('r2'), lastRun: { outcome: 'Superseded', closedAt: 'x' } } }, ['RolloutRunClosed r1 Superseded', 'RolloutRunOpened r2']],
    ['a canary entered Paused', active('r1', 'Canarying'), active('r1', 'Paused'), ['RolloutRunPaused r1']],
    ['a canary stays Paused', active('r1', 'Paused'), active('r1', 'Paused'), []],
    ['a canary failed', active('r1', 'Canarying'), active('r1', 'Failed'), ['RolloutRunFailed r1']],
    ['a failed sample', active('r1', 'Canarying'), active('r1', 'Canarying', { analysisFailedChecks: 1, metricResults: [failedMetric] }), ['AnalysisSampleFailed r1']],
    ['a passed sample', active('r1', 'Canarying', { analysisFailedChecks: 1 }), active('r1', 'Canarying', { analysisFailedChecks: 1, lastEvaluationTime: 'later' }), []],
    ['the failing sample that closes the run', active('r1', 'Canarying', { analysisFailedChecks: 1 }), closed('RolledBack', 'RolledBack', { analysisFailedChecks: 2 }), ['AnalysisSampleFailed r1', 'RolloutRunClosed r1 RolledBack']],
    ['a new canary starts counting afresh', active('r1', 'Canarying', { analysisFailedChecks: 2, canaryRevisionHash: 'srt-x' }), active('r1', 'Canarying', { analysisFailedChecks: 1 }), ['AnalysisSampleFailed r1']],
    ['an engine-only status (the status.canary alias)', { rollout: { activeRun: run('r1') }, canary: canary() }, { rollout: { activeRun: run('r1') }, canary: canary({ analysisFailedChecks: 1 }) }, ['AnalysisSampleFailed r1']],
  ])('%s', (_name, before, after, expected) => {
    expect(rolloutTransitionsOf(before, after).map((transition) => [transition.type, transition.runID, transition.outcome].filter(Boolean).join(' '))).toEqual(expected);
  });

  it('says how a paused canary is released: a promote at a manual gate, the override at an analysis gate, time at a bake', () => {
    const gated = (gate: 'analysis' | 'manual' | 'bake'): RolloutRun => {
      const hold = { analysis: { analysis: { interval: '1m', failureLimit: 1, metrics: [] } }, manual: { pause: {} }, bake: { pause: { duration: '10m' } } }[gate];
      return { ...run('r1'), plan: { groups: [{ source: 'Inline', group: { components: ['engine'], canary: { steps: [{ capacity: '50%', traffic: 50, ...hold }] } } }] } };
    };
    const pausedAt = (pinned: RolloutRun) =>
      rolloutTransitionsOf({ ...active('r1', 'Canarying'), rollout: { activeRun: pinned } }, { ...active('r1', 'Paused'), rollout: { activeRun: pinned } })[0]?.message;
    expect(pausedAt(gated('manual'))).toBe('run r1: engine paused at canary step 0; kubectl ome rollout promote releases it');
    expect(pausedAt(gated('analysis'))).toBe('run r1: engine paused at canary step 0, waiting for its analysis (kubectl ome rollout promote --override-analysis --yes passes it)');
    expect(pausedAt(gated('bake'))).toBe('run r1: engine paused at canary step 0 for its 10m bake; it moves on by itself');
  });

  it('says what upstream says of an opened and a closed run, and names the failed metrics', () => {
    const [opened] = rolloutTransitionsOf({}, active('r1', 'Pending'));
    expect(opened).toMatchObject({ reason: 'RolloutRunOpened', message: `run r1 opened (${digestPinnedPlan(run('r1'))})` });
    const [closing] = rolloutTransitionsOf(active('r1', 'RollingBack'), closed('RolledBack', 'RolledBack'));
    expect(closing).toMatchObject({ reason: 'RolloutRunClosed', message: 'run r1 closed: RolledBack' });
    const [superseded] = rolloutTransitionsOf(active('r1', 'Canarying'), closed('Superseded', 'Stable'));
    expect(superseded?.message).toBe('run r1 superseded by a new target revision; opening a fresh run');
    const [failed] = rolloutTransitionsOf(active('r1', 'Canarying'), active('r1', 'Canarying', { analysisFailedChecks: 1, metricResults: [failedMetric, { name: 'latency', passed: true }] }));
    expect(failed).toMatchObject({ component: 'engine', step: 0, failedMetrics: [failedMetric], message: 'engine analysis at canary step 0 failed (1 failed check): error-ratio 0.5, wanted LT 0.05' });
  });
});

describe('Function: driftTransitionsOf', () => {
  const drifted = (status: 'True' | 'False', reason: string, message = `${reason} message`) => ({ conditions: [{ type: 'RuntimeDrifted', status, reason, message }] });
  const planDrift = (status: 'True' | 'False', reason: string) => ({ conditions: [{ type: 'RolloutPlanDrift', status, reason, message: `plan ${reason}` }] });
  it.each<[string, object | undefined, object | undefined, string[]]>([
    ['no conditions', {}, {}, []],
    ['drift reported', drifted('False', 'InSync'), drifted('True', 'RevisionMismatch'), ['DriftReported RuntimeDrifted RevisionMismatch: RevisionMismatch message']],
    ['reported on the first write', undefined, drifted('True', 'RevisionMismatch'), ['DriftReported RuntimeDrifted RevisionMismatch: RevisionMismatch message']],
    ['still drifted, same reason', drifted('True', 'RevisionMismatch'), drifted('True', 'RevisionMismatch', 'another message'), []],
    ['still drifted, a new reason', drifted('True', 'RevisionMismatch'), drifted('True', 'PinnedRevisionMissing'), ['DriftReported RuntimeDrifted PinnedRevisionMissing: PinnedRevisionMissing message']],
    ['drift cleared', drifted('True', 'RevisionMismatch'), drifted('False', 'InSync'), ['DriftCleared RuntimeDrifted InSync: InSync message']],
    ['the condition removed', drifted('True', 'RevisionMismatch'), {}, ['DriftCleared RuntimeDrifted : RuntimeDrifted cleared']],
    ['never drifted', drifted('False', 'InSync'), drifted('False', 'InSync'), []],
    ['a rollout plan drifted', planDrift('False', 'InSync'), planDrift('True', 'SpecNewerThanRun'), ['DriftReported RolloutPlanDrift SpecNewerThanRun: plan SpecNewerThanRun']],
  ])('%s', (_name, before, after, expected) => {
    expect(driftTransitionsOf(before, after).map((transition) => `${transition.type} ${transition.condition} ${transition.reason}: ${transition.message}`)).toEqual(expected);
  });

  it('puts drift before the rollout changes of the same write', () => {
    const before = { ...active('r1', 'Canarying'), conditions: [{ type: 'RolloutPlanDrift', status: 'False' as const, reason: 'InSync' }] };
    const after = { ...active('r1', 'Paused'), conditions: [{ type: 'RolloutPlanDrift', status: 'True' as const, reason: 'SpecNewerThanRun' }] };
    expect(statusTransitionsOf(before, after).map((transition) => transition.type)).toEqual(['DriftReported', 'RolloutRunPaused']);
  });
});

describe('Function: toNotificationEvent', () => {
  it('names the cluster and the object as written, with the reason and message', () => {
    const object = { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', metadata: { name: 'chat', namespace: 'prod', uid: 'u1', resourceVersion: '42' } };
    const [transition] = rolloutTransitionsOf(active('r1', 'RollingBack'), closed('RolledBack', 'RolledBack'));
    if (!transition) throw new Error('fixture');
    expect(toNotificationEvent('c1', object, transition, '2026-12-05T10:05:01.000Z')).toEqual({
      source: 'ome.pinning',
      detailType: 'RolloutRunClosed',
      detail: {
        clusterId: 'c1',
        apiVersion: 'ome.io/v1beta1',
        kind: 'InferenceService',
        namespace: 'prod',
        name: 'chat',
        uid: 'u1',
        resourceVersion: '42',
        observedAt: '2026-12-05T10:05:01.000Z',
        reason: 'RolloutRunClosed',
        message: 'run r1 closed: RolledBack',
        runID: 'r1',
        outcome: 'RolledBack',
      },
    });
  });
});

describe('Function: createNotificationOutbox', () => {
  const isvc = (status: RolloutStatusView, resourceVersion: string) => ({ apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', metadata: { name: 'chat', namespace: 'prod', resourceVersion }, status });
  const recording = (result?: (events: readonly BusEvent[]) => PublishResult<NotificationEvent>) => {
    const calls: NotificationEvent[][] = [];
    const publisher: EventPublisher<NotificationEvent> = {
      async publish(events) {
        calls.push([...events]);
        return result ? result(events) : { published: events.length, skipped: [], failed: [] };
      },
    };
    return { calls, publisher };
  };
  const logger = () => {
    const warnings: string[] = [];
    return { warnings, logger: { info: () => undefined, warn: (message: string) => void warnings.push(message) } as unknown as Pick<Logger, 'info' | 'warn'> };
  };

  it('publishes what the committed writes changed, once, in order', async () => {
    const outbox = createNotificationOutbox('c1', { now: () => Date.parse('2026-12-05T10:05:01Z') });
    outbox.committed(isvc({}, '1'), isvc(active('r1', 'Pending'), '2'));
    outbox.committed(isvc(active('r1', 'Pending'), '2'), isvc(active('r1', 'Pending'), '3'));
    outbox.committed(isvc(active('r1', 'RollingBack'), '3'), isvc(closed('RolledBack', 'RolledBack'), '4'));
    const { calls, publisher } = recording();
    await outbox.flush(publisher);
    await outbox.flush(publisher);
    expect(calls.map((events) => events.map((event) => `${event.detailType}@${event.detail.resourceVersion}`))).toEqual([['RolloutRunOpened@2', 'RolloutRunClosed@4']]);
  });

  it('announces nothing of other kinds', async () => {
    const outbox = createNotificationOutbox('c1', { now: () => 0 });
    outbox.committed({ ...isvc({}, '1'), kind: 'Deployment' }, { ...isvc(active('r1', 'Pending'), '2'), kind: 'Deployment' });
    expect(outbox.pending).toEqual([]);
  });

  it('logs, never throws, when the bus refuses or fails', async () => {
    const outbox = createNotificationOutbox('c1', { now: () => 0 }, logger().logger);
    const { warnings, logger: log } = logger();
    const failing = createNotificationOutbox('c1', { now: () => 0 }, log);
    failing.committed(isvc({}, '1'), isvc(active('r1', 'Pending'), '2'));
    const refused = recording((events) => ({ published: 0, skipped: [], failed: events.map((event) => ({ event: event as NotificationEvent, errorCode: 'AccessDeniedException' })) }));
    await expect(failing.flush(refused.publisher)).resolves.toBeUndefined();
    expect(warnings).toEqual(['notification not published']);
    outbox.committed(isvc({}, '1'), isvc(active('r1', 'Pending'), '2'));
    await expect(outbox.flush({ publish: () => Promise.reject(new Error('socket hang up')) })).resolves.toBeUndefined();
  });
});

describe('Function: notificationBus', () => {
  const appWith = (config: Record<string, unknown>) => ({ config: { region: 'us-east-1', eventBusName: 'bus', ...config } }) as unknown as AppContext;
  it.each<[string, Record<string, unknown>, boolean]>([
    ['deployed: EventBridge', { mode: 'deployed' }, true],
    ['local with the local bus', { mode: 'local', eventBridgeEndpoint: 'http://127.0.0.1:4010' }, true],
    ['local without a bus: none (notifications are logged)', { mode: 'local' }, false],
  ])('%s', (_name, config, hasBus) => {
    expect(notificationBus({ warn: () => undefined })(appWith(config)) !== undefined).toBe(hasBus);
  });
});

describe('Function: waveNotificationsOf', () => {
  const step = (clusterId: string, state: SyncWave['clusters'][number]['state']) => ({ clusterId, state, targets: [] });
  const wave = (states: Array<SyncWave['clusters'][number]['state']>, extra: Partial<SyncWave> = {}): SyncWave => ({
    id: 'w1',
    runtime: { kind: 'ServingRuntime', namespace: 'prod', name: 'srt' },
    token: 'fleet-sync-w1',
    ackTimeout: '10m',
    ackTimeoutMs: 600_000,
    state: 'Running',
    clusters: states.map((state, index) => step(`c${index + 1}`, state)),
    createdAt: 0,
    updatedAt: 0,
    version: 1,
    ...extra,
  });
  const at = '2026-12-05T10:00:00.000Z';
  const summary = (before: SyncWave, after: SyncWave) => waveNotificationsOf(before, after, at).map((event) => `${event.detailType} ${event.detail.clusterId}: ${event.detail.message}`);

  it.each<[string, SyncWave, SyncWave, string[]]>([
    ['a cluster acknowledged', wave(['Syncing', 'Pending']), wave(['Acknowledged', 'Pending']), ['WaveStepAcknowledged c1: sync wave w1: cluster c1 acknowledged ServingRuntime prod/srt (1 of 2)']],
    ['a cluster started: nothing yet', wave(['Acknowledged', 'Pending']), wave(['Acknowledged', 'Syncing']), []],
    ['the same write seen again', wave(['Acknowledged', 'Syncing']), wave(['Acknowledged', 'Syncing']), []],
    [
      'the wave halted at a target',
      wave(['Acknowledged', 'Syncing']),
      wave(['Acknowledged', 'Failed'], { state: 'Halted', failure: { clusterId: 'c2', namespace: 'prod', name: 'chat', reason: 'RuntimePinError', message: 'model cache unavailable' } }),
      ['WaveHalted c2: sync wave w1 halted: model cache unavailable'],
    ],
  ])('%s', (_name, before, after, expected) => {
    expect(summary(before, after)).toEqual(expected);
  });

  it('names the wave, its step and the failed target', () => {
    const halted = wave(['Acknowledged', 'Failed'], { state: 'Halted', failure: { clusterId: 'c2', namespace: 'prod', name: 'chat', reason: 'RuntimePinError', message: 'm' } });
    expect(waveNotificationsOf(wave(['Acknowledged', 'Syncing']), halted, at)[0]?.detail).toEqual({
      clusterId: 'c2',
      kind: 'SyncWave',
      name: 'w1',
      observedAt: at,
      waveStep: 1,
      waveSteps: 2,
      reason: 'RuntimePinError',
      message: 'sync wave w1 halted: m',
      target: { namespace: 'prod', name: 'chat' },
    });
  });
});

describe('Function: revisionNotificationsOf', () => {
  const at = '2026-12-05T10:00:00.000Z';
  const csr = { kind: 'ClusterServingRuntime', namespace: '', name: 'srt' };
  const sr = { kind: 'ServingRuntime', namespace: 'prod', name: 'vllm' };
  const tallyOf = (deletes: Array<[typeof csr, string]>) => {
    const tally = new CollectedRevisionTally();
    for (const [runtime, name] of deletes) tally.add(runtime, name);
    return tally.collected;
  };
  const summary = (deletes: Array<[typeof csr, string]>) => revisionNotificationsOf('c1', tallyOf(deletes), at).map((event) => `${event.detailType} ${event.detail.kind}: ${event.detail.message}`);

  it.each<[string, Array<[typeof csr, string]>, string[]]>([
    ['nothing deleted: nothing announced', [], []],
    ['one revision of a cluster runtime', [[csr, 'cr-srt-1']], ['RevisionCollected ClusterServingRuntime: collected 1 revision of ClusterServingRuntime srt: cr-srt-1']],
    [
      'one notification per runtime, names in order',
      [
        [csr, 'cr-srt-2'],
        [sr, 'r-prod-vllm-1'],
        [csr, 'cr-srt-1'],
      ],
      ['RevisionCollected ClusterServingRuntime: collected 2 revisions of ClusterServingRuntime srt: cr-srt-1, cr-srt-2', 'RevisionCollected ServingRuntime: collected 1 revision of ServingRuntime prod/vllm: r-prod-vllm-1'],
    ],
    [
      'at most ten names, and how many more',
      Array.from({ length: 13 }, (_, index): [typeof csr, string] => [csr, `cr-srt-${String(index).padStart(2, '0')}`]),
      [`RevisionCollected ClusterServingRuntime: collected 13 revisions of ClusterServingRuntime srt: ${Array.from({ length: 10 }, (_, index) => `cr-srt-0${index}`).join(', ')} and 3 more`],
    ],
    ['a revision labelled without a kind: its namespace says which', [[{ kind: '', namespace: 'prod', name: 'vllm' }, 'r-1']], ['RevisionCollected ServingRuntime: collected 1 revision of ServingRuntime prod/vllm: r-1']],
  ])('%s', (_name, deletes, expected) => {
    expect(summary(deletes)).toEqual(expected);
  });

  it('names the cluster and the runtime, with the count and the names', () => {
    expect(revisionNotificationsOf('c1', tallyOf([[sr, 'r-prod-vllm-1']]), at)).toEqual([
      {
        source: 'ome.pinning',
        detailType: 'RevisionCollected',
        detail: {
          clusterId: 'c1',
          apiVersion: 'ome.io/v1beta1',
          kind: 'ServingRuntime',
          namespace: 'prod',
          name: 'vllm',
          observedAt: at,
          reason: 'RevisionCollected',
          message: 'collected 1 revision of ServingRuntime prod/vllm: r-prod-vllm-1',
          revisionCount: 1,
          revisions: ['r-prod-vllm-1'],
        },
      },
    ]);
  });
});
