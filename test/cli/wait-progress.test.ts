/**
 * `wait` on a terminal shows one progress line on stderr, rewritten at each check, and
 * nothing on a pipe; `runtime sync --wait` waits for the acknowledgement after applying,
 * with wait's exit codes.
 */
import { describe, expect, it } from 'vitest';

import { runApp, type AppDeps } from '../../cli/app';
import { ControllerRevisions, InferenceServices, ServingRuntimes } from '../../cli/resources';
import { runWait } from '../../cli/wait';
import type { InferenceServiceObject } from '../../cli/isvc';
import { FakeCluster } from './fake-cluster';
import { createEnv } from './harness';
import { driftedLlama, NEW_REVISION, seedRevision, seedRuntime } from './runtime-fixtures';

const target = { name: 'llama-3-2-3b-instruct', namespace: 'llama-demo' };
const REQUEST_ID = '3f0c9a52-8d1e-4b7a-9c65-2e4f1d7b8a90';
const TOKEN = `cli-runtime-sync-${REQUEST_ID}`;

function seeded() {
  const cluster = new FakeCluster();
  cluster.put(ServingRuntimes, seedRuntime('0.85'));
  cluster.put(ControllerRevisions, seedRevision('0.9', '2026-09-28T14:15:57Z'));
  cluster.put(InferenceServices, driftedLlama());
  return createEnv({ cluster, contextName: 'embedded', ids: [REQUEST_ID] });
}

describe('wait progress', () => {
  const waitOptions = { ...target, forPredicate: 'runtime-sync=acknowledged', requestId: REQUEST_ID, timeoutMs: 15_000, pollIntervalMs: 5_000, output: 'table' as const };

  it('rewrites one line on a terminal and clears it before the result', async () => {
    const { env, out, cluster } = seeded();
    const isvc = driftedLlama();
    isvc.metadata.annotations = { 'ome.io/runtime-sync': TOKEN };
    cluster.put(InferenceServices, isvc);
    env.io.stderr.isTTY = true;
    expect(await runWait(env, waitOptions)).toBe(2);
    const line = (elapsed: number, left: number) =>
      `\r\u001b[KWaiting for runtime-sync=acknowledged on llama-demo/llama-3-2-3b-instruct: token Pending, drift ReportedTrue, pin Managed (${elapsed}s elapsed, ${left}s left)`;
    expect(out.stderr).toBe(`${line(0, 15)}${line(5, 10)}${line(10, 5)}\r\u001b[Kerror: RequestedConditionUnmet\n`);
    expect(out.stdout).toContain('Outcome                TimedOut\n');
  });

  it('prints no progress when stderr is not a terminal', async () => {
    const { env, out, cluster } = seeded();
    const isvc = driftedLlama();
    isvc.metadata.annotations = { 'ome.io/runtime-sync': TOKEN };
    cluster.put(InferenceServices, isvc);
    expect(await runWait(env, waitOptions)).toBe(2);
    expect(out.stderr).toBe('error: RequestedConditionUnmet\n');
  });
});

function appFor(env: ReturnType<typeof seeded>['env'], cluster: FakeCluster): AppDeps {
  return {
    io: env.io,
    connect: async () => ({ client: cluster, contextName: 'embedded' }),
    now: env.now,
    newRequestId: env.newRequestId,
    sleep: env.sleep,
  };
}

/** Plays the controller: at the first pause, records the token the CLI set and clears the drift. */
function acknowledgeOnFirstSleep(env: ReturnType<typeof seeded>['env'], cluster: FakeCluster): void {
  const sleep = env.sleep;
  env.sleep = async (ms) => {
    await sleep(ms);
    const current = await cluster.get<InferenceServiceObject>(InferenceServices, target.namespace, target.name);
    cluster.put(InferenceServices, {
      ...current,
      status: { observedGeneration: 1, pinnedRevisionName: NEW_REVISION, lastRuntimeSyncToken: current.metadata.annotations?.['ome.io/runtime-sync'] ?? '', conditions: [] },
    });
  };
}

describe('runtime sync --wait', () => {
  const argv = ['runtime', 'sync', target.name, '-n', target.namespace, '--yes', '--wait', '--timeout=30s'];

  it('applies, then waits for the acknowledgement and exits 0', async () => {
    const { env, out, cluster } = seeded();
    acknowledgeOnFirstSleep(env, cluster);
    expect(await runApp(argv, appFor(env, cluster))).toBe(0);
    expect(out.stdout).toContain(`request-id      ${REQUEST_ID}\n`);
    expect(out.stdout).toContain('Outcome                Matched\n');
    expect(out.stdout.indexOf('applied         Yes')).toBeLessThan(out.stdout.indexOf('Outcome'));
  });

  it('exits 2 when the acknowledgement does not come in time', async () => {
    const { env, out, cluster } = seeded();
    expect(await runApp([...argv, '--timeout=10s'], appFor(env, cluster))).toBe(2);
    expect(out.stdout).toContain('Outcome                TimedOut\nToken state            Pending\n');
    expect(out.stderr.endsWith('error: RequestedConditionUnmet\n')).toBe(true);
  });

  it('prints two YAML documents with -o yaml', async () => {
    const { env, out, cluster } = seeded();
    acknowledgeOnFirstSleep(env, cluster);
    expect(await runApp([...argv, '-o', 'yaml'], appFor(env, cluster))).toBe(0);
    expect(out.stdout).toMatch(/kind: ActionResult\n[^]*\n---\n[^]*kind: WaitReport\n/);
  });

  it('refuses --wait with a dry run before reading anything', async () => {
    const { env, out, cluster } = seeded();
    expect(await runApp([...argv, '--dry-run=server'], appFor(env, cluster))).toBe(1);
    expect(out.stderr).toBe('error: --wait needs --dry-run=none: a dry run stores no token to wait for\n');
    expect(cluster.patches).toHaveLength(0);
  });
});
