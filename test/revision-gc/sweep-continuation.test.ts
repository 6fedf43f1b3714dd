/**
 * A GC sweep across invocations, through the embedded API server: each invocation's
 * budget (a fake remaining time the writes use up) covers a few writes; the sweep keeps
 * its plan time and place in the continuation store and the next sweep resumes there,
 * until one finishes. Every revision is marked once and later deleted once; a sweep run
 * again after the end, or a duplicate sweep, writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { createAppContext, type AppContext } from '../../shared/app/context';
import type { ControlPlaneConfig } from '../../shared/app/config';
import { REVISION_GC_WORK, sweepClusters, type ClusterSweepOutcome } from '../../shared/use-cases/revision-gc/sweep-clusters';
import { createMemoryStores } from '../../shared/adapters/memory';
import { CountingClient } from '../pinning/support';
import { DAY, T0, createNamespace, createRevisions, listRevisionNames } from './fixtures';

const config: ControlPlaneConfig = {
  tableName: 'unused',
  eventBusName: 'default',
  region: 'us-east-1',
  omeNamespace: 'ome',
  revisionRetention: 2,
  revisionGracePeriodMs: DAY,
  renderWorkloads: false,
  leaseTtlMs: 30_000,
  maxConflictRetries: 5,
};
const COUNT = 19;

let cluster: EmbeddedCluster;
let client: CountingClient;
let app: AppContext;
let time = T0 + 2 * DAY;
const writes = new Map<string, number>();
let invocationWrites = 0;

beforeAll(async () => {
  cluster = await startEmbeddedCluster();
  await createNamespace(cluster.client, 'revisions');
  await createRevisions(cluster.client, 'revisions', COUNT, { runtime: 'srt' });
  client = new CountingClient(cluster.client);
  client.onWrite = (verb, _type, name) => {
    invocationWrites += 1;
    const key = `${verb} ${name}`;
    writes.set(key, (writes.get(key) ?? 0) + 1);
  };
  const stores = createMemoryStores();
  await stores.clusters.putCluster({ mode: 'standalone', id: 'alpha', server: cluster.url, credentials: { kind: 'kubeconfig', kubeconfig: cluster.kubeconfig }, omeNamespace: 'revisions' });
  const base = createAppContext({ config, stores, clock: { now: () => time } });
  app = { ...base, cluster: async (id) => ({ id, client, omeNamespace: 'revisions', mode: 'standalone' }) };
});

afterAll(async () => {
  await cluster?.stop();
});

/** One invocation whose budget covers `budget` writes. */
async function invoke(budget: number, holder: string): Promise<ClusterSweepOutcome> {
  invocationWrites = 0;
  const [outcome] = await sweepClusters({ app, holder, clusterId: 'alpha', timeMarginMs: 0, remainingTimeMs: () => (budget - invocationWrites) * 1000 });
  return outcome as ClusterSweepOutcome;
}

async function sweepToEnd(budget: number): Promise<number> {
  let invocations = 0;
  for (;;) {
    invocations += 1;
    const outcome = await invoke(budget, `sweep-${invocations}`);
    expect(outcome.outcome).toBe('swept');
    if (outcome.outcome !== 'swept' || !outcome.continued) return invocations;
    expect(invocationWrites).toBeLessThanOrEqual(budget + 1);
  }
}

describe('revision GC across invocations', () => {
  it('marks every revision beyond the retained ones once, over several invocations', async () => {
    const invocations = await sweepToEnd(5);

    expect(invocations).toBeGreaterThanOrEqual(4);
    const marks = [...writes.entries()].filter(([key]) => key.startsWith('patch '));
    expect(marks).toHaveLength(COUNT - 2);
    expect(marks.every(([, n]) => n === 1)).toBe(true);
    expect(await app.stores.continuations.loadContinuation('alpha', REVISION_GC_WORK)).toBeUndefined();
  });

  it('a sweep again after the end writes nothing', async () => {
    writes.clear();
    await invoke(5, 'again');
    expect(writes.size).toBe(0);
  });

  it('deletes each marked revision once after the grace period, over several invocations; a duplicate sweep is refused while one holds the cluster', async () => {
    time += 2 * DAY;
    writes.clear();
    // The first invocation stops early and leaves its place in the table.
    const first = await invoke(4, 'delete-1');
    expect(first.outcome === 'swept' && first.continued).toBe(true);
    const saved = await app.stores.continuations.loadContinuation('alpha', REVISION_GC_WORK);
    // The place is the last revision written, by name: the next sweep skips the names up to it.
    expect(saved?.after).toMatch(/^cr-/);
    // A duplicate of the sweep while another holds the cluster's lease does nothing.
    const held = await app.stores.leases.acquire('revision-gc#alpha', 'other', 60_000);
    expect((await invoke(4, 'duplicate')).outcome).toBe('busy');
    await app.stores.leases.release(held!);

    await sweepToEnd(4);

    const deletes = [...writes.entries()].filter(([key]) => key.startsWith('delete '));
    expect(deletes).toHaveLength(COUNT - 2);
    expect(deletes.every(([, n]) => n === 1)).toBe(true);
    expect((await listRevisionNames(cluster.client, 'revisions')).size).toBe(2);
    expect(await app.stores.continuations.loadContinuation('alpha', REVISION_GC_WORK)).toBeUndefined();
  });
});
