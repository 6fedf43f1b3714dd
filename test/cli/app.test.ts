import { describe, expect, it } from 'vitest';

import { runApp, type AppDeps } from '../../cli/app';
import { InferenceServices } from '../../cli/resources';
import { runRolloutExplain } from '../../cli/rollout/explain';
import { runRolloutPromote } from '../../cli/rollout/promote';
import { runReportingErrors } from '../../cli/run';
import { FakeCluster } from './fake-cluster';
import { driftedChat, REPIN_NOW } from './fixtures';
import { createEnv } from './harness';

function appWith(cluster: FakeCluster) {
  const { env, out } = createEnv({ cluster, now: REPIN_NOW });
  const connects: unknown[] = [];
  const deps: AppDeps = {
    io: env.io,
    connect: async (options) => {
      connects.push(options);
      return { client: cluster, contextName: 'prod-cluster', contextNamespace: 'prod' };
    },
    now: env.now,
    newRequestId: env.newRequestId,
    sleep: env.sleep,
  };
  return { deps, out, connects };
}

describe('command table', () => {
  it('prints help without connecting', async () => {
    const { deps, out, connects } = appWith(new FakeCluster());
    expect(await runApp(['rollout', 'repin', '--help'], deps)).toBe(0);
    expect(out.stdout).toContain('kubectl ome rollout repin INFERENCESERVICE [flags]');
    expect(out.stdout).toContain('--dry-run string');
    expect(connects).toHaveLength(0);
  });

  it.each([
    [['frobnicate'], 'error: unknown command "frobnicate" for "kubectl ome"; see "kubectl ome --help"\n'],
    [['rollout', 'repin'], 'error: exactly one InferenceService name is required; see "kubectl ome rollout repin --help"\n'],
    [['rollout', 'repin', 'chat', '--dry-run=maybe'], 'error: invalid argument "maybe" for "--dry-run" flag: must be none, client or server\n'],
    [['rollout', 'repin', 'chat', '--bogus'], 'error: unknown flag: --bogus\n'],
    [['rollout', 'repin', 'chat', '-o', 'xml'], 'error: unsupported output format "xml"; use table, wide, json or yaml\n'],
  ])('rejects %j with exit 1', async (argv, message) => {
    const { deps, out } = appWith(new FakeCluster());
    expect(await runApp(argv, deps)).toBe(1);
    expect(out.stderr).toBe(message);
  });

  it('takes the namespace from the context when -n is absent, and flags in any position', async () => {
    const cluster = new FakeCluster();
    cluster.put(InferenceServices, driftedChat());
    const { deps, out, connects } = appWith(cluster);
    expect(await runApp(['--context=prod-cluster', 'rollout', '--yes', 'repin', 'chat', '--request-timeout', '5s'], deps)).toBe(0);
    expect(connects).toEqual([{ context: 'prod-cluster', requestTimeoutMs: 5000, verbosity: 0 }]);
    expect(out.stdout).toContain('target                  InferenceService/prod/chat\n');
  });
});

describe('rollout promote', () => {
  it('sets the promote annotation to the canary revision at a manual gate', async () => {
    const cluster = new FakeCluster();
    const isvc = driftedChat();
    cluster.put(InferenceServices, isvc);
    const { env, out } = createEnv({ cluster, now: REPIN_NOW });
    expect(await runRolloutPromote(env, { name: 'chat', namespace: 'prod', omeNamespace: 'ome', dryRun: 'none', yes: true, output: 'table' })).toBe(0);
    expect(out.stdout).toContain('revision-hash   bbbbbbbb\n');
    expect(cluster.patches[0]?.patch.at(-1)).toEqual({ op: 'add', path: '/metadata/annotations/ome.io~1rollout-promote', value: 'bbbbbbbb' });
  });

  it('refuses while the canary holds before a step after a repin', async () => {
    const cluster = new FakeCluster();
    const isvc = driftedChat();
    if (isvc.status?.canary) isvc.status.canary.preStepHold = true;
    cluster.put(InferenceServices, isvc);
    const { env, out } = createEnv({ cluster, now: REPIN_NOW });
    const options = { name: 'chat', namespace: 'prod', omeNamespace: 'ome', dryRun: 'none' as const, yes: true, output: 'table' as const };
    expect(await runReportingErrors(env.io, () => runRolloutPromote(env, options))).toBe(1);
    expect(out.stderr).toBe('error: action refused: promote requires an active indefinite manual gate; analysis requires explicit override\n');
  });
});

describe('rollout promote --override-analysis', () => {
  /** The fixture's canary at an analysis step (one failed check of two) instead of its manual gate. */
  function atAnalysisGate() {
    const isvc = driftedChat();
    const group = isvc.status?.rollout?.activeRun?.plan.groups?.[0]?.group as unknown as { canary: { steps: Array<Record<string, unknown>> } };
    group.canary.steps[0] = {
      capacity: '50%',
      traffic: 20,
      pause: { duration: '10m' },
      analysis: { interval: '1m', initialDelay: '2m', failureLimit: 2, metrics: [{ name: 'error-ratio', operator: 'LT', threshold: '0.05', query: 'q' }] },
    };
    if (isvc.status?.canary) isvc.status.canary.analysisFailedChecks = 1;
    return isvc;
  }
  const options = { name: 'chat', namespace: 'prod', omeNamespace: 'ome', dryRun: 'none' as const, output: 'table' as const };

  it('passes the analysis gate with --yes: the same annotation, a preview that says what it skips', async () => {
    const cluster = new FakeCluster();
    cluster.put(InferenceServices, atAnalysisGate());
    const { env, out } = createEnv({ cluster, now: REPIN_NOW });
    expect(await runRolloutPromote(env, { ...options, yes: true, overrideAnalysis: true })).toBe(0);
    expect(cluster.patches[0]?.patch.at(-1)).toEqual({ op: 'add', path: '/metadata/annotations/ome.io~1rollout-promote', value: 'bbbbbbbb' });
    expect(out.stderr).toMatch(/Gate +Analysis\n/);
    expect(out.stderr).toMatch(/Failed checks +1 \/ 2\n/);
    expect(out.stderr).toMatch(/Warm-up +2m\n/);
    expect(out.stderr).toMatch(/Bake +10m\n/);
    expect(out.stderr).toContain("--override-analysis passes this step's analysis gate, skipping its health checks, warm-up and bake.");
  });

  it('refuses without --yes, before reading anything', async () => {
    const cluster = new FakeCluster();
    cluster.put(InferenceServices, atAnalysisGate());
    // A read would fail differently: the refusal comes first.
    cluster.failGet = new Error('the API server was asked');
    const { env, out } = createEnv({ cluster, now: REPIN_NOW, answers: ['y'] });
    expect(await runReportingErrors(env.io, () => runRolloutPromote(env, { ...options, yes: false, overrideAnalysis: true }))).toBe(1);
    expect(out.stderr).toBe('error: analysis override requires --override-analysis --yes\n');
    expect(cluster.patches).toEqual([]);
  });

  it.each([
    ['an analysis gate without the flag', atAnalysisGate, false],
    ['a manual gate with the flag', driftedChat, true],
  ])('refuses %s', async (_name, fixture, overrideAnalysis) => {
    const cluster = new FakeCluster();
    cluster.put(InferenceServices, fixture());
    const { env, out } = createEnv({ cluster, now: REPIN_NOW });
    expect(await runReportingErrors(env.io, () => runRolloutPromote(env, { ...options, yes: true, overrideAnalysis }))).toBe(1);
    expect(out.stderr).toBe('error: action refused: promote requires an active indefinite manual gate; analysis requires explicit override\n');
    expect(cluster.patches).toEqual([]);
  });

  it('is a flag of promote only', async () => {
    const { deps, out } = appWith(new FakeCluster());
    expect(await runApp(['rollout', 'repin', 'chat', '--override-analysis'], deps)).toBe(1);
    expect(out.stderr).toBe('error: unknown flag: --override-analysis\n');
  });
});

describe('rollout explain', () => {
  it('prints the Declared, Live and Effective views', async () => {
    const cluster = new FakeCluster();
    cluster.put(InferenceServices, driftedChat());
    const { env, out } = createEnv({ cluster, now: REPIN_NOW });
    expect(await runRolloutExplain(env, { name: 'chat', namespace: 'prod', output: 'table' })).toBe(0);
    const lines = out.stdout.split('\n');
    expect(lines[0]).toMatch(/^VIEW +ITEM +DETAIL$/);
    expect(out.stdout).toMatch(/Effective +PLAN +mode=Pinned; evidence=Reported; groups=1\n/);
    expect(out.stdout).toMatch(/DRIFT +True\/PolicyNewerThanRun; evidence=Reported\n/);
    expect(out.stdout).toMatch(/REVISIONS +stable=aaaaaaaa,target=bbbbbbbb\n/);
  });
});
