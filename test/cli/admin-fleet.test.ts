/**
 * `kubectl ome admin fleet sync|status|drift` through the plugin's command table, over the
 * in-memory stores (the same FleetStore port the DynamoDB adapter implements).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { runApp, type AppDeps } from '../../cli/app';
import type { FleetAccess } from '../../cli/admin/fleet';
import { haltWave, startCluster } from '../../shared/domain/fleet/sync-wave';
import type { ClusterRecord, Stores } from '../../shared/ports/store';
import { createMemoryStores } from '../../shared/adapters/memory';

const NOW = new Date('2026-12-01T10:00:00Z');

let stores: Stores;
let out: { stdout: string; stderr: string };
let opened: number;
let closed: number;

function deps(options: { tty?: boolean; answers?: string[] } = {}): AppDeps {
  const answers = [...(options.answers ?? [])];
  return {
    io: {
      stdout: { write: (text: string) => (out.stdout += text) },
      stderr: { write: (text: string) => (out.stderr += text) },
      stdin: { isTTY: options.tty ?? false, readLine: async () => answers.shift() ?? null },
    },
    connect: () => Promise.reject(new Error('fleet commands never connect to a cluster')),
    now: () => NOW,
    newRequestId: () => '00000000-0000-4000-8000-000000000000',
    sleep: async () => undefined,
    openFleet: async (): Promise<FleetAccess> => {
      opened += 1;
      return { fleet: stores.fleet, clusters: stores.clusters, close: () => (closed += 1) };
    },
  };
}

const record = (id: string, mode: 'delegate' | 'standalone'): ClusterRecord => ({ id, server: 'https://x', credentials: { kind: 'secret' }, omeNamespace: 'ome', mode });

beforeEach(async () => {
  stores = createMemoryStores({ now: () => NOW.getTime() });
  out = { stdout: '', stderr: '' };
  opened = 0;
  closed = 0;
  for (const [id, mode] of [['west', 'delegate'], ['east', 'delegate'], ['lab', 'standalone']] as const) await stores.clusters.putCluster(record(id, mode));
});

describe('kubectl ome admin fleet sync', () => {
  it('records a wave over every delegate cluster, ordered by id, once confirmed', async () => {
    const code = await runApp(['admin', 'fleet', 'sync', 'ServingRuntime/vllm', '-n', 'team-a', '--yes'], deps());
    expect(code).toBe(0);
    const [wave] = await stores.fleet.listWaves();
    expect(wave).toMatchObject({ runtime: { kind: 'ServingRuntime', namespace: 'team-a', name: 'vllm' }, state: 'Running', ackTimeout: '30m', ackTimeoutMs: 1_800_000 });
    expect(wave?.clusters.map((step) => step.clusterId)).toEqual(['east', 'west']);
    expect(out.stderr).toContain('ALPHA fleet sync wave preview');
    expect(out.stdout).toContain(`fleet-sync-${wave?.id}`);
    expect(out.stdout).toContain(`follow-up: kubectl ome admin fleet status ${wave?.id}`);
    expect([opened, closed]).toEqual([1, 1]);
  });

  it('keeps the order of --clusters and takes a Go duration deadline', async () => {
    expect(await runApp(['admin', 'fleet', 'sync', 'ClusterServingRuntime/vllm', '--clusters', 'west,east', '--ack-timeout', '1h30m', '--yes', '-o', 'json'], deps())).toBe(0);
    const printed = JSON.parse(out.stdout) as { clusters: Array<{ clusterId: string }>; ackTimeoutMs: number; runtime: { namespace: string } };
    expect(printed.clusters.map((step) => step.clusterId)).toEqual(['west', 'east']);
    expect(printed.ackTimeoutMs).toBe(5_400_000);
    expect(printed.runtime.namespace).toBe('');
  });

  it.each([
    { name: 'without --yes and no terminal', argv: ['ServingRuntime/vllm', '-n', 'a'], error: 'action not confirmed; noninteractive input requires --yes' },
    { name: 'a standalone cluster', argv: ['ServingRuntime/vllm', '-n', 'a', '--clusters', 'lab', '--yes'], error: 'cluster lab is not a delegate cluster' },
    { name: 'an unknown cluster', argv: ['ServingRuntime/vllm', '-n', 'a', '--clusters', 'north', '--yes'], error: 'cluster north is not registered' },
    { name: 'a ServingRuntime without namespace', argv: ['ServingRuntime/vllm', '--yes'], error: 'needs a namespace (-n)' },
    { name: 'a bad deadline', argv: ['ServingRuntime/vllm', '-n', 'a', '--ack-timeout', 'soon', '--yes'], error: 'time: invalid duration "soon"' },
  ])('refuses $name, recording nothing', async ({ argv, error }) => {
    expect(await runApp(['admin', 'fleet', 'sync', ...argv], deps())).toBe(1);
    expect(out.stderr).toContain(error);
    expect(await stores.fleet.listWaves()).toEqual([]);
  });

  it('refuses a second wave while one runs for the same runtime, not for another', async () => {
    expect(await runApp(['admin', 'fleet', 'sync', 'ServingRuntime/vllm', '-n', 'a', '--yes'], deps())).toBe(0);
    const [first] = await stores.fleet.listWaves();
    expect(await runApp(['admin', 'fleet', 'sync', 'ServingRuntime/vllm', '-n', 'a', '--yes'], deps())).toBe(1);
    expect(out.stderr).toContain(`error: sync wave ${first?.id} is still running for ServingRuntime a/vllm; wait for it to finish or halt`);
    expect(await runApp(['admin', 'fleet', 'sync', 'ServingRuntime/vllm', '-n', 'b', '--yes'], deps())).toBe(0);
    expect(await stores.fleet.listWaves()).toHaveLength(2);
  });

  it('takes the delegate clusters whose labels match --selector, by id, and shows the selector in the wave', async () => {
    // Prepare: north and west are prod in eu; east is prod elsewhere; lab is standalone (never in a wave).
    await stores.clusters.putCluster({ ...record('north', 'delegate'), labels: { env: 'prod', region: 'eu' } });
    await stores.clusters.putCluster({ ...record('west', 'delegate'), labels: { env: 'prod', region: 'eu' } });
    await stores.clusters.putCluster({ ...record('east', 'delegate'), labels: { env: 'prod', region: 'us' } });
    await stores.clusters.putCluster({ ...record('lab', 'standalone'), labels: { env: 'prod', region: 'eu' } });

    expect(await runApp(['admin', 'fleet', 'sync', 'vllm', '-l', 'env=prod,region=eu', '--yes'], deps())).toBe(0);

    const [wave] = await stores.fleet.listWaves();
    expect(wave?.clusters.map((step) => step.clusterId)).toEqual(['north', 'west']);
    expect(out.stderr).toContain('  clusters:     the delegate clusters matching env=prod,region=eu, ordered by id\n');
    out.stdout = '';
    expect(await runApp(['admin', 'fleet', 'status', wave!.id], deps())).toBe(0);
    expect(out.stdout).toContain('Ack timeout: 30m\nSelector:    env=prod,region=eu\n');
  });

  it.each([
    { name: 'a selector no delegate cluster matches', argv: ['-l', 'env=prod'], error: 'error: no delegate cluster matches the selector "env=prod" (kubectl ome admin cluster list --show-labels shows each cluster\'s labels)\n' },
    { name: 'a malformed selector', argv: ['-l', 'env in (prod'], error: 'error: selector "env in (prod": unbalanced parentheses\n' },
    { name: '--clusters with --selector', argv: ['--clusters', 'west', '-l', 'env=prod'], error: 'error: --clusters and --selector both choose the clusters: give one\n' },
  ])('refuses $name, recording nothing', async ({ argv, error }) => {
    expect(await runApp(['admin', 'fleet', 'sync', 'vllm', ...argv, '--yes'], deps())).toBe(1);
    expect(out.stderr.endsWith(error)).toBe(true);
    expect(await stores.fleet.listWaves()).toEqual([]);
  });

  it('asks on a terminal and records only on yes', async () => {
    expect(await runApp(['admin', 'fleet', 'sync', 'vllm'], deps({ tty: true, answers: ['n'] }))).toBe(1);
    expect(await stores.fleet.listWaves()).toEqual([]);
    expect(await runApp(['admin', 'fleet', 'sync', 'vllm'], deps({ tty: true, answers: ['yes'] }))).toBe(0);
    expect(await stores.fleet.listWaves()).toHaveLength(1);
  });
});

describe('kubectl ome admin fleet status', () => {
  it('lists waves, and shows a halted wave cluster by cluster with why it halted', async () => {
    await runApp(['admin', 'fleet', 'sync', 'vllm', '--yes'], deps());
    const [created] = await stores.fleet.listWaves();
    const started = await stores.fleet.saveWave(startCluster(created!, 0, [{ namespace: 'a', name: 'chat', uid: 'u', priorTokenHash: '' }], NOW.getTime()));
    await stores.fleet.saveWave(haltWave(started, 0, { namespace: 'a', name: 'chat', reason: 'RuntimePinError', message: 'a/chat: RuntimePinError: boom' }, NOW.getTime()));
    out.stdout = '';

    expect(await runApp(['admin', 'fleet', 'status'], deps())).toBe(0);
    expect(out.stdout).toMatch(/^WAVE\s+RUNTIME\s+STATE\s+ACKNOWLEDGED\s+CURRENT\s+AGE\n/);
    expect(out.stdout).toContain(`${created!.id}   ClusterServingRuntime vllm   Halted   0/2            east      0s`);

    out.stdout = '';
    expect(await runApp(['admin', 'fleet', 'status', created!.id], deps())).toBe(0);
    expect(out.stdout).toContain('State:       Halted (0/2 clusters acknowledged)');
    expect(out.stdout).toContain('Halted at:   east a/chat\nReason:      RuntimePinError\nMessage:     a/chat: RuntimePinError: boom');
    expect(out.stdout).toMatch(/east\s+Failed\s+1\s+2026-12-01T10:00:00Z\s+-\n/);
    expect(out.stdout).toMatch(/west\s+Pending\s+-\s+-\s+-\n/);
  });

  it('exits 1 for an unknown wave', async () => {
    expect(await runApp(['admin', 'fleet', 'status', 'nope'], deps())).toBe(1);
    expect(out.stderr).toBe('error: sync wave nope not found\n');
  });
});

describe('kubectl ome admin fleet drift', () => {
  it('prints every registered cluster, its report, and each drifting InferenceService', async () => {
    await stores.fleet.putDriftReport({
      clusterId: 'east',
      observedAt: NOW.getTime() - 180_000,
      inferenceServices: 3,
      drifted: 1,
      rows: [{ namespace: 'a', name: 'chat', runtimeKind: 'ServingRuntime', runtime: 'vllm', pinnedRevision: 'r-a-vllm-11111111', reason: 'RevisionMismatch', message: 'pinned r-a-vllm-11111111, live spec differs; bump ome.io/runtime-sync annotation to advance' }],
    });
    await stores.fleet.putDriftReport({ clusterId: 'west', observedAt: NOW.getTime() - 60_000, inferenceServices: 0, drifted: 0, rows: [], error: 'cluster west is not registered' });

    expect(await runApp(['admin', 'fleet', 'drift'], deps())).toBe(0);
    expect(out.stdout).toMatch(/east\s+delegate\s+3\s+1\s+3m ago\s+-\n/);
    expect(out.stdout).toMatch(/lab\s+standalone\s+-\s+-\s+not yet\s+-\n/);
    expect(out.stdout).toMatch(/west\s+delegate\s+0\s+0\s+60s ago\s+cluster west is not registered\n/);
    expect(out.stdout).toMatch(/east\s+a\s+chat\s+ServingRuntime\/vllm\s+r-a-vllm-11111111\s+RevisionMismatch\s+pinned r-a-vllm-11111111, live spec differs/);
  });
});
