/**
 * The stand-in for upstream's controller that the delegate-mode tests run against: it
 * pins, rolls forward on a new sync token, creates revisions as upstream labels them and
 * renders the engine; it replaces status whole (a field another writer put there is gone
 * after its next write), and it can be told to refuse one InferenceService's token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { Resources } from '../../shared/domain/model/resources';
import type { KubeObject } from '../../shared/ports/cluster';
import { pollUntil } from '../e2e/support';
import { annotateSync, applyRuntime, engineView, getIsvc, ISVC, NS, pinColumns, REV_085, REV_090, seedIsvc, seedRuntime, warningEvents } from '../pinning/support';
import { refusedAcknowledgementMessage, startUpstreamController, type UpstreamController } from '../support/upstream-controller';

describe('the stand-in for upstream OME\'s controller', () => {
  let cluster: EmbeddedCluster;
  let controller: UpstreamController;
  const hook: { current: ((object: KubeObject) => Promise<void>) | undefined } = { current: undefined };

  beforeAll(async () => {
    cluster = await startEmbeddedCluster({ workloadReadyDelayMs: 5 });
    await cluster.client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    controller = startUpstreamController(cluster.client, { omeNamespace: 'ome', beforeStatusWrite: (object) => hook.current?.(object) ?? Promise.resolve() });
  });
  afterAll(async () => {
    await controller?.stop();
    await cluster?.stop();
  });

  it('pins a new InferenceService, creates the revision labelled as upstream does and renders the engine', async () => {
    await applyRuntime(cluster.client, seedRuntime('0.9'));
    await cluster.client.create(Resources.inferenceServices, seedIsvc());
    const columns = await pollUntil('pinned', () => pinColumns(cluster.client), (c) => c.pinned === REV_090);
    expect(columns.drifted).toBe('<none>');
    const revision = await cluster.client.get(Resources.controllerRevisions, 'ome', REV_090);
    expect(revision.metadata.labels).toMatchObject({ 'ome.io/runtime-of': 'sglang-llama-3-2-3b', 'ome.io/runtime-of-kind': 'ServingRuntime', 'ome.io/runtime-of-namespace': NS, 'ome.io/revision-hash': '590753e8' });
    expect(revision.metadata.annotations?.['ome.io/created-by']).toBe('ome-controller');
    const engine = await pollUntil('engine', () => engineView(cluster.client), (view) => view !== undefined);
    expect(engine?.renderedFrom).toBe(REV_090);
  });

  it('reports drift, then rolls forward on a new ome.io/runtime-sync and records it as acknowledged', async () => {
    await applyRuntime(cluster.client, seedRuntime('0.85'));
    await pollUntil('drifted', () => pinColumns(cluster.client), (c) => c.reason === 'RevisionMismatch');
    await annotateSync(cluster.client, ISVC, 'wave-1');
    const columns = await pollUntil('rolled forward', () => pinColumns(cluster.client), (c) => c.pinned === REV_085);
    expect(columns).toMatchObject({ drifted: '<none>', token: 'wave-1' });
  });

  it('replaces status whole on a re-read: a field another writer set in between is gone', async () => {
    let foreignWrites = 0;
    hook.current = async (object) => {
      if (object.metadata.name !== ISVC || foreignWrites > 0) return;
      foreignWrites += 1;
      const isvc = await getIsvc(cluster.client);
      await cluster.client.replaceStatus(Resources.inferenceServices, { ...isvc, status: { ...isvc.status, foreignNote: 'written by someone else' } });
    };
    const before = controller.statusWrites().get(`${NS}/${ISVC}`) ?? 0;
    await applyRuntime(cluster.client, seedRuntime('0.9'));
    await pollUntil('drift reported again', () => pinColumns(cluster.client), (c) => c.reason === 'RevisionMismatch');
    hook.current = undefined;
    expect(foreignWrites).toBe(1);
    expect(controller.statusWrites().get(`${NS}/${ISVC}`)).toBeGreaterThan(before);
    expect((await getIsvc(cluster.client)).status).not.toHaveProperty('foreignNote');
  });

  it('refuses to acknowledge a token while told to, with a Warning, and acknowledges it once allowed', async () => {
    controller.refuseAcknowledgement(() => 'told to fail');
    await annotateSync(cluster.client, ISVC, 'wave-2');
    const warned = await pollUntil('warning', () => warningEvents(cluster.client, ISVC), (events) => events.some((e) => e.message === refusedAcknowledgementMessage('wave-2', 'told to fail')));
    expect(warned.length).toBeGreaterThan(0);
    expect((await pinColumns(cluster.client)).token).toBe('wave-1');
    controller.refuseAcknowledgement(undefined);
    const columns = await pollUntil('acknowledged', () => pinColumns(cluster.client), (c) => c.token === 'wave-2');
    expect(columns).toMatchObject({ pinned: REV_090, drifted: '<none>' });
  });
});
