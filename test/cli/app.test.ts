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
