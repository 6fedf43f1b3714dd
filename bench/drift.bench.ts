/**
 * Drift fan-out for a ClusterServingRuntime used by 10,000 pinned InferenceServices on
 * the embedded cluster (in-process client, memory stores): the time to report
 * RevisionMismatch on all of them and the Kubernetes requests per affected
 * InferenceService. Its baseline is the least that work can be: the same paginated list
 * plus the same N status writes done bare (raw client calls, as many at once as the
 * fan-out makes, no decision, no lease), in the same run; the goal is at most 1.2x. The
 * two alternate in five pairs (AB BA AB BA AB) and the figure is the median pair's ratio.
 * A second figure is a fan-out that changes nothing (the runtime's spec is unchanged),
 * beside the plain list: the decision's own cost per object, with no write to hide it.
 * `DRIFT_BENCH_ISVCS` sets the count (default 10,000).
 */
import { startEmbeddedCluster } from '../local/cluster';
import { createEventRecorder } from '../shared/use-cases/record-event';
import type { InferenceService } from '../shared/domain/model/inference-service';
import { Resources } from '../shared/domain/model/resources';
import { checkRuntimeDrift, createDirectWorkloadWriter, type DriftCheckDeps } from '../shared/use-cases/pinning';
import { systemClock } from '../shared/ports/clock';
import type { ClusterClient, KubeObject, ResourceType } from '../shared/ports/cluster';
import { buildControllerRevision, resolveRuntimeChain } from '../shared/domain/runtime';
import { createMemoryStores } from '../shared/adapters/memory';
import { buildSeedRuntimeSpec } from '../test/runtime/fixtures/seed-runtime';
import { benchSize, compare } from './harness';
import type { BenchResult, BenchSuite } from './harness';

const ISVCS = Number(process.env.DRIFT_BENCH_ISVCS ?? benchSize(10_000, 200));
/** As many writes at once as the fan-out's default concurrency. */
const WRITERS = 16;
/** Paired rounds of bare writes and fan-out. */
const ROUNDS = benchSize(5, 1);
const NAMESPACES = 20;
const PAGE = 500;
const RUNTIME = 'bench-runtime';

/** Counts requests by verb and resource. */
function countingClient(inner: ClusterClient): { client: ClusterClient; counts: Map<string, number>; total(): number } {
  const counts = new Map<string, number>();
  const note = (verb: string, type: ResourceType): void => {
    const key = `${verb} ${type.plural}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  const client: ClusterClient = {
    get: (type, ns, name) => (note('get', type), inner.get(type, ns, name)),
    list: (type, options) => (note('list', type), inner.list(type, options)),
    create: (type, object, options) => (note('create', type), inner.create(type, object, options)),
    replace: (type, object, options) => (note('replace', type), inner.replace(type, object, options)),
    replaceStatus: (type, object, options) => (note('replaceStatus', type), inner.replaceStatus(type, object, options)),
    patch: (type, ns, name, patch, options) => (note('patch', type), inner.patch(type, ns, name, patch, options)),
    delete: (type, ns, name, options) => (note('delete', type), inner.delete(type, ns, name, options)),
    watch: (type, options, onEvent) => (note('watch', type), inner.watch(type, options, onEvent)),
  };
  return { client, counts, total: () => [...counts.values()].reduce((a, b) => a + b, 0) };
}

function runtime(memFrac: '0.9' | '0.85'): KubeObject {
  return { apiVersion: 'ome.io/v1beta1', kind: 'ClusterServingRuntime', metadata: { name: RUNTIME }, spec: buildSeedRuntimeSpec(memFrac) };
}

async function inBatches(count: number, size: number, work: (i: number) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < count; start += size) {
    await Promise.all(Array.from({ length: Math.min(size, count - start) }, (_, k) => work(start + k)));
  }
}

/** Runs `work` over 0..count-1 with at most `limit` at once, as the fan-out does. */
async function inPool(count: number, limit: number, work: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next;
      next += 1;
      await work(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function describeCounts(counts: Map<string, number>): string {
  return [...counts.entries()].map(([key, n]) => `${key}=${n}`).join(', ');
}

const suite: BenchSuite = {
  name: 'drift',
  async run(): Promise<BenchResult[]> {
    const cluster = await startEmbeddedCluster({ watchWindow: 100 });
    try {
      const admin = cluster.client;
      const stored = await admin.create(Resources.clusterServingRuntimes, runtime('0.9'));
      const resolved = resolveRuntimeChain({ kind: 'ClusterServingRuntime', name: RUNTIME, spec: stored.spec }, () => undefined);
      if (!resolved.ok) throw new Error(resolved.message);
      const revision = buildControllerRevision({ kind: 'ClusterServingRuntime', namespace: '', runtimeName: RUNTIME, mergedSpec: resolved.spec, omeNamespace: 'ome' });
      await admin.create(Resources.controllerRevisions, revision);
      for (let n = 0; n < NAMESPACES; n += 1) await admin.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `bench-${n}` } });
      await inBatches(ISVCS, 100, async (i) => {
        const isvc = await admin.create<InferenceService>(Resources.inferenceServices, {
          apiVersion: 'ome.io/v1beta1',
          kind: 'InferenceService',
          metadata: { name: `isvc-${i}`, namespace: `bench-${i % NAMESPACES}` },
          spec: { model: { name: 'llama-3-2-3b-instruct' }, runtime: { name: RUNTIME, autoSync: false }, engine: { minReplicas: 1 } },
        });
        await admin.replaceStatus(Resources.inferenceServices, { ...isvc, status: { pinnedRevisionName: revision.metadata.name } });
      });

      const counting = countingClient(admin);
      const stores = createMemoryStores(systemClock);
      const deps: DriftCheckDeps = {
        clusterId: 'bench',
        client: counting.client,
        omeNamespace: 'ome',
        leases: stores.leases,
        idempotency: stores.idempotency,
        clock: systemClock,
        config: { renderWorkloads: false, leaseTtlMs: 30_000, maxConflictRetries: 5 },
        holder: 'bench',
        events: createEventRecorder(counting.client),
        workloads: createDirectWorkloadWriter(counting.client),
      };
      const trigger = { kind: 'ClusterServingRuntime', name: RUNTIME, change: 'modified' } as const;

      const listAll = async (): Promise<number> => {
        let items = 0;
        let token: string | undefined;
        do {
          const page = await counting.client.list(Resources.inferenceServices, { limit: PAGE, ...(token ? { continue: token } : {}) });
          items += page.items.length;
          token = page.continue || undefined;
        } while (token);
        return items;
      };
      const listMs = await timed(listAll);
      const listRequests = counting.total();
      counting.counts.clear();

      // Nothing changed yet: every InferenceService is evaluated, none is written.
      const idleMs = await timed(() => checkRuntimeDrift(deps, trigger));
      const idleRequests = counting.total();
      const idleDetail = describeCounts(counting.counts);
      counting.counts.clear();

      // The bare baseline: the same list, and one status write per listed object with a
      // condition of the size the fan-out writes, as many at once as the fan-out. It leaves
      // RuntimeDrifted False, so the fan-out after it has every object to write again.
      let barePass = 0;
      const bare = async (): Promise<void> => {
        barePass += 1;
        let token: string | undefined;
        do {
          const page = await counting.client.list<InferenceService>(Resources.inferenceServices, { limit: PAGE, ...(token ? { continue: token } : {}) });
          const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
          await inPool(page.items.length, WRITERS, (i) => {
            const isvc = page.items[i] as InferenceService;
            const condition = { type: 'RuntimeDrifted', status: 'False', reason: 'BenchBaseline', message: `bare status write ${barePass}, object ${i}`, lastTransitionTime: now };
            return counting.client.replaceStatus(Resources.inferenceServices, { ...isvc, status: { ...isvc.status, conditions: [condition] } }, { fieldManager: 'bench' });
          });
          token = page.continue || undefined;
        } while (token);
      };

      // The runtime flips between its two specs before each fan-out: to 0.85 every object
      // drifts (RevisionMismatch), back to 0.9 every condition is removed; either way one
      // write per object, as many as the bare pass makes.
      let memFrac: '0.9' | '0.85' = '0.9';
      const fanOut = async (): Promise<number> => {
        memFrac = memFrac === '0.9' ? '0.85' : '0.9';
        const current = await admin.get(Resources.clusterServingRuntimes, undefined, RUNTIME);
        await admin.replace(Resources.clusterServingRuntimes, { ...runtime(memFrac), metadata: { name: RUNTIME, resourceVersion: current.metadata.resourceVersion } });
        let report: Awaited<ReturnType<typeof checkRuntimeDrift>> | undefined;
        const ms = await timed(async () => {
          report = await checkRuntimeDrift(deps, trigger);
        });
        if (report?.statusWrites !== ISVCS) throw new Error(`expected ${ISVCS} status writes, got ${JSON.stringify(report)}`);
        return ms;
      };
      // Rounds in the order AB BA AB BA AB: each pair back to back so that a busy moment of the
      // shared machine hits both sides alike, and each side going first as often, so that
      // neither pays more often for the other's garbage. The figure is the median of the
      // pairs' ratios.
      const ratios: number[] = [];
      const driftTimes: number[] = [];
      const bareTimes: number[] = [];
      let bareRequests = 0;
      let driftRequests = 0;
      let detail = '';
      let runtimeReads = 0;
      for (let round = 0; round < ROUNDS; round += 1) {
        let bareMs: number;
        let driftMs: number;
        counting.counts.clear();
        if (round % 2 === 0) {
          bareMs = await timed(bare);
          if (round === 0) bareRequests = counting.total();
          counting.counts.clear();
          driftMs = await fanOut();
        } else {
          driftMs = await fanOut();
          counting.counts.clear();
          bareMs = await timed(bare);
        }
        if (round === 0) {
          driftRequests = counting.total();
          runtimeReads = (counting.counts.get('get clusterservingruntimes') ?? 0) + (counting.counts.get('get servingruntimes') ?? 0);
          detail = describeCounts(counting.counts);
        }
        ratios.push(driftMs / bareMs);
        driftTimes.push(driftMs);
        bareTimes.push(bareMs);
      }
      const affected = ISVCS;
      const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
      const driftMs = median(driftTimes);
      const bareMs = median(bareTimes);
      const driftResult = compare(
        'drift',
        { name: `fan-out to ${ISVCS} drifting ISVCs`, value: driftMs, unit: 'ms' },
        { name: `list + ${ISVCS} bare status writes`, value: bareMs, unit: 'ms' },
        `goal <= 1.2; median of ${ROUNDS} paired rounds' ratios ${ratios.map((r) => r.toFixed(2)).join(', ')}; ${(driftMs / affected).toFixed(3)} ms per affected ISVC; plain list ${listMs.toFixed(0)} ms`,
      );
      driftResult.ratio = median(ratios);

      return [
        driftResult,
        compare(
          'drift',
          { name: 'Kubernetes requests per affected ISVC', value: driftRequests / affected, unit: 'req' },
          { name: 'bare list + write requests per ISVC', value: bareRequests / ISVCS, unit: 'req' },
          `${detail}; runtime reads ${runtimeReads}; list alone ${(listRequests / ISVCS).toFixed(3)}`,
        ),
        compare(
          'drift',
          { name: `fan-out, nothing drifts (${ISVCS} ISVCs)`, value: idleMs, unit: 'ms' },
          { name: `paginated list of ${ISVCS} ISVCs`, value: listMs, unit: 'ms' },
          `${idleRequests} requests: ${idleDetail}`,
        ),
      ];
    } finally {
      await cluster.stop();
    }
  },
};

export default suite;
