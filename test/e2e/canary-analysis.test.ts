/**
 * Canary analysis end to end, against a real Prometheus (Debian's, as a child process)
 * scraping the embedded cluster's simulated engine pods: the control plane as `npm start`
 * starts it, the real `kubectl` and `kubectl ome`, and the rollout-run schedule fired
 * every half second (its deployed rate is one minute; see docs/analysis.md).
 *
 * - healthy metrics: the canary passes its analysis step and the run completes;
 * - the canary revision's error ratio raised: samples fail, the canary rolls back at
 *   failureLimit, with upstream's status (rolledBackRevisionHash, RolledBack) and event
 *   (`RolloutRunClosed` `run <id> closed: RolledBack`), the stable Deployment never
 *   scaled below its floor, and the notification topic told once of each failed sample
 *   and of the close, though every hint was delivered twice;
 * - Prometheus stopped: samples are inconclusive and onInconclusive decides (Rollback
 *   rolls back; Hold holds, then fails at the stall timeout).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlane } from '../../local/control-plane';
import { DEBIAN_PROMETHEUS_BINARY } from '../../local/prometheus';
import { Resources } from '../../shared/domain/model/resources';
import type { KubeObject } from '../../shared/ports/cluster';
import type { RolloutIsvc } from '../../shared/use-cases/rollout-runs/rollout-status';
import type { CanaryState, OnInconclusive } from '../../shared/domain/rollout/types';
import { eventually, sh, shOk } from './rollout-support';
import { prunedWrites } from './support';

const installed = existsSync(DEBIAN_PROMETHEUS_BINARY);
const SKIP_REASON = `${DEBIAN_PROMETHEUS_BINARY} is not installed (CI installs it: apt-get install prometheus)`;
const NS = 'prod';
/** The run's pace: the plane fires rollout-run's schedule this often (deployed: rate(1 minute)). */
const SWEEP_MS = 500;
const FLOOR = 1;

type Deployment = KubeObject & { spec?: { replicas?: number }; status?: { readyReplicas?: number } };

interface Shell {
  kubeconfigPath: string;
  workDir: string;
}

let plane: ControlPlane;
let shell: Shell;
let dataDir = '';
const log: string[] = [];
const watching = new AbortController();
/** Every spec.replicas each Deployment was seen at, in order. */
const replicasSeen = new Map<string, number[]>();
/** Every canary state each InferenceService's status was seen with, in order. */
const canariesSeen = new Map<string, CanaryState[]>();

function errorRatioQuery(): string {
  const selector = 'namespace="{{.Namespace}}", inferenceservice="{{.ISVCName}}", revision_hash="{{.CanaryRevision}}"';
  return `sum(rate(request_errors_total{${selector}}[10s])) / sum(rate(requests_total{${selector}}[10s]))`;
}

function manifests(name: string, onInconclusive: OnInconclusive, readyTimeout?: string, annotations?: Record<string, string>): object[] {
  return [
    {
      apiVersion: 'ome.io/v1beta1',
      kind: 'ServingRuntime',
      metadata: { name: `srt-${name}`, namespace: NS },
      spec: {
        supportedModelFormats: [{ modelFormat: { name: 'safetensors' }, autoSelect: true }],
        engineConfig: { runner: { name: 'ome-container', image: 'docker.io/lmsysorg/sglang:v0.5.5', args: ['--mem-frac=0.9'] } },
      },
    },
    {
      apiVersion: 'ome.io/v1beta1',
      kind: 'InferenceService',
      metadata: { name, namespace: NS, ...(annotations ? { annotations } : {}) },
      spec: {
        model: { name: 'chat-model' },
        runtime: { name: `srt-${name}`, kind: 'ServingRuntime' },
        engine: { minReplicas: 2, maxReplicas: 2 },
        rollout: {
          groups: [
            {
              components: ['engine'],
              canary: {
                steps: [
                  {
                    capacity: '50%',
                    traffic: 50,
                    analysis: {
                      interval: '1s',
                      initialDelay: '2s',
                      failureLimit: 2,
                      onInconclusive,
                      metrics: [{ name: 'error-ratio', operator: 'LT', threshold: '0.05', query: errorRatioQuery() }],
                    },
                  },
                  { capacity: '100%', traffic: 100 },
                ],
                ...(readyTimeout ? { readyTimeout } : {}),
              },
            },
          ],
        },
      },
    },
  ];
}

async function isvc(name: string): Promise<RolloutIsvc> {
  return JSON.parse(await shOk(shell, `kubectl get inferenceservice ${name} -n ${NS} -o json`)) as RolloutIsvc;
}

/** Applies the runtime and the service, waits for its first revision, then changes the runtime: a run opens. */
async function openRun(
  name: string,
  onInconclusive: OnInconclusive,
  options: { readyTimeout?: string; annotations?: Record<string, string> } = {},
): Promise<{ runID: string; stable: string; target: string }> {
  await writeFile(join(shell.workDir, `${name}.yaml`), manifests(name, onInconclusive, options.readyTimeout, options.annotations).map((manifest) => stringify(manifest)).join('---\n'));
  await shOk(shell, `kubectl apply -f ${name}.yaml`);
  await eventually(`${name}: the first revision deployed`, () => shOk(shell, `kubectl get deployment ${name}-engine -n ${NS} -o jsonpath={.status.readyReplicas}`).catch(() => ''), (out) => out === '2');
  await shOk(shell, `kubectl patch servingruntime srt-${name} -n ${NS} --type=json -p '[{"op":"replace","path":"/spec/engineConfig/runner/args/0","value":"--mem-frac=0.85"}]'`);
  const opened = await eventually(`${name}: a run opened`, () => isvc(name), (current) => current.status?.rollout?.activeRun !== undefined);
  const run = opened.status?.rollout?.activeRun;
  const target = run?.targetRevisions?.find((entry) => entry.component === 'engine');
  return { runID: run?.runID ?? '', stable: target?.stableRevision ?? '', target: target?.revision ?? '' };
}

/** The InferenceService's events of one reason; `atLeast` waits for them (an event is recorded after the status write that closes a run). */
async function eventsOf(name: string, reason: string, atLeast = 0): Promise<{ type: string; message: string }[]> {
  if (atLeast > 0) return eventually(`${name}: ${reason} events`, () => eventsOf(name, reason), (events) => events.length >= atLeast, 15_000);
  const list = JSON.parse(await shOk(shell, `kubectl get events -n ${NS} --field-selector involvedObject.name=${name},reason=${reason} -o json`)) as {
    items: { type: string; message: string }[];
  };
  return list.items.map(({ type, message }) => ({ type, message }));
}

/** The rows of `kubectl ome rollout explain` from ANALYSIS on, columns collapsed. */
async function explainAnalysis(name: string): Promise<string[]> {
  const out = await shOk(shell, `kubectl ome rollout explain ${name} -n ${NS}`);
  const lines = out.split('\n');
  const start = lines.findIndex((line) => /^\s+ANALYSIS\s/.test(line));
  return start < 0 ? [] : lines.slice(start).map((line) => line.trim().replace(/\s{2,}/g, ' '));
}

/** What the notification topic received about one InferenceService, in order. */
async function notificationsOf(name: string): Promise<Array<{ type: string; runID?: string; outcome?: string; reason: string; message: string }>> {
  return plane.bus
    .topicMessages('NotificationTopic')
    .map((event) => ({ type: event['detail-type'], ...(event.detail as { name: string; runID?: string; outcome?: string; reason: string; message: string }) }))
    .filter((event) => event.name === name)
    .map(({ type, runID, outcome, reason, message }) => ({ type, ...(runID ? { runID } : {}), ...(outcome ? { outcome } : {}), reason, message }));
}

const lowest = (deployment: string): number => Math.min(...(replicasSeen.get(deployment) ?? [Number.NaN]));

async function record(): Promise<void> {
  const client = plane.clusters[0]?.client;
  if (!client) throw new Error('the embedded cluster has no in-process client');
  const follow = <T extends KubeObject>(type: (typeof Resources)[keyof typeof Resources], seen: (object: T) => void) =>
    client.watch<T>(type, { namespace: NS, signal: watching.signal }, (event) => seen(event.object)).catch(() => undefined);
  void follow<Deployment>(Resources.deployments, (deployment) => {
    const history = replicasSeen.get(deployment.metadata.name) ?? [];
    if (deployment.spec?.replicas !== undefined) history.push(deployment.spec.replicas);
    replicasSeen.set(deployment.metadata.name, history);
  });
  void follow<RolloutIsvc>(Resources.inferenceServices, (service) => {
    const canary = service.status?.components?.engine?.canary;
    if (canary) canariesSeen.set(service.metadata.name, [...(canariesSeen.get(service.metadata.name) ?? []), canary]);
  });
}

describe.skipIf(!installed)(`Canary analysis with a real Prometheus${installed ? '' : ` (skipped: ${SKIP_REASON})`}`, { timeout: 240_000 }, () => {
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ome-analysis-data-'));
    const workDir = await mkdtemp(join(tmpdir(), 'ome-analysis-work-'));
    try {
      plane = await startControlPlane({
        dataDir,
        workloadReadyDelayMs: 50,
        functionLogLevel: 'ERROR',
        log: (line) => log.push(line),
        busTimeScale: 0.01,
        prometheus: {},
        rolloutSweepMs: SWEEP_MS,
      });
    } catch (error) {
      throw new Error(`control plane did not start: ${String(error)}\n${log.join('\n')}`);
    }
    if (!plane.prometheus) throw new Error(`the local Prometheus did not start:\n${log.join('\n')}`);
    shell = { kubeconfigPath: join(workDir, 'kubeconfig'), workDir };
    await writeFile(shell.kubeconfigPath, await readFile(join(dataDir, 'kubeconfig'), 'utf8'), { mode: 0o600 });
    await shOk(shell, `kubectl create namespace ${NS}`);
    await record();
  }, 180_000);

  afterAll(async () => {
    watching.abort();
    await plane?.stop();
    await Promise.all([dataDir && rm(dataDir, { recursive: true, force: true }), shell && rm(shell.workDir, { recursive: true, force: true })]);
  });

  it('advances a healthy canary through its analysis step, and the run completes', async () => {
    const { runID, target } = await openRun('healthy', 'Hold');
    const done = await eventually('healthy: the run closed', () => isvc('healthy'), (current) => current.status?.rollout?.lastRun !== undefined, 90_000);
    expect(done.status?.rollout?.lastRun).toMatchObject({ outcome: 'Completed' });
    expect(done.status?.components?.engine?.rolloutPhase).toBe('Stable');
    // Nothing promoted it: under Hold only a sample in which every metric passed advances
    // the step (an inconclusive one holds), and not before the 2 s warm-up. Entering the
    // next step clears the record, as upstream's does, so the pass itself is not kept.
    const seen = canariesSeen.get('healthy') ?? [];
    const entered = (step: number) => Date.parse(seen.find((canary) => canary.currentStep === step)?.stepEnteredTime ?? '');
    expect(entered(1) - entered(0)).toBeGreaterThanOrEqual(2_000);
    expect(seen.filter((canary) => canary.currentStep === 0).every((canary) => (canary.analysisFailedChecks ?? 0) === 0)).toBe(true);
    expect(await eventsOf('healthy', 'RolloutRunClosed', 1)).toEqual([{ type: 'Normal', message: `run ${runID} closed: Completed` }]);
    await eventually('healthy: the closing notification', async () => notificationsOf('healthy'), (seen) => seen.some((event) => event.type === 'RolloutRunClosed'));
    const story = await notificationsOf('healthy');
    expect(story.filter((event) => event.type !== 'RolloutRunPaused').map((event) => `${event.type} ${event.outcome ?? ''}`.trim())).toEqual(['RolloutRunOpened', 'RolloutRunClosed Completed']);
    // The analysis step holds the canary Paused until its samples pass: each pause says so.
    for (const paused of story.filter((event) => event.type === 'RolloutRunPaused')) expect(paused.message).toMatch(/waiting for its analysis/);
    const stable = JSON.parse(await shOk(shell, `kubectl get deployment healthy-engine -n ${NS} -o json`)) as Deployment;
    expect(stable.metadata.annotations?.['ome.io/workload-revision']).toBe(target);
    await eventually('healthy: the canary Deployment removed', () => sh(shell, `kubectl get deployment healthy-engine-canary -n ${NS}`), (result) => result.code !== 0);
    expect(lowest('healthy-engine')).toBeGreaterThanOrEqual(FLOOR);
    expect(prunedWrites(plane)).toEqual([]);
  });

  it('rolls the canary back when its error ratio is raised: failed samples reach failureLimit', async () => {
    // Only the canary's pods fail (the stable revision keeps its 0.1%). Every event is
    // delivered twice meanwhile, beside the sweep: each failed sample still counts once.
    plane.bus.faults.set({ duplicate: 1, seed: 13 });
    const { runID, stable, target } = await openRun('failing', 'Hold', { annotations: { 'simulation.ome.io/error-ratio': 'canary=0.5' } });
    const closed = await eventually('failing: the run closed', () => isvc('failing'), (current) => current.status?.rollout?.lastRun !== undefined, 90_000).finally(() =>
      plane.bus.faults.clear(),
    );
    const counts = (canariesSeen.get('failing') ?? []).map((canary) => canary.analysisFailedChecks ?? 0).filter((count, i, all) => i === 0 || count !== all[i - 1]);
    expect(counts.slice(counts.indexOf(1))).toEqual([1, 2]);

    expect(closed.status?.rollout?.lastRun).toMatchObject({ outcome: 'RolledBack' });
    expect(closed.status?.rollout?.activeRun).toBeUndefined();
    expect(closed.status?.components?.engine?.rolloutPhase).toBe('RolledBack');
    const canary = closed.status?.components?.engine?.canary;
    expect(canary).toMatchObject({ canaryRevisionHash: target, rolledBackRevisionHash: target, analysisFailedChecks: 2, currentStep: 0, observedTrafficWeight: 0 });
    expect(closed.status?.canary).toEqual(canary);
    expect(canary?.metricResults?.[0]).toMatchObject({ name: 'error-ratio', passed: false });
    expect(Number(canary?.metricResults?.[0]?.value)).toBeGreaterThan(0.05);
    expect(closed.status?.conditions?.find((condition) => condition.type === 'RolloutPlanReady')).toMatchObject({ status: 'True', reason: 'NoActiveRun' });
    expect(await eventsOf('failing', 'RolloutRunClosed', 1)).toEqual([{ type: 'Normal', message: `run ${runID} closed: RolledBack` }]);

    // Every instance is back on the stable revision, which served throughout.
    await eventually('failing: the canary Deployment removed', () => sh(shell, `kubectl get deployment failing-engine-canary -n ${NS}`), (result) => result.code !== 0);
    const serving = JSON.parse(await shOk(shell, `kubectl get deployment failing-engine -n ${NS} -o json`)) as Deployment;
    expect(serving.metadata.annotations?.['ome.io/workload-revision']).toBe(stable);
    expect(serving.spec?.replicas).toBe(2);
    expect(lowest('failing-engine')).toBeGreaterThanOrEqual(FLOOR);

    expect(await explainAnalysis('failing')).toEqual(expect.arrayContaining(['ANALYSIS step=1/2; state=Failing; evidence=Reported', 'failedChecks=2/2']));
    expect(prunedWrites(plane)).toEqual([]);

    // The notification topic's rule (serverless.yml) received the run's story once, though
    // every hint came twice: the status write that made each change decided, alone.
    await eventually('failing: the closing notification', async () => notificationsOf('failing'), (seen) => seen.some((event) => event.type === 'RolloutRunClosed'));
    const story = await notificationsOf('failing');
    expect(story.filter((event) => event.type === 'RolloutRunClosed')).toEqual([
      { type: 'RolloutRunClosed', runID, outcome: 'RolledBack', reason: 'RolloutRunClosed', message: `run ${runID} closed: RolledBack` },
    ]);
    expect(story.filter((event) => event.type === 'RolloutRunOpened').map((event) => event.runID)).toEqual([runID]);
    expect(story.filter((event) => event.type === 'AnalysisSampleFailed').map((event) => event.message)).toEqual([
      expect.stringMatching(/^engine analysis at canary step 0 failed \(1 failed check\): error-ratio /),
      expect.stringMatching(/^engine analysis at canary step 0 failed \(2 failed checks\): error-ratio /),
    ]);
  });

  describe('with Prometheus stopped', () => {
    beforeAll(async () => {
      await plane.prometheus?.pause();
    });
    afterAll(async () => {
      await plane.prometheus?.resume();
    });

    it('rolls back on the first inconclusive sample under onInconclusive Rollback', async () => {
      const { runID, target } = await openRun('strict', 'Rollback');
      const closed = await eventually('strict: the run closed', () => isvc('strict'), (current) => current.status?.rollout?.lastRun !== undefined, 90_000);
      expect(closed.status?.rollout?.lastRun).toMatchObject({ outcome: 'RolledBack' });
      const canary = closed.status?.components?.engine?.canary;
      expect(canary).toMatchObject({ rolledBackRevisionHash: target });
      // Inconclusive never counts as a failure; the result says why, with no value.
      expect(canary?.analysisFailedChecks ?? 0).toBe(0);
      expect(canary?.lastConclusiveEvaluationTime).toBeUndefined();
      const [result] = canary?.metricResults ?? [];
      expect(result).toMatchObject({ name: 'error-ratio', passed: false });
      expect(result?.value).toBeUndefined();
      // The query's own error, as upstream records it: nothing answers at the address.
      expect(result?.message).toMatch(/^Post "http:\/\/127\.0\.0\.1:\d+\/api\/v1\/query": .*connection refused/);
      expect(await eventsOf('strict', 'RolloutRunClosed', 1)).toEqual([{ type: 'Normal', message: `run ${runID} closed: RolledBack` }]);
      expect(lowest('strict-engine')).toBeGreaterThanOrEqual(FLOOR);
      expect(prunedWrites(plane)).toEqual([]);
    });

    it('holds under onInconclusive Hold, and the canary fails once analysis stalls past the ready timeout', async () => {
      await openRun('patient', 'Hold', { readyTimeout: '6s' });
      const holding = await eventually(
        'patient: an inconclusive sample recorded',
        () => isvc('patient'),
        (current) => current.status?.components?.engine?.canary?.lastEvaluationTime !== undefined && current.status.components.engine.rolloutPhase === 'Paused',
        60_000,
      );
      expect(holding.status?.components?.engine?.canary?.metricResults?.[0]).toMatchObject({ passed: false });
      expect(await explainAnalysis('patient')).toEqual(expect.arrayContaining(['ANALYSIS step=1/2; state=Inconclusive; evidence=Reported']));
      const failed = await eventually('patient: the canary failed', () => isvc('patient'), (current) => current.status?.components?.engine?.rolloutPhase === 'Failed', 60_000);
      // Failed holds where it is: the run stays open, nothing rolled back, both revisions serve.
      expect(failed.status?.rollout?.activeRun).toBeDefined();
      expect(failed.status?.components?.engine?.canary?.rolledBackRevisionHash).toBeUndefined();
      expect(failed.status?.components?.engine?.canary?.analysisFailedChecks ?? 0).toBe(0);
      expect((JSON.parse(await shOk(shell, `kubectl get deployment patient-engine-canary -n ${NS} -o json`)) as Deployment).spec?.replicas).toBe(1);
      expect(lowest('patient-engine')).toBeGreaterThanOrEqual(FLOOR);
      expect(await eventsOf('patient', 'RolloutRunClosed')).toEqual([]);
      expect(prunedWrites(plane)).toEqual([]);
    });
  });
});
