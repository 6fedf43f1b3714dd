import { describe, expect, it } from 'vitest';

import { InferenceServices } from '../../cli/resources';
import { runReportingErrors } from '../../cli/run';
import { runRolloutRepin, type RolloutRepinOptions } from '../../cli/rollout/repin';
import { ConflictError, UnavailableError } from '../../shared/domain/errors';
import { FakeCluster } from './fake-cluster';
import { driftedChat, REPIN_NOW } from './fixtures';
import { createEnv } from './harness';

const SEED_RESULT = `FIELD                   VALUE
action                  rollout repin
target                  InferenceService/prod/chat
dry-run                 none
accepted                Yes
applied                 Yes
run-id                  chat-0123456789ab
pinned-plan-digest      rp1:56fe0ddd6edd
requested-plan-digest   rp1:1d153db2a5df
group-count             1
message                 API accepted repin annotation; controller consumption...
follow-up               kubectl ome rollout explain chat -n prod --context=pr...
hint                    Use -o json or -o yaml for full values.
`;

function setup(options: { answers?: string[]; tty?: boolean; mutate?: (isvc: ReturnType<typeof driftedChat>) => void } = {}) {
  const cluster = new FakeCluster();
  const isvc = driftedChat();
  options.mutate?.(isvc);
  cluster.put(InferenceServices, isvc);
  return createEnv({ cluster, now: REPIN_NOW, answers: options.answers, tty: options.tty });
}

const base: RolloutRepinOptions = { name: 'chat', namespace: 'prod', dryRun: 'none', yes: false, output: 'table' };

describe('rollout repin', () => {
  it('prints the seed result after the user confirms, and sets the annotation to the live plan digest', async () => {
    const { env, out, cluster } = setup({ answers: ['y'] });
    const code = await runReportingErrors(env.io, () => runRolloutRepin(env, base));
    expect(code).toBe(0);
    expect(out.stdout).toBe(SEED_RESULT);
    expect(out.stderr).toContain('ALPHA guarded rollout repin (not controller convergence)');
    expect(out.stderr).toContain('Confirm this exact action? [y/N] ');
    expect(cluster.patches[0]?.patch).toEqual([
      { op: 'test', path: '/metadata/uid', value: '5d9f3c2a-8b41-4f7e-a0c6-1e2b3c4d5e6f' },
      { op: 'test', path: '/metadata/resourceVersion', value: '184467' },
      { op: 'add', path: '/metadata/annotations/ome.io~1rollout-repin', value: 'rp1:1d153db2a5df' },
    ]);
    const stored = await cluster.get(InferenceServices, 'prod', 'chat');
    expect(stored.metadata.annotations?.['ome.io/rollout-repin']).toBe('rp1:1d153db2a5df');
  });

  it('adds the annotations map when the object has none', async () => {
    const { env, cluster } = setup({ mutate: (isvc) => delete isvc.metadata.annotations });
    expect(await runRolloutRepin(env, { ...base, yes: true })).toBe(0);
    expect(cluster.patches[0]?.patch[2]).toEqual({ op: 'add', path: '/metadata/annotations', value: {} });
  });

  it('sends a server dry run with dryRun=All and stores nothing', async () => {
    const { env, out, cluster } = setup();
    expect(await runRolloutRepin(env, { ...base, yes: true, dryRun: 'server' })).toBe(0);
    expect(cluster.patches[0]?.options).toEqual({ type: 'json', dryRun: 'All' });
    expect(out.stdout).toContain('dry-run                 server\naccepted                Yes\napplied                 No\n');
    expect(out.stdout).toContain('message                 API dry-run accepted; no changes persisted.\n');
    const stored = await cluster.get(InferenceServices, 'prod', 'chat');
    expect(stored.metadata.annotations?.['ome.io/rollout-repin']).toBeUndefined();
  });

  it('sends nothing on a client dry run', async () => {
    const { env, out, cluster } = setup();
    expect(await runRolloutRepin(env, { ...base, yes: true, dryRun: 'client' })).toBe(0);
    expect(cluster.patches).toHaveLength(0);
    expect(out.stdout).toContain('accepted                No\napplied                 No\n');
  });

  it('prints the full result as JSON', async () => {
    const { env, out } = setup();
    await runRolloutRepin(env, { ...base, yes: true, output: 'json' });
    const result = JSON.parse(out.stdout);
    expect(result).toMatchObject({
      apiVersion: 'cli.ome.io/v1alpha1',
      kind: 'ActionResult',
      collectedAt: '2026-09-28T14:30:00Z',
      action: 'rollout repin',
      target: { kind: 'InferenceService', namespace: 'prod', name: 'chat', resourceVersion: '184467' },
      dryRun: 'none',
      accepted: true,
      applied: true,
      message: 'API accepted repin annotation; controller consumption and plan replacement were not observed.',
      followUp: 'kubectl ome rollout explain chat -n prod --context=prod-cluster',
      rollout: { runID: 'chat-0123456789ab', pinnedPlanDigest: 'rp1:56fe0ddd6edd', requestedPlanDigest: 'rp1:1d153db2a5df', groupCount: 1 },
    });
  });

  it.each([
    ['without a terminal', { tty: false }],
    ['when the answer is not yes', { answers: ['n'] }],
  ])('refuses to send %s', async (_label, options) => {
    const { env, out, cluster } = setup(options);
    const code = await runReportingErrors(env.io, () => runRolloutRepin(env, base));
    expect(code).toBe(1);
    expect(out.stderr.endsWith('error: action not confirmed; noninteractive input requires --yes\n')).toBe(true);
    expect(out.stdout).toBe('');
    expect(cluster.patches).toHaveLength(0);
  });

  it.each([
    ['a 409', new ConflictError('conflict'), 3, 'guarded annotation patch rejected; refresh rollout explain and retry explicitly'],
    ['a lost connection', new UnavailableError('socket hang up'), 1, 'rollout repin request outcome unknown; do not replay, check rollout explain'],
  ])('maps %s on the patch', async (_label, failure, code, message) => {
    const { env, out, cluster } = setup();
    cluster.failNextPatch = failure;
    expect(await runReportingErrors(env.io, () => runRolloutRepin(env, { ...base, yes: true }))).toBe(code);
    expect(out.stderr.endsWith(`error: ${message}\n`)).toBe(true);
    expect(out.stdout).toBe('');
  });

  it('exits 3 when the object changed after the read (failed test)', async () => {
    const { env, out, cluster } = setup();
    const original = cluster.get.bind(cluster);
    cluster.get = (async (...args: Parameters<typeof original>) => {
      const read = await original(...args);
      cluster.put(InferenceServices, { ...read, metadata: { ...read.metadata, resourceVersion: '999' } });
      return read;
    }) as typeof cluster.get;
    expect(await runReportingErrors(env.io, () => runRolloutRepin(env, { ...base, yes: true }))).toBe(3);
    expect(out.stderr).toContain('error: guarded annotation patch rejected; refresh rollout explain and retry explicitly');
  });

  it('fails with the fixed access message when the read fails', async () => {
    const { env, out } = setup();
    expect(await runReportingErrors(env.io, () => runRolloutRepin(env, { ...base, name: 'missing', yes: true }))).toBe(1);
    expect(out.stderr).toBe(
      'error: required Kubernetes API request failed; check access and connectivity\nError from server (NotFound): inferenceservices "missing" not found\n',
    );
  });

  it.each([
    ['a mailbox is present', (i: ReturnType<typeof driftedChat>) => (i.metadata.annotations = { 'ome.io/rollout-promote': 'bbbbbbbb' }), 'a rollout action mailbox is already present'],
    ['no run is active', (i: ReturnType<typeof driftedChat>) => delete i.status?.rollout?.activeRun, 'no active pinned run'],
    ['the spec has no groups', (i: ReturnType<typeof driftedChat>) => (i.spec = {}), 'empty live plans are not supported by this command'],
    [
      'the groups changed shape',
      (i: ReturnType<typeof driftedChat>) => i.spec?.rollout?.groups?.push({ components: ['router'] }),
      'live and pinned rollout topology differ',
    ],
    [
      'drift is InSync',
      (i: ReturnType<typeof driftedChat>) => {
        const drift = i.status?.conditions?.[1];
        if (drift) Object.assign(drift, { status: 'False', reason: 'InSync', message: 'in sync' });
      },
      'the current plan is already pinned',
    ],
    [
      'the drift message disagrees with the groups',
      (i: ReturnType<typeof driftedChat>) => {
        const group = i.status?.rollout?.groups?.[0];
        if (group) group.observedDigest = 'rp1:cccccccccccc';
      },
      'controller plan evidence is missing, stale or inconsistent',
    ],
  ])('refuses when %s', async (_label, mutate, reason) => {
    const { env, out, cluster } = setup({ mutate });
    expect(await runReportingErrors(env.io, () => runRolloutRepin(env, { ...base, yes: true }))).toBe(1);
    expect(out.stderr).toBe(`error: rollout repin refused: ${reason}\n`);
    expect(cluster.patches).toHaveLength(0);
  });
});
