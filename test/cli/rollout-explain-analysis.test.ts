/**
 * `kubectl ome rollout explain` through the real kubectl: an analysis step's state, last
 * evaluation, failed checks and last metric results, read from status alone (so it reads
 * the same whoever wrote the status: the plane, or upstream's controller in delegate mode),
 * during a run and after the run rolled back.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { Resources } from '../../shared/domain/model/resources';
import type { RolloutIsvc } from '../../shared/use-cases/rollout-runs/rollout-status';
import type { CanaryStep } from '../../shared/domain/rollout/types';

const BIN = resolve(__dirname, '../../bin');

let cluster: EmbeddedCluster;
let dir: string;
let kubeconfig: string;

function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = execFile(
      'kubectl',
      args,
      { env: { ...process.env, PATH: `${BIN}:${process.env.PATH ?? ''}`, KUBECONFIG: kubeconfig }, timeout: 50_000 },
      (error, stdout, stderr) => done({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

const analysis: CanaryStep['analysis'] = {
  interval: '1m',
  initialDelay: '2m',
  failureLimit: 3,
  onInconclusive: 'RollbackOnStall',
  metrics: [
    { name: 'error-ratio', query: 'sum(rate(request_errors_total[5m])) / sum(rate(requests_total[5m]))', operator: 'LT', threshold: '0.05' },
    { name: 'p99-latency', query: 'histogram_quantile(0.99, sum by (le) (rate(request_duration_seconds_bucket[5m])))', operator: 'LTE', threshold: '2' },
  ],
};
const steps: CanaryStep[] = [
  { capacity: '50%', traffic: 50, pause: { duration: '10m' }, analysis },
  { capacity: '100%', traffic: 100 },
];
const record = {
  canaryRevisionHash: 'bbbbbbbb',
  stableRevisionHash: 'aaaaaaaa',
  currentStep: 0,
  stepEnteredTime: '2026-12-01T20:00:00Z',
  observedTrafficWeight: 50,
  analysisFailedChecks: 2,
  lastEvaluationTime: '2026-12-01T20:05:00Z',
  lastConclusiveEvaluationTime: '2026-12-01T20:05:00Z',
  metricResults: [
    { name: 'error-ratio', value: '0.31', threshold: '0.05', operator: 'LT', passed: false, time: '2026-12-01T20:05:00Z' },
    { name: 'p99-latency', threshold: '2', operator: 'LTE', passed: false, message: 'no data', time: '2026-12-01T20:05:00Z' },
  ],
};

async function seed(name: string, status: Record<string, unknown>): Promise<void> {
  const created = await cluster.client.create<RolloutIsvc>(Resources.inferenceServices, {
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace: 'prod' },
    spec: { model: { name: 'chat-model' }, runtime: { name: 'srt' }, engine: { minReplicas: 2 }, rollout: { groups: [{ components: ['engine'], canary: { steps } }] } },
  });
  await cluster.client.replaceStatus(Resources.inferenceServices, { ...created, status });
}

beforeAll(async () => {
  cluster = await startEmbeddedCluster();
  dir = await mkdtemp(join(tmpdir(), 'kubectl-ome-explain-'));
  kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, cluster.kubeconfig, { mode: 0o600 });
  await cluster.client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prod' } });
  const run = {
    runID: 'gated-0123456789ab',
    openedAt: '2026-12-01T19:59:00Z',
    pinnedAt: '2026-12-01T19:59:00Z',
    targetRevisions: [{ component: 'engine', revision: 'bbbbbbbb', stableRevision: 'aaaaaaaa' }],
    plan: { groups: [{ source: 'Inline', portableDigest: 'rp1:0123456789ab', group: { components: ['engine'], canary: { steps } } }] },
  };
  await seed('gated', { rollout: { activeRun: run }, canary: record, components: { engine: { rolloutPhase: 'Paused', canary: record } } });
  const rejected = { ...record, analysisFailedChecks: 3, rolledBackRevisionHash: 'bbbbbbbb' };
  await seed('rejected', {
    rollout: { lastRun: { outcome: 'RolledBack', openedAt: '2026-12-01T19:59:00Z', closedAt: '2026-12-01T20:06:00Z' } },
    canary: rejected,
    components: { engine: { rolloutPhase: 'RolledBack', canary: rejected } },
  });
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The ANALYSIS and METRIC rows of the Effective view, columns collapsed to one space. */
function analysisRows(stdout: string): string[] {
  const lines = stdout.split('\n');
  const start = lines.findIndex((line) => /^\s+ANALYSIS\s/.test(line));
  if (start < 0) return [];
  const rows: string[] = [];
  for (const line of lines.slice(start)) {
    const item = line.slice(12).split(/\s{2,}/)[0] ?? '';
    if (rows.length > 0 && !/^\s{20,}\S/.test(line) && !item.startsWith('METRIC')) break;
    rows.push(line.trim().replace(/\s{2,}/g, ' '));
  }
  return rows;
}

describe('kubectl ome rollout explain: analysis', () => {
  it('shows the state of the running step, its last evaluation, failed checks and each metric result', async () => {
    const result = await kubectl('ome', 'rollout', 'explain', 'gated', '-n', 'prod');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(analysisRows(result.stdout)).toEqual([
      'ANALYSIS step=1/2; state=Failing; evidence=Reported',
      'evaluated=2026-12-01T20:05:00Z; conclusive=2026-12-01T20:05:00Z',
      'failedChecks=2/3',
      'interval=1m0s; warmUp=2m0s; bake=10m0s; onInconclusive=RollbackOnStall',
      'METRIC error-ratio; value=0.31; LT 0.05; failed',
      'METRIC p99-latency; LTE 2; inconclusive; message=no data',
    ]);
  });

  it('keeps the sample that rejected the revision after the run closed RolledBack', async () => {
    const result = await kubectl('ome', 'rollout', 'explain', 'rejected', '-n', 'prod');
    expect(result.code).toBe(0);
    expect(analysisRows(result.stdout)).toContain('failedChecks=3/3');
    expect(analysisRows(result.stdout)[0]).toBe('ANALYSIS step=1/2; state=Failing; evidence=Reported');
    const json = await kubectl('ome', 'rollout', 'explain', 'rejected', '-n', 'prod', '-o', 'json');
    const rows = (JSON.parse(json.stdout) as { content: { rows: { view: string; item: string; detail: string }[] } }).content.rows;
    expect(rows.filter((row) => row.item === 'METRIC').map((row) => row.detail)).toEqual(['error-ratio; value=0.31; LT 0.05; failed', 'p99-latency; LTE 2; inconclusive; message=no data']);
  });
});
