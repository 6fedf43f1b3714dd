import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { Resources } from '../../shared/domain/model/resources';
import type { ClusterClient } from '../../shared/ports/cluster';
import { formatGcMark } from '../../shared/domain/runtime/gc';
import { sweepRevisions, type RevisionGcSweepOptions } from '../../shared/use-cases/revision-gc/sweep-revisions';
import { Annotation, RuntimeKind } from '../../shared/domain/vocabulary';
import { CountingClient } from '../pinning/support';
import { createIsvc, createNamespace, createRevision, createRevisions, DAY, HOUR, interleave, listRevisionNames, T0 } from './fixtures';

const NOW = T0 + 10 * DAY;
const LONG_AGO = formatGcMark(NOW - 2 * DAY);
const markOf = (object: { metadata: { annotations?: Record<string, string> } } | undefined) => object?.metadata.annotations?.[Annotation.gcEligibleSince];

describe('sweepRevisions against the embedded API server', () => {
  let cluster: EmbeddedCluster;
  let client: ClusterClient;
  let counter = 0;

  /** Each test gets its own OME namespace (and ISVC namespace), so tests never see each other's revisions. */
  async function freshNamespaces(): Promise<{ ome: string; apps: string; rt: string; options: RevisionGcSweepOptions }> {
    counter += 1;
    const ome = `ome-gc-${counter}`;
    const apps = `apps-gc-${counter}`;
    await createNamespace(client, ome);
    await createNamespace(client, apps);
    // Revision names carry the runtime's name: a per-test runtime keeps other tests' ISVCs from naming ours.
    return { ome, apps, rt: `srt${counter}`, options: { omeNamespace: ome, retention: 10, graceMs: DAY, now: NOW } };
  }

  beforeAll(async () => {
    cluster = await startEmbeddedCluster();
    client = cluster.client;
  });

  afterEach(() => {
    cluster.faults.clear();
  });

  afterAll(async () => {
    await cluster?.stop();
  });

  describe('Method: sweepRevisions', () => {
    it('keeps referenced revisions and the 10 newest, marks the rest, and leaves other controllers\' revisions alone', async () => {
      // Prepare: 14 revisions, oldest first; #0 named in spec, #1 in status; one foreign revision.
      const { ome, apps, rt, options } = await freshNamespaces();
      const names = await createRevisions(client, ome, 14, { runtime: rt });
      await createIsvc(client, apps, 'rollback', { runtime: rt, revision: names[0] });
      await createIsvc(client, apps, 'pinned', { runtime: rt, pinned: names[1] });
      await createRevision(client, ome, { runtime: rt, index: 99, createdAt: T0 - DAY, createdBy: 'someone-else' });

      // Act
      const result = await sweepRevisions(client, options);

      // Assess: 10 newest (#4..#13) + 2 referenced kept; #2 and #3 marked with the sweep's clock.
      expect(result.stats).toEqual({ scanned: 14, kept: 12, marked: 2, unmarked: 0, waiting: 0, deleted: 0, keptOnRecheck: 0, skippedConflicts: 0, failed: 0 });
      const after = await listRevisionNames(client, ome);
      expect(markOf(after.get(names[2] as string))).toBe(formatGcMark(NOW));
      expect(markOf(after.get(names[3] as string))).toBe(formatGcMark(NOW));
      for (const name of [names[0], names[1], ...names.slice(4)]) expect(markOf(after.get(name as string))).toBeUndefined();
      expect(markOf(after.get(`cr-${rt}-00000063`))).toBeUndefined();
    });

    it('deletes a revision once its mark is older than the grace period, waits inside it, and re-marks an unparsable mark', async () => {
      const { ome, rt, options } = await freshNamespaces();
      await createRevisions(client, ome, 10, { runtime: rt });
      const old = { runtime: rt, createdAt: T0 - DAY };
      const expired = await createRevision(client, ome, { ...old, index: 100, mark: LONG_AGO });
      const waiting = await createRevision(client, ome, { ...old, index: 101, mark: formatGcMark(NOW - HOUR) });
      const garbled = await createRevision(client, ome, { ...old, index: 102, mark: 'yesterday' });

      const result = await sweepRevisions(client, options);

      expect(result.stats).toMatchObject({ scanned: 13, kept: 10, marked: 1, waiting: 1, deleted: 1, skippedConflicts: 0 });
      const after = await listRevisionNames(client, ome);
      expect(after.has(expired.metadata.name)).toBe(false);
      expect(markOf(after.get(waiting.metadata.name))).toBe(formatGcMark(NOW - HOUR));
      expect(markOf(after.get(garbled.metadata.name))).toBe(formatGcMark(NOW));
    });

    it('unmarks a marked revision that is kept again', async () => {
      const { ome, apps, rt, options } = await freshNamespaces();
      await createRevisions(client, ome, 10, { runtime: rt });
      const marked = await createRevision(client, ome, { runtime: rt, index: 50, createdAt: T0 - DAY, mark: LONG_AGO });
      await createIsvc(client, apps, 'rollback', { runtime: rt, revision: marked.metadata.name });

      const result = await sweepRevisions(client, options);

      expect(result.stats).toMatchObject({ kept: 11, unmarked: 1, deleted: 0 });
      const after = await listRevisionNames(client, ome);
      expect(markOf(after.get(marked.metadata.name))).toBeUndefined();
    });

    it('takes retention and grace from its options', async () => {
      const { ome, rt, options } = await freshNamespaces();
      const names = await createRevisions(client, ome, 4, { runtime: rt });
      const first = await sweepRevisions(client, { ...options, retention: 2, graceMs: HOUR });
      expect(first.stats).toMatchObject({ kept: 2, marked: 2 });

      const second = await sweepRevisions(client, { ...options, retention: 2, graceMs: HOUR, now: NOW + HOUR });

      expect(second.stats).toMatchObject({ kept: 2, deleted: 2 });
      expect([...(await listRevisionNames(client, ome)).keys()].sort()).toEqual(names.slice(2).sort());
      expect(first.collected).toBeUndefined();
      expect(second.collected).toEqual([{ kind: RuntimeKind.cluster, namespace: '', name: rt, count: 2, names: names.slice(0, 2).sort() }]);
    });

    it('counts a revision as collected only in the sweep whose delete removed it', async () => {
      // Prepare: 10 kept, 3 expired. Sweep A deletes one at a time, in name order; sweep B
      // runs whole between A's first delete and its second.
      const { ome, rt, options } = await freshNamespaces();
      await createRevisions(client, ome, 10, { runtime: rt });
      const expired: string[] = [];
      for (const index of [100, 101, 102]) expired.push((await createRevision(client, ome, { runtime: rt, index, createdAt: T0 - DAY, mark: LONG_AGO })).metadata.name);
      let running: ReturnType<typeof sweepRevisions> | undefined;
      const racing = interleave(client, {
        async beforeDelete(name) {
          if (name !== expired[0]) await (running ??= sweepRevisions(client, options));
        },
      });

      // Act
      const sweepA = await sweepRevisions(racing, { ...options, writeConcurrency: 1 });
      const sweepB = await running;

      // Assess: A announces the one it deleted, B the two it deleted; A's two late deletes found them gone.
      expect(sweepA.stats).toMatchObject({ deleted: 1, skippedConflicts: 2 });
      expect(sweepA.collected).toEqual([{ kind: RuntimeKind.cluster, namespace: '', name: rt, count: 1, names: [expired[0]] }]);
      expect(sweepB?.collected).toEqual([{ kind: RuntimeKind.cluster, namespace: '', name: rt, count: 2, names: expired.slice(1) }]);
    });

    it('writes nothing in a dry run and reports what it would mark and delete', async () => {
      const { ome, rt, options } = await freshNamespaces();
      await createRevisions(client, ome, 11, { runtime: rt });
      const expired = await createRevision(client, ome, { runtime: rt, index: 70, createdAt: T0 - DAY, mark: LONG_AGO });
      const before = await listRevisionNames(client, ome);

      const result = await sweepRevisions(client, { ...options, dryRun: true });

      expect(result.dryRun).toBe(true);
      expect(result.collected).toBeUndefined();
      expect(result.planned).toEqual({ mark: [`cr-${rt}-00000000`], unmark: [], delete: [expired.metadata.name] });
      expect(result.stats).toMatchObject({ scanned: 12, kept: 10, marked: 1, deleted: 1 });
      const after = await listRevisionNames(client, ome);
      expect([...after.entries()].map(([name, o]) => [name, o.metadata.resourceVersion])).toEqual(
        [...before.entries()].map(([name, o]) => [name, o.metadata.resourceVersion]),
      );
    });

    it('gives same-named runtimes in different namespaces their own retention', async () => {
      // 12 revisions of ServingRuntime srt in team-a, 3 of srt in team-b, 2 of ClusterServingRuntime srt.
      const { ome, rt, options } = await freshNamespaces();
      const teamA = await createRevisions(client, ome, 12, { runtime: rt, kind: RuntimeKind.namespaced, runtimeNamespace: 'team-a' });
      await createRevisions(client, ome, 3, { runtime: rt, kind: RuntimeKind.namespaced, runtimeNamespace: 'team-b' });
      await createRevisions(client, ome, 2, { runtime: rt });

      const result = await sweepRevisions(client, { ...options, dryRun: true });

      // Keyed on the name alone (upstream), team-a's newer history would push team-b's out.
      expect(result.planned?.mark.sort()).toEqual(teamA.slice(0, 2).sort());
      expect(result.stats).toMatchObject({ scanned: 17, kept: 15 });
    });

    it('plans the same across small pages as in one page', async () => {
      const { ome, apps, rt, options } = await freshNamespaces();
      const names = await createRevisions(client, ome, 23, { runtime: rt });
      await createRevisions(client, ome, 12, { runtime: 'other' });
      for (let i = 0; i < 7; i += 1) await createIsvc(client, apps, `isvc-${i}`, { runtime: rt, pinned: names[i] });
      let revisionPages = 0;
      const counting = interleave(client, {
        async afterList(type, listOptions) {
          if (type === Resources.controllerRevisions && listOptions?.limit === 4) revisionPages += 1;
        },
      });

      const paged = await sweepRevisions(counting, { ...options, dryRun: true, pageSize: 4 });
      const whole = await sweepRevisions(client, { ...options, dryRun: true });

      expect(revisionPages).toBe(9);
      expect({ ...paged, peakHeldRevisions: 0 }).toEqual({ ...whole, peakHeldRevisions: 0 });
      // One page of 4 plus at most the 10 newest of each of the two runtimes.
      expect(paged.peakHeldRevisions).toBeLessThanOrEqual(4 + 10 * 2);
      expect(paged.stats).toMatchObject({ scanned: 35, kept: 17 + 10, marked: 8 });
    });

    it('holds one page plus the newest per runtime, not one record per revision, writing as it goes', async () => {
      // 30 runtimes of 40 revisions each, listed 25 at a time: 1,200 revisions.
      const { ome, options } = await freshNamespaces();
      for (let r = 0; r < 30; r += 1) await createRevisions(client, ome, 40, { runtime: `mem${counter}-${r}` });

      const dry = await sweepRevisions(client, { ...options, pageSize: 25, dryRun: true, keepPlanned: false });
      const swept = await sweepRevisions(client, { ...options, pageSize: 25 });

      const bound = 25 + options.retention * 30;
      expect(dry.stats).toMatchObject({ scanned: 1_200, kept: 300, marked: 900 });
      expect(dry.planned).toBeUndefined();
      expect(swept.stats).toMatchObject({ scanned: 1_200, kept: 300, marked: 900, failed: 0 });
      expect(dry.peakHeldRevisions).toBeLessThanOrEqual(bound);
      expect(swept.peakHeldRevisions).toBeLessThanOrEqual(bound);
    }, 60_000);

    it('sends the requests of a bare list, its marks and deletes, plus one listing of the references per 100 deletes', async () => {
      // 12 runtimes of 30: per runtime the 10 newest kept, 10 unmarked (marked), 10 marked long ago (deleted).
      const { ome, options } = await freshNamespaces();
      for (let r = 0; r < 12; r += 1) {
        for (let index = 0; index < 30; index += 1) {
          const mark = index < 10 ? LONG_AGO : undefined;
          await createRevision(client, ome, { runtime: `cost${counter}-${r}`, index, createdAt: T0 + index * 60_000, ...(mark ? { mark } : {}) });
        }
      }
      const counting = new CountingClient(client);

      const result = await sweepRevisions(counting, { ...options, pageSize: 50 });

      expect(result.stats).toMatchObject({ scanned: 360, kept: 120, marked: 120, deleted: 120, failed: 0 });
      // Bare: 8 pages of revisions, 1 of InferenceServices, 240 writes (249). The sweep adds
      // the references listed again before its first write and after 100 deletes: 251.
      expect(Object.fromEntries(counting.counts)).toEqual({
        'list controllerrevisions': 8,
        'list inferenceservices': 3,
        'patch controllerrevisions': 120,
        'delete controllerrevisions': 120,
      });
    });

    it('skips a write that loses a race with a 409 and leaves the decision to the next sweep', async () => {
      const { ome, rt, options } = await freshNamespaces();
      await createRevisions(client, ome, 12, { runtime: rt });
      cluster.faults.inject({ verb: 'patch', resource: 'controllerrevisions', name: `cr-${rt}-00000000`, count: 1, status: 409 });

      const result = await sweepRevisions(client, options);

      expect(result.stats).toMatchObject({ marked: 1, skippedConflicts: 1, failed: 0 });
      expect(markOf((await listRevisionNames(client, ome)).get(`cr-${rt}-00000000`))).toBeUndefined();
    });
  });

  describe('GC racing a rollback never deletes the revision being pinned', () => {
    it('keeps a revision that a rollback named after the sweep listed the references', async () => {
      // Prepare: #0 is old, unreferenced and marked long ago: the plan deletes it.
      const { ome, apps, rt, options } = await freshNamespaces();
      const names = await createRevisions(client, ome, 11, { runtime: rt });
      const target = names[0] as string;
      await client.patch(Resources.controllerRevisions, ome, target, { metadata: { annotations: { [Annotation.gcEligibleSince]: LONG_AGO } } }, { type: 'merge' });
      await createIsvc(client, apps, 'llama', { runtime: rt, pinned: names[10] });
      let isvcLists = 0;
      const racing = interleave(client, {
        async afterList(type) {
          if (type !== Resources.inferenceServices || (isvcLists += 1) !== 1) return;
          // Act (between the sweep's listing and its deletes): the user rolls back to #0.
          await client.patch(Resources.inferenceServices, apps, 'llama', { spec: { runtime: { revision: target } } }, { type: 'merge' });
        },
      });

      const result = await sweepRevisions(racing, options);

      expect(result.stats).toMatchObject({ deleted: 0, keptOnRecheck: 1 });
      expect((await listRevisionNames(client, ome)).has(target)).toBe(true);
    });

    it('does not mark a revision that a pin named after the sweep listed the references', async () => {
      // #0 is beyond the 10 newest and unreferenced when the sweep first lists the references.
      const { ome, apps, rt, options } = await freshNamespaces();
      const names = await createRevisions(client, ome, 12, { runtime: rt });
      let isvcLists = 0;
      const racing = interleave(client, {
        async afterList(type) {
          if (type !== Resources.inferenceServices || (isvcLists += 1) !== 1) return;
          await createIsvc(client, apps, 'pinned-late', { runtime: rt, pinned: names[0] });
        },
      });

      const result = await sweepRevisions(racing, options);

      expect(result.stats).toMatchObject({ marked: 1, keptOnRecheck: 1 });
      const after = await listRevisionNames(client, ome);
      expect(markOf(after.get(names[0] as string))).toBeUndefined();
      expect(markOf(after.get(names[1] as string))).toBe(formatGcMark(NOW));
    });

    it('fails the delete when the pin unmarked the revision after the recheck', async () => {
      const { ome, rt, options } = await freshNamespaces();
      const names = await createRevisions(client, ome, 11, { runtime: rt });
      const target = names[0] as string;
      await client.patch(Resources.controllerRevisions, ome, target, { metadata: { annotations: { [Annotation.gcEligibleSince]: LONG_AGO } } }, { type: 'merge' });
      const racing = interleave(client, {
        async beforeDelete(name) {
          if (name !== target) return;
          // The pin's own first step: remove the mark, preconditioned on what it read.
          const current = await client.get(Resources.controllerRevisions, ome, target);
          await client.patch(
            Resources.controllerRevisions,
            ome,
            target,
            { metadata: { resourceVersion: current.metadata.resourceVersion, annotations: { [Annotation.gcEligibleSince]: null } } },
            { type: 'merge' },
          );
        },
      });

      const result = await sweepRevisions(racing, options);

      expect(result.stats).toMatchObject({ deleted: 0, skippedConflicts: 1 });
      const after = await listRevisionNames(client, ome);
      expect(after.has(target)).toBe(true);
      expect(markOf(after.get(target))).toBeUndefined();
    });
  });
});
