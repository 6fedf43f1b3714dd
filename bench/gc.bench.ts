/**
 * Revision GC over many revisions, against the embedded API server's in-process client.
 * The sweep's time is set beside the least its work can cost: a list of the revisions and
 * of the InferenceServices plus the same marks and deletes done bare, on a second server
 * seeded alike (goal at most 1.5x). Its live heap is set beside a paginated list that
 * holds nothing (the least any listing costs), at the main count and at each count of
 * `GC_BENCH_HEAP` (default 1,000, 10,000 and 50,000), each on a fresh server: flat memory
 * shows as the same growth at every count, so bytes per revision fall as revisions grow.
 *
 * Each runtime has 50 revisions: the 10 newest kept, one old one pinned by an
 * InferenceService, 4 marked past the grace period (deleted), 5 unmarked (marked) and 30
 * marked inside the grace period (waiting): a sweep with a realistic share of writes.
 * `GC_BENCH_REVISIONS` sets the count (default 100,000, a multiple of 50; 0 skips the timed
 * sweep) and `GC_BENCH_PAGE` the list page size (default 2,000: the embedded server scans
 * its whole store on every page, so a full listing costs pages x objects; a real API
 * server does not).
 *
 * Memory: the server shares this process, and its per-page garbage would swamp a plain
 * heap peak. So the memory runs collect garbage after list pages (where both sides'
 * retained memory peaks) and record the live heap; they are separate from the timed runs,
 * which do no forced collection. The swept side is a dry run that keeps no names (a real
 * sweep would change the store it measures). Each figure is one sample.
 */
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { startEmbeddedCluster } from '../local/cluster';
import { Resources } from '../shared/domain/model/resources';
import type { ClusterClient, KubeObject, ListOptions, ListPage, ResourceType } from '../shared/ports/cluster';
import { formatGcMark } from '../shared/domain/runtime/gc';
import { DEFAULT_GC_WRITE_CONCURRENCY, sweepRevisions } from '../shared/use-cases/revision-gc/sweep-revisions';
import { Annotation, CREATED_BY_OME, Label, RuntimeKind } from '../shared/domain/vocabulary';
import { benchSize, compare } from './harness';
import type { BenchResult, BenchSuite } from './harness';

const PER_RUNTIME = 50;
const OME = 'ome';
const ISVC_NAMESPACE = 'bench-gc';
const DAY = 86_400_000;

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/**
 * The largest live heap (after a full collection) seen at list-page boundaries, every
 * `every`-th page: both sides' retained memory only grows while they list, so a few
 * samples plus one at the end find the peak without a full collection per page.
 */
class LiveHeapProbe {
  private base = 0;
  private pages = 0;
  peak = 0;

  constructor(private readonly every: number) {}

  reset(): void {
    collectGarbage();
    this.base = process.memoryUsage().heapUsed;
    this.peak = this.base;
    this.pages = 0;
  }

  page(): void {
    this.pages += 1;
    if (this.pages % this.every === 0) this.sample();
  }

  sample(): void {
    collectGarbage();
    this.peak = Math.max(this.peak, process.memoryUsage().heapUsed);
  }

  get growthMb(): number {
    return (this.peak - this.base) / 2 ** 20;
  }
}

/** The real client, sampling the live heap after each list page. */
function probed(client: ClusterClient, probe: LiveHeapProbe): ClusterClient {
  return {
    get: (type, namespace, name) => client.get(type, namespace, name),
    async list<T extends KubeObject>(type: ResourceType, options?: ListOptions): Promise<ListPage<T>> {
      const page = await client.list<T>(type, options);
      probe.page();
      return page;
    },
    create: (type, object, options) => client.create(type, object, options),
    replace: (type, object, options) => client.replace(type, object, options),
    replaceStatus: (type, object, options) => client.replaceStatus(type, object, options),
    patch: (type, namespace, name, patch, options) => client.patch(type, namespace, name, patch, options),
    delete: (type, namespace, name, options) => client.delete(type, namespace, name, options),
    watch: (type, options, onEvent) => client.watch(type, options, onEvent),
  };
}

/** The real client, counting every request it sends. */
function counted(client: ClusterClient): { client: ClusterClient; requests: () => number } {
  let requests = 0;
  const count = <T>(work: T): T => {
    requests += 1;
    return work;
  };
  return {
    requests: () => requests,
    client: {
      get: (type, namespace, name) => count(client.get(type, namespace, name)),
      list: (type, options) => count(client.list(type, options)),
      create: (type, object, options) => count(client.create(type, object, options)),
      replace: (type, object, options) => count(client.replace(type, object, options)),
      replaceStatus: (type, object, options) => count(client.replaceStatus(type, object, options)),
      patch: (type, namespace, name, patch, options) => count(client.patch(type, namespace, name, patch, options)),
      delete: (type, namespace, name, options) => count(client.delete(type, namespace, name, options)),
      watch: (type, options, onEvent) => count(client.watch(type, options, onEvent)),
    },
  };
}

function revision(runtime: string, index: number, mark: string | undefined): KubeObject {
  const hash = index.toString(16).padStart(8, '0');
  const annotations: Record<string, string> = { [Annotation.createdBy]: CREATED_BY_OME };
  if (mark !== undefined) annotations[Annotation.gcEligibleSince] = mark;
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: `cr-${runtime}-${hash}`,
      namespace: OME,
      labels: { [Label.runtimeOf]: runtime, [Label.runtimeOfKind]: RuntimeKind.cluster, [Label.runtimeOfNamespace]: '', [Label.revisionHash]: hash },
      annotations,
    },
    // A small resolved spec, about the size of the seed's runtime.
    data: { containers: [{ name: 'ome-container', image: 'lmsysorg/sglang:v0.4', args: ['--mem-frac=0.9', `--revision=${index}`], resources: { limits: { 'nvidia.com/gpu': '1' } } }] },
    revision: 1,
  };
}

/**
 * The server stamps creation times to the second. Creating each runtime's revisions from
 * the highest index down makes a lower index never older, and ties order by name, so
 * index 0..9 are the newest, 10 is pinned, 11..14 expired, 15..19 unmarked and the rest
 * waiting, however the seconds fall.
 */
async function seed(client: ClusterClient, count: number, now: number): Promise<void> {
  const expired = formatGcMark(now - 2 * DAY);
  const recent = formatGcMark(now - 60_000);
  await client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ISVC_NAMESPACE } });
  for (let r = 0; r < count / PER_RUNTIME; r += 1) {
    const runtime = `rt${r}`;
    for (let i = PER_RUNTIME - 1; i >= 0; i -= 1) {
      const mark = i < 11 || (i >= 15 && i < 20) ? undefined : i < 15 ? expired : recent;
      await client.create(Resources.controllerRevisions, revision(runtime, i, mark));
    }
    await client.create(Resources.inferenceServices, {
      apiVersion: 'ome.io/v1beta1',
      kind: 'InferenceService',
      metadata: { name: `isvc-${r}`, namespace: ISVC_NAMESPACE },
      spec: { runtime: { name: runtime, autoSync: false, revision: `cr-${runtime}-${(10).toString(16).padStart(8, '0')}` } },
    });
  }
}

async function listAll(client: ClusterClient, pageSize: number): Promise<KubeObject[]> {
  const items: KubeObject[] = [];
  let token: string | undefined;
  do {
    const page = await client.list(Resources.controllerRevisions, { namespace: OME, limit: pageSize, ...(token ? { continue: token } : {}) });
    items.push(...page.items);
    token = page.continue;
  } while (token);
  return items;
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = process.hrtime.bigint();
  const value = await work();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value };
}

function readCount(name: string, fallback: number, multipleOf: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < multipleOf || value % multipleOf !== 0) {
    throw new Error(`${name}=${String(raw)} must be a positive multiple of ${multipleOf}`);
  }
  return value;
}

/**
 * The least a sweep's writes can cost: one paged list of the revisions (names only kept),
 * one of the InferenceServices, then the same marks (merge patches) and deletes the sweep
 * makes, sent bare (no preconditions, no fresh listing before deletes), as many at once.
 */
async function bareSweep(client: ClusterClient, pageSize: number, marks: readonly string[], deletes: readonly string[], markValue: string): Promise<number> {
  const listed = await listNothing(client, pageSize);
  let token: string | undefined;
  do {
    const page: ListPage<KubeObject> = await client.list(Resources.inferenceServices, { limit: pageSize, ...(token ? { continue: token } : {}) });
    token = page.continue;
  } while (token);
  const patch = { metadata: { annotations: { [Annotation.gcEligibleSince]: markValue } } };
  await inPool(marks, DEFAULT_GC_WRITE_CONCURRENCY, (name) => client.patch(Resources.controllerRevisions, OME, name, patch, { type: 'merge', fieldManager: 'bench' }));
  await inPool(deletes, DEFAULT_GC_WRITE_CONCURRENCY, (name) => client.delete(Resources.controllerRevisions, OME, name));
  return listed;
}

async function inPool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next] as T;
      next += 1;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** A paged listing of the revisions that keeps nothing: the least any sweep's memory can be. */
async function listNothing(client: ClusterClient, pageSize: number): Promise<number> {
  let listed = 0;
  let token: string | undefined;
  do {
    const page = await client.list(Resources.controllerRevisions, { namespace: OME, limit: pageSize, ...(token ? { continue: token } : {}) });
    listed += page.items.length;
    token = page.continue;
  } while (token);
  return listed;
}

interface HeapFigures {
  /** Peak live heap growth of a dry run that keeps no names, MB. */
  sweepMb: number;
  /** Peak live heap growth of a paged list that keeps nothing, MB. */
  listMb: number;
  /** The sweep's own count of revision records held at once. */
  held: number;
}

/** The sweep's and a bare list's peak live heap growth over the revisions `client` serves. */
async function measureHeap(client: ClusterClient, count: number, pageSize: number, now: number): Promise<HeapFigures> {
  const probe = new LiveHeapProbe(Math.max(1, Math.ceil(count / pageSize / 6)));
  probe.reset();
  await listNothing(probed(client, probe), pageSize);
  probe.sample();
  const listMb = probe.growthMb;
  probe.reset();
  const result = await sweepRevisions(probed(client, probe), { omeNamespace: OME, retention: 10, graceMs: DAY, now, pageSize, dryRun: true, keepPlanned: false });
  probe.sample();
  return { sweepMb: probe.growthMb, listMb, held: result.peakHeldRevisions };
}

/** The heap figures over `count` revisions, on a cluster of its own. */
async function heapAt(count: number, pageSize: number): Promise<HeapFigures> {
  const cluster = await startEmbeddedCluster({ watchWindow: 100 });
  try {
    const now = Date.now();
    await seed(cluster.client, count, now);
    return await measureHeap(cluster.client, count, pageSize, now);
  } finally {
    await cluster.stop();
  }
}

function heapResult(count: number, heap: HeapFigures, pageSize: number): BenchResult {
  const perRevision = (mb: number): string => `${((mb * 2 ** 20) / count).toFixed(1)} B/revision`;
  const bound = pageSize + 10 * (count / PER_RUNTIME);
  return compare('gc', { name: `sweep live heap, ${count.toLocaleString('en-US')} revisions`, value: heap.sweepMb, unit: 'MB' },
    { name: 'paged list holding nothing', value: heap.listMb, unit: 'MB' },
    `sweep ${perRevision(heap.sweepMb)}, list ${perRevision(heap.listMb)}; held at most ${heap.held} revision records (bound: page + 10 per runtime = ${bound})`);
}

function readCounts(name: string, fallback: string): number[] {
  const raw = process.env[name] || fallback;
  const counts = raw.split(',').map(Number);
  if (counts.some((n) => !Number.isInteger(n) || n < PER_RUNTIME || n % PER_RUNTIME !== 0)) throw new Error(`${name}=${raw} must list positive multiples of ${PER_RUNTIME}`);
  return counts;
}

const suite: BenchSuite = {
  name: 'gc',
  async run(): Promise<BenchResult[]> {
    const count = process.env.GC_BENCH_REVISIONS === '0' ? 0 : readCount('GC_BENCH_REVISIONS', benchSize(100_000, 1_000), PER_RUNTIME);
    const pageSize = readCount('GC_BENCH_PAGE', 2_000, 1);
    const heapCounts = readCounts('GC_BENCH_HEAP', benchSize('1000,10000,50000', '1000'));
    const results: BenchResult[] = count === 0 ? [] : await timedSweep(count, pageSize);
    // Memory as revisions grow: each count on a fresh cluster, one sample each.
    for (const n of heapCounts) results.push(heapResult(n, await heapAt(n, pageSize), pageSize));
    return results;
  },
};

/** The timed sweep over `count` revisions beside the same work done bare, and its heap at that count. */
async function timedSweep(count: number, pageSize: number): Promise<BenchResult[]> {
  const cluster = await startEmbeddedCluster({ watchWindow: 100 });
  const clusters = [cluster];
  try {
    const now = Date.now();
    const client = cluster.client;
    const seeding = await timed(() => seed(client, count, now));
    // Memory run first, while this process holds one server: the live heap after list pages.
    const heap = await measureHeap(client, count, pageSize, now);
    // The bare baseline's copy of the same objects, on a server of its own: the embedded
    // server scans its whole store on every list page, so a copy in the same store would
    // double the cost of every list the sweep makes.
    const bareCluster = await startEmbeddedCluster({ watchWindow: 100 });
    clusters.push(bareCluster);
    await seed(bareCluster.client, count, now);
    const options = { omeNamespace: OME, retention: 10, graceMs: DAY, now, pageSize };

    // Timed runs: no forced collections.
    const list = await timed(async () => (await listAll(client, pageSize)).length);
    const dry = await timed(() => sweepRevisions(client, { ...options, dryRun: true }));

    // The bare baseline writes what a sweep of its server would: the plan is made
    // first, untimed.
    const barePlan = (await sweepRevisions(bareCluster.client, { ...options, dryRun: true })).planned;
    if (!barePlan) throw new Error('a dry run returns its plan');
    const bareClient = counted(bareCluster.client);
    const bare = await timed(() => bareSweep(bareClient.client, pageSize, barePlan.mark, barePlan.delete, formatGcMark(now)));

    // The real sweep last: it marks and deletes.
    const rssBefore = process.memoryUsage().rss;
    const sweepClient = counted(client);
    const sweep = await timed(() => sweepRevisions(sweepClient.client, options));
    const rssGrowth = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    const s = sweep.value.stats;
    if (list.value !== count || s.scanned !== count || bare.value !== count) throw new Error(`expected ${count} revisions, listed ${list.value}, swept ${s.scanned}, bare ${bare.value}`);
    if (s.marked !== barePlan.mark.length || s.deleted !== barePlan.delete.length) throw new Error(`the sweep wrote ${s.marked} marks and ${s.deleted} deletes, the bare plan ${barePlan.mark.length} and ${barePlan.delete.length}`);

    const label = `${count.toLocaleString('en-US')} revisions`;
    return [
      compare('gc', { name: `GC sweep over ${label}`, value: sweep.ms, unit: 'ms' },
        { name: `list + ${s.marked} marks + ${s.deleted} deletes, bare`, value: bare.ms, unit: 'ms' },
        `goal <= 1.5; kept ${s.kept}, waiting ${s.waiting}; plain list ${list.ms.toFixed(0)} ms; page ${pageSize}; RSS growth ${rssGrowth.toFixed(0)} MB; seeding took ${(seeding.ms / 1000).toFixed(1)} s`),
      compare('gc', { name: `GC sweep requests over ${label}`, value: sweepClient.requests(), unit: 'requests' },
        { name: 'the same list, marks and deletes, bare', value: bareClient.requests(), unit: 'requests' },
        `goal <= 1.5; the sweep's extra: the references listed again before its first write and after every 100 deletes`),
      compare('gc', { name: `GC dry run (list + plan) over ${label}`, value: dry.ms, unit: 'ms' }, { name: `paged list of ${label}`, value: list.ms, unit: 'ms' }, `page ${pageSize}`),
      heapResult(count, heap, pageSize),
    ];
  } finally {
    for (const c of clusters) await c.stop();
  }
}

export default suite;
