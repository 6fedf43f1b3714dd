import { describe, expect, it } from 'vitest';

import { InferenceServices, ServingRuntimes, ControllerRevisions } from '../../cli/resources';
import { runReportingErrors } from '../../cli/run';
import { runRuntimeEffective } from '../../cli/runtime/effective';
import { runRuntimeHistory } from '../../cli/runtime/history';
import { runRuntimeSync } from '../../cli/runtime/sync';
import { runWait } from '../../cli/wait';
import { Resources } from '../../shared/domain/model/resources';
import { formatTokenReusedMessage } from '../../shared/use-cases/pinning/pin-inference-service';
import { FakeCluster } from './fake-cluster';
import { createEnv } from './harness';
import { driftedLlama, NEW_REVISION, OLD_REVISION, seedRevision, seedRuntime } from './runtime-fixtures';

const target = { name: 'llama-3-2-3b-instruct', namespace: 'llama-demo' };
const REQUEST_ID = '3f0c9a52-8d1e-4b7a-9c65-2e4f1d7b8a90';

function seeded(options: { withNewRevision?: boolean; answers?: string[] } = {}) {
  const cluster = new FakeCluster();
  cluster.put(ServingRuntimes, seedRuntime('0.85'));
  cluster.put(ControllerRevisions, seedRevision('0.9', '2026-09-28T14:15:57Z'));
  if (options.withNewRevision) cluster.put(ControllerRevisions, seedRevision('0.85', '2026-09-28T14:17:13Z'));
  cluster.put(InferenceServices, driftedLlama());
  return createEnv({ cluster, answers: options.answers, contextName: 'embedded' });
}

describe('runtime effective', () => {
  it('shows the live spec, the pinned revision and the drift', async () => {
    const { env, out } = seeded();
    expect(await runRuntimeEffective(env, { ...target, omeNamespace: 'ome', output: 'table' })).toBe(0);
    expect(out.stdout).toBe(`SCOPE     FIELD           VALUE
Live      STATE           Available
Live      RUNTIME         SR/llama-demo/sglang-llama-3-2-3b
Live      HASH            af9539ac
Live      ENGINE          RawDeployment (Default)
Active    STATE           Available
Active    RUNTIME         SR/llama-demo/sglang-llama-3-2-3b
Active    REVISION        ${OLD_REVISION}
Active    HASH            590753e8
Active    ENGINE          RawDeployment (Default)
Service   PIN             ManagedPin/Resolved
Service   SYNC            Absent
Service   STATUS          Current
Service   DRIFT           ReportedTrue/RevisionMismatch
Service   LIVE-RELATION   Different
`);
  });

  it('reports a deleted pinned revision', async () => {
    const { env, out, cluster } = seeded();
    cluster.objects.delete(`controllerrevisions/ome/${OLD_REVISION}`);
    await runRuntimeEffective(env, { ...target, omeNamespace: 'ome', output: 'table' });
    expect(out.stdout).toContain('Active    REASON          NotFound\n');
    expect(out.stdout).toContain('Service   PIN             ManagedPin/RevisionMissing\n');
    expect(out.stdout).toContain(`Service   ISSUE           RevisionNotFound(${OLD_REVISION})\n`);
  });
});

describe('runtime history', () => {
  it('lists revisions newest first with full names in wide output and marks the one in use', async () => {
    const { env, out } = seeded({ withNewRevision: true });
    expect(await runRuntimeHistory(env, { ...target, omeNamespace: 'ome', output: 'wide' })).toBe(0);
    const lines = out.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^OBSERVATION +COMPLETENESS +PAGES +REVISION +CREATED +HASH +ROLES +SOURCE +CONSISTENCY +RELATION/);
    expect(lines[1]).toMatch(new RegExp(`^Complete +RetentionBounded +1/1 +${NEW_REVISION} +2026-09-28T14:17:13Z +af9539ac +History +ServingRuntime/llama-demo/sglang-llama-3-2-3b +Consistent +MatchesLive`));
    expect(lines[2]).toMatch(new RegExp(`^Complete +RetentionBounded +1/1 +${OLD_REVISION} +2026-09-28T14:15:57Z +590753e8 +Active,Reported,History +.* +Consistent +DiffersFromLive`));
  });

  it('prints the bounded table by default', async () => {
    const { env, out } = seeded({ withNewRevision: true });
    await runRuntimeHistory(env, { ...target, omeNamespace: 'ome', output: 'table' });
    const lines = out.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('WINDOW    REVISION         CREATED           ROLES   CHECK   LIVE    ISSUES');
    expect(lines[1]).toMatch(/^C\/B\/1\/1 {3}r-\.\.\.#[0-9a-f]{8} {3}26-09-28T14:17Z {3}H {7}OK {6}MATCH {3}R0\/G0$/);
    expect(lines[2]).toMatch(/^C\/B\/1\/1 {3}r-\.\.\.#[0-9a-f]{8} {3}26-09-28T14:15Z {3}ARH {5}OK {6}DIFF {4}R0\/G0$/);
  });
});

describe('runtime sync', () => {
  it('sets a cli-runtime-sync token after the checks and prints the request ID', async () => {
    const { env, out, cluster } = seeded({ answers: ['yes'] });
    const code = await runReportingErrors(env.io, () => runRuntimeSync(env, { ...target, omeNamespace: 'ome', dryRun: 'none', yes: false, output: 'table' }));
    expect(code).toBe(0);
    expect(out.stdout).toBe(`FIELD           VALUE
action          runtime sync
target          InferenceService/llama-demo/llama-3-2-3b-instruct
dry-run         none
accepted        Yes
applied         Yes
request-id      ${REQUEST_ID}
revision-hash   af9539ac
message         API accepted annotation request; consumption and conv...
follow-up       kubectl ome runtime effective llama-3-2-3b-instruct -...
hint            Use -o json or -o yaml for full values.
`);
    expect(out.stderr).toContain(`Predicted pin     ${NEW_REVISION}\n`);
    expect(cluster.patches[0]?.patch).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'isvc-uid' },
      { op: 'test', path: '/metadata/resourceVersion', value: '4711' },
      { op: 'add', path: '/metadata/annotations', value: {} },
      { op: 'add', path: '/metadata/annotations/ome.io~1runtime-sync', value: `cli-runtime-sync-${REQUEST_ID}` },
    ]);
  });

  it('tests the old token and refuses while a token waits', async () => {
    const { env, out, cluster } = seeded();
    const isvc = driftedLlama();
    isvc.metadata.annotations = { 'ome.io/runtime-sync': 'old' };
    isvc.status = { ...isvc.status, lastRuntimeSyncToken: 'old' };
    cluster.put(InferenceServices, isvc);
    expect(await runRuntimeSync(env, { ...target, omeNamespace: 'ome', dryRun: 'server', yes: true, output: 'json' })).toBe(0);
    expect(cluster.patches[0]?.patch[2]).toEqual({ op: 'test', path: '/metadata/annotations/ome.io~1runtime-sync', value: 'old' });
    expect(JSON.parse(out.stdout)).toMatchObject({ dryRun: 'server', accepted: true, applied: false, requestID: REQUEST_ID, revisionHash: 'af9539ac' });

    isvc.metadata.annotations = { 'ome.io/runtime-sync': 'new-token' };
    cluster.put(InferenceServices, isvc);
    out.stderr = '';
    const code = await runReportingErrors(env.io, () => runRuntimeSync(env, { ...target, omeNamespace: 'ome', dryRun: 'none', yes: true, output: 'table' }));
    expect(code).toBe(1);
    expect(out.stderr).toBe('error: action refused: managed runtime sync safety evidence is unavailable or inconsistent\n');
  });

  it('names a waiting token that already rolled the InferenceService forward, instead of the generic refusal', async () => {
    const { env, out, cluster } = seeded();
    const isvc = driftedLlama();
    isvc.metadata.annotations = { 'ome.io/runtime-sync': '2026-09-28T14:15:57Z' };
    isvc.status = { ...isvc.status, lastRuntimeSyncToken: 'later-one' };
    cluster.put(InferenceServices, isvc);
    const sync = () => runReportingErrors(env.io, () => runRuntimeSync(env, { ...target, omeNamespace: 'ome', dryRun: 'none', yes: true, output: 'table' }));

    // Without the pin's warning the waiting token may still be in flight: the generic refusal.
    expect(await sync()).toBe(1);
    expect(out.stderr).toBe('error: action refused: managed runtime sync safety evidence is unavailable or inconsistent\n');

    cluster.put(Resources.events, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'llama.reused', namespace: 'llama-demo' },
      involvedObject: { kind: 'InferenceService', namespace: 'llama-demo', name: target.name, uid: isvc.metadata.uid },
      type: 'Warning',
      reason: 'RuntimePinError',
      message: formatTokenReusedMessage('2026-09-28T14:15:57Z'),
    });
    out.stderr = '';
    expect(await sync()).toBe(1);
    expect(out.stderr).toBe(
      'error: action refused: the pending ome.io/runtime-sync value "2026-09-28T14:15:57Z" already rolled this InferenceService forward once and will not take effect again; remove it (kubectl annotate inferenceservice llama-3-2-3b-instruct -n llama-demo ome.io/runtime-sync-) and retry\n',
    );
    expect(cluster.patches).toHaveLength(0);
  });

  it('refuses while a rollout mailbox is present', async () => {
    const { env, out, cluster } = seeded();
    const isvc = driftedLlama();
    isvc.metadata.annotations = { 'ome.io/rollout-rollback': 'true' };
    cluster.put(InferenceServices, isvc);
    expect(await runReportingErrors(env.io, () => runRuntimeSync(env, { ...target, omeNamespace: 'ome', dryRun: 'none', yes: true, output: 'table' }))).toBe(1);
    expect(out.stderr).toBe('error: action refused: a rollout promote or rollback mailbox is present\n');
  });
});

describe('wait --for=runtime-sync=acknowledged', () => {
  const waitOptions = { ...target, forPredicate: 'runtime-sync=acknowledged', requestId: REQUEST_ID, timeoutMs: 60_000, pollIntervalMs: 5_000, output: 'table' as const };

  it('exits 0 once the controller records the token and clears the drift', async () => {
    const { env, out, cluster, sleeps } = seeded();
    const isvc = driftedLlama();
    isvc.metadata.annotations = { 'ome.io/runtime-sync': `cli-runtime-sync-${REQUEST_ID}` };
    cluster.put(InferenceServices, isvc);
    const sleep = env.sleep;
    env.sleep = async (ms) => {
      await sleep(ms);
      cluster.put(InferenceServices, {
        ...isvc,
        status: { observedGeneration: 1, pinnedRevisionName: NEW_REVISION, lastRuntimeSyncToken: `cli-runtime-sync-${REQUEST_ID}`, conditions: [] },
      });
    };
    expect(await runWait(env, waitOptions)).toBe(0);
    expect(sleeps).toEqual([5_000]);
    expect(out.stdout).toContain('Outcome                Matched\nToken state            Acknowledged\nDrift state            Clear\nManaged pin            Managed\n');
    expect(out.stdout).toContain('GET / WATCH / polls    2 / 0 / 1\n');
  });

  it('exits 2 after the timeout when the token is still pending', async () => {
    const { env, out, cluster, sleeps } = seeded();
    const isvc = driftedLlama();
    isvc.metadata.annotations = { 'ome.io/runtime-sync': `cli-runtime-sync-${REQUEST_ID}` };
    cluster.put(InferenceServices, isvc);
    expect(await runWait(env, waitOptions)).toBe(2);
    expect(sleeps).toHaveLength(12);
    expect(out.stdout).toContain('Outcome                TimedOut\nToken state            Pending\n');
    expect(out.stderr).toBe('error: RequestedConditionUnmet\n');
  });

  it('exits 2 at once when the InferenceService does not exist', async () => {
    const { env, out } = seeded();
    expect(await runWait(env, { ...waitOptions, name: 'missing' })).toBe(2);
    expect(out.stdout).toContain('Outcome                NotFound\n');
  });

  it('rejects a request ID that is not a v4 UUID', async () => {
    const { env, out } = seeded();
    expect(await runReportingErrors(env.io, () => runWait(env, { ...waitOptions, requestId: 'abc' }))).toBe(1);
    expect(out.stderr).toBe('error: --request-id must be the canonical v4 UUID that runtime sync printed\n');
  });
});
