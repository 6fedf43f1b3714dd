/**
 * Acceptance of the fleet sync wave: three embedded clusters registered as delegate
 * clusters in DynamoDB Local, each with the stand-in for upstream OME's controller pinning
 * there. One runtime changes in all three; a wave rolls it forward cluster by cluster,
 * advanced by the resync function's own wiring (`runFleetWaves`), which reaches each
 * cluster as the resync ServiceAccount over HTTP (so RBAC of infra/k8s applies, and the
 * access log tells its requests from the stand-in's in-process ones). A second wave halts
 * at the cluster whose upstream refuses the token, leaving the cluster after it untouched.
 * Upstream runs in a cluster only while the test lets it, so "not before the previous
 * cluster acknowledged" is checked while acknowledgement is impossible, not raced. Every
 * advance is run twice at once and once more: each InferenceService gets the token in
 * exactly one patch.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openFleetFromEnv } from '../../cli/admin/fleet-access';
import { runApp } from '../../cli/app';
import { FUNCTION_SERVICE_ACCOUNTS, SERVICE_ACCOUNT_NAMESPACE } from '../../infra/identities';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { ensureTable, startDynamoDbLocal, type DynamoDbLocal } from '../../local/dynamodb-local';
import type * as ResyncHandler from '../../functions/resync/handler';
import { createDynamoClient, createDynamoStores } from '../../shared/adapters/dynamodb';
import { createAppContext, runAsFunction, type AppContext } from '../../shared/app/context';
import type { ControlPlaneConfig } from '../../shared/app/config';
import { startSyncWave } from '../../shared/use-cases/fleet/advance-sync-wave';
import type { SyncWave } from '../../shared/domain/fleet/sync-wave';
import { Resources } from '../../shared/domain/model/resources';
import type { ClusterRecord, Stores } from '../../shared/ports/store';
import type { EventPublisher } from '../../shared/ports/event-publisher';
import type { NotificationEvent } from '../../shared/domain/notification';
import { pollUntil } from '../e2e/support';
import { applyRuntime, getIsvc, ISVC, NS, pinColumns, REV_085, REV_090, RUNTIME, seedIsvc, seedRuntime } from '../pinning/support';
import { startUpstreamController, type UpstreamController } from '../support/upstream-controller';

const CONFIG: ControlPlaneConfig = { tableName: 'fleet', eventBusName: 'bus', region: 'us-east-1', omeNamespace: 'ome', revisionRetention: 10, revisionGracePeriodMs: 86_400_000, renderWorkloads: false, leaseTtlMs: 30_000, maxConflictRetries: 5 };
const IDS = ['fleet-a', 'fleet-b', 'fleet-c'] as const;
const RESYNC_USER = `system:serviceaccount:${SERVICE_ACCOUNT_NAMESPACE}:${FUNCTION_SERVICE_ACCOUNTS.resync}`;

interface Member {
  id: string;
  cluster: EmbeddedCluster;
  upstream: UpstreamController | undefined;
}

/** Stops upstream's controller in a cluster: nothing acknowledges there until it resumes. */
async function pauseUpstream(member: Member): Promise<void> {
  await member.upstream?.stop();
  member.upstream = undefined;
}

function resumeUpstream(member: Member, refuse?: string): void {
  member.upstream = startUpstreamController(member.cluster.client, { clusterId: member.id, omeNamespace: 'ome', ...(refuse ? { refuseAcknowledgement: () => refuse } : {}) });
}

let dynamo: DynamoDbLocal | undefined;
let documents: DynamoDBDocumentClient | undefined;
let stores: Stores;
let app: AppContext;
let runFleetWaves: typeof ResyncHandler.runFleetWaves;
const members: Member[] = [];

/** A delegate record reaching the cluster as the resync ServiceAccount. */
function delegateRecord(id: string, cluster: EmbeddedCluster): ClusterRecord {
  return { id, server: cluster.httpsUrl, caData: cluster.caData, credentials: { kind: 'kubeconfig', kubeconfig: cluster.identityKubeconfig, context: 'resync' }, omeNamespace: 'ome', mode: 'delegate' };
}

beforeAll(async () => {
  // Set before the handler's logger is made, at its import.
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  ({ runFleetWaves } = await import('../../functions/resync/handler'));
  dynamo = await startDynamoDbLocal();
  documents = createDynamoClient({ endpoint: dynamo.endpoint, region: 'us-east-1' });
  await ensureTable(documents, CONFIG.tableName);
  stores = createDynamoStores(documents, { tableName: CONFIG.tableName });
  app = createAppContext({ config: CONFIG, stores });
  for (const id of IDS) {
    const cluster = await startEmbeddedCluster({ workloadReadyDelayMs: 5 });
    await cluster.client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await applyRuntime(cluster.client, seedRuntime('0.9'));
    await cluster.client.create(Resources.inferenceServices, seedIsvc());
    const member: Member = { id, cluster, upstream: undefined };
    resumeUpstream(member);
    members.push(member);
    await stores.clusters.putCluster(delegateRecord(id, cluster));
  }
  // A standalone cluster is never part of a wave by default.
  await stores.clusters.putCluster({ id: 'standalone-1', server: 'https://127.0.0.1:1', credentials: { kind: 'kubeconfig', kubeconfig: '' }, omeNamespace: 'ome', mode: 'standalone' });
  for (const { cluster } of members) await pollUntil('first pin', () => pinColumns(cluster.client), (c) => c.pinned === REV_090);
}, 240_000);

afterAll(async () => {
  delete process.env.POWERTOOLS_LOG_LEVEL;
  await Promise.all(
    members.map(async (member) => {
      await pauseUpstream(member);
      await member.cluster.stop();
    }),
  );
  documents?.destroy();
  await dynamo?.stop();
});

/** Runs `kubectl ome …` as the operator would, with the table named by the environment; resolves with stdout. */
async function operator(argv: string[]): Promise<string> {
  const out = { stdout: '', stderr: '' };
  const code = await runApp(argv, {
    io: { stdout: { write: (text: string) => (out.stdout += text) }, stderr: { write: (text: string) => (out.stderr += text) }, stdin: { isTTY: false, readLine: async () => null } },
    connect: () => Promise.reject(new Error('not a cluster command')),
    now: () => new Date(),
    newRequestId: () => '00000000-0000-4000-8000-000000000000',
    sleep: async () => undefined,
    openFleet: () => openFleetFromEnv({ TABLE_NAME: CONFIG.tableName, DYNAMODB_ENDPOINT: dynamo?.endpoint, AWS_REGION: 'us-east-1' }),
  });
  if (code !== 0) throw new Error(`kubectl ome ${argv.join(' ')} exited ${code}: ${out.stderr}`);
  return out.stdout;
}

/** What the resync runs published as notifications, oldest first: `<detail-type> <cluster>`. */
const notified: string[] = [];
const notificationBus: EventPublisher<NotificationEvent> = {
  async publish(events) {
    notified.push(...events.map((event) => `${event.detailType} ${event.detail.clusterId}${event.detail.reason === 'Acknowledged' ? '' : ` ${event.detail.reason}`}`));
    return { published: events.length, skipped: [], failed: [] };
  },
};

/** The resync's wave step, delivered twice at once and then once more, as duplicates would be. */
async function advanceWithDuplicates(): Promise<SyncWave[]> {
  const run = () => runAsFunction('resync', () => runFleetWaves({}, app, notificationBus));
  await Promise.all([run(), run()]);
  await run();
  return stores.fleet.listWaves();
}

async function waveNow(id: string): Promise<SyncWave> {
  const wave = await stores.fleet.getWave(id);
  if (!wave) throw new Error(`wave ${id} is gone`);
  return wave;
}

const statesOf = (wave: SyncWave) => wave.clusters.map((step) => `${step.clusterId}:${step.state}`);

/** The resync identity's patches of the InferenceService in a cluster. */
function wavePatches(member: Member): number {
  return member.cluster.accessLog().filter((r) => r.username === RESYNC_USER && r.verb === 'patch' && r.target === 'inferenceservices.ome.io' && r.name === ISVC && r.allowed).length;
}

async function syncAnnotation(member: Member): Promise<string | undefined> {
  return (await getIsvc(member.cluster.client)).metadata.annotations?.['ome.io/runtime-sync'];
}

/** Changes the runtime in every cluster, waits for upstream's RevisionMismatch, then pauses upstream everywhere. */
async function changeRuntimeEverywhere(memFrac: '0.9' | '0.85'): Promise<void> {
  for (const { cluster } of members) await applyRuntime(cluster.client, seedRuntime(memFrac));
  for (const { cluster } of members) await pollUntil('drift reported', () => pinColumns(cluster.client), (c) => c.reason === 'RevisionMismatch');
  for (const member of members) await pauseUpstream(member);
}

const acknowledged = (member: Member, token: string) =>
  pollUntil(`${member.id} acknowledged`, () => pinColumns(member.cluster.client), (cols) => cols.token === token && cols.drifted === '<none>');

describe('fleet sync wave across three delegate clusters', () => {
  it('acknowledges cluster by cluster: a cluster is touched only once the one before it acknowledged', async () => {
    // Prepare: the runtime changes in all three; upstream reports RevisionMismatch everywhere.
    await changeRuntimeEverywhere('0.85');
    const wave = await startSyncWave({ fleet: stores.fleet, clusters: stores.clusters, clock: app.clock }, { runtime: { kind: 'ServingRuntime', namespace: NS, name: RUNTIME }, ackTimeout: '10m' });
    notified.length = 0;
    expect(wave.clusters.map((step) => step.clusterId)).toEqual([...IDS]);
    const [a, b, c] = members as [Member, Member, Member];

    // Act 1: the first advances start cluster a only; nothing can acknowledge yet.
    await advanceWithDuplicates();
    await advanceWithDuplicates();
    let stored = await waveNow(wave.id);
    expect(statesOf(stored)).toEqual(['fleet-a:Syncing', 'fleet-b:Pending', 'fleet-c:Pending']);
    expect(stored.clusters[0]?.targets.map((t) => t.name)).toEqual([ISVC]);
    expect(await syncAnnotation(a)).toBe(wave.token);
    expect([await syncAnnotation(b), await syncAnnotation(c)]).toEqual([undefined, undefined]);
    expect([wavePatches(a), wavePatches(b), wavePatches(c)]).toEqual([1, 0, 0]);

    // Act 2: upstream acknowledges in a; the next advances move on to b, not c.
    resumeUpstream(a);
    await acknowledged(a, wave.token);
    await advanceWithDuplicates();
    await advanceWithDuplicates();
    stored = await waveNow(wave.id);
    expect(statesOf(stored)).toEqual(['fleet-a:Acknowledged', 'fleet-b:Syncing', 'fleet-c:Pending']);
    expect(await syncAnnotation(b)).toBe(wave.token);
    expect(await syncAnnotation(c)).toBeUndefined();
    expect(wavePatches(c)).toBe(0);

    // Act 3 and 4: b, then c.
    resumeUpstream(b);
    await acknowledged(b, wave.token);
    await advanceWithDuplicates();
    expect(statesOf(await waveNow(wave.id))).toEqual(['fleet-a:Acknowledged', 'fleet-b:Acknowledged', 'fleet-c:Syncing']);
    resumeUpstream(c);
    await acknowledged(c, wave.token);
    await advanceWithDuplicates();

    // Assess: completed, every cluster rolled forward, each token set by exactly one patch.
    stored = await waveNow(wave.id);
    expect(stored.state).toBe('Completed');
    expect(stored.failure).toBeUndefined();
    for (const member of members) {
      expect(await pinColumns(member.cluster.client)).toMatchObject({ pinned: REV_085, drifted: '<none>', token: wave.token });
      expect(wavePatches(member)).toBe(1);
      // The plane never wrote status in a delegate cluster.
      expect(member.cluster.accessLog().filter((r) => r.username === RESYNC_USER && r.target.endsWith('/status'))).toEqual([]);
    }
    // One notification per acknowledged step, though every run was delivered twice at once.
    expect(notified).toEqual(['WaveStepAcknowledged fleet-a', 'WaveStepAcknowledged fleet-b', 'WaveStepAcknowledged fleet-c']);
  }, 120_000);

  it('halts at the cluster whose acknowledgement fails, and leaves the clusters after it untouched', async () => {
    // Prepare: another change, upstream paused in a and c; upstream in b runs, told to refuse
    // the next token (a RuntimePinError, no acknowledgement). It is set before the wave
    // starts: a controller starting afresh would roll forward from its runtime pass.
    await changeRuntimeEverywhere('0.9');
    const [a, b, c] = members as [Member, Member, Member];
    resumeUpstream(b, 'model cache unavailable');
    const patchesBefore = members.map(wavePatches);
    const cTokenBefore = await syncAnnotation(c);
    // The operator starts this one with the plugin's command, against the same table.
    const wave = await operator(['admin', 'fleet', 'sync', `ServingRuntime/${RUNTIME}`, '-n', NS, '--clusters', IDS.join(','), '--ack-timeout', '10m', '--yes', '-o', 'json']).then((out) => JSON.parse(out) as SyncWave);
    notified.length = 0;
    expect(await waveNow(wave.id)).toMatchObject({ token: wave.token, ackTimeoutMs: 600_000 });

    // Act: a acknowledges; b is started and fails.
    await advanceWithDuplicates();
    expect(statesOf(await waveNow(wave.id))).toEqual(['fleet-a:Syncing', 'fleet-b:Pending', 'fleet-c:Pending']);
    resumeUpstream(a);
    await acknowledged(a, wave.token);
    const halted = await pollUntil(
      'b halted',
      async () => {
        await advanceWithDuplicates();
        return waveNow(wave.id);
      },
      (stored) => stored.state !== 'Running',
    );

    // Assess: halted at b, naming the object and upstream's reason; c untouched.
    expect(statesOf(halted)).toEqual(['fleet-a:Acknowledged', 'fleet-b:Failed', 'fleet-c:Pending']);
    expect(halted.state).toBe('Halted');
    expect(halted.failure).toMatchObject({ clusterId: 'fleet-b', namespace: NS, name: ISVC, reason: 'RuntimePinError' });
    expect(halted.failure?.message).toContain('model cache unavailable');
    expect(await syncAnnotation(c)).toBe(cTokenBefore);
    expect(await pinColumns(c.cluster.client)).toMatchObject({ pinned: REV_085, reason: 'RevisionMismatch' });
    expect(members.map(wavePatches)).toEqual([(patchesBefore[0] ?? 0) + 1, (patchesBefore[1] ?? 0) + 1, patchesBefore[2]]);
    expect(notified).toEqual(['WaveStepAcknowledged fleet-a', 'WaveHalted fleet-b RuntimePinError']);

    const status = await operator(['admin', 'fleet', 'status', wave.id]);
    expect(status).toContain('State:       Halted (1/3 clusters acknowledged)');
    expect(status).toContain(`Halted at:   fleet-b ${NS}/${ISVC}\nReason:      RuntimePinError`);
    expect(status).toMatch(/fleet-c\s+Pending\s+-\s+-\s+-\n/);

    // A halted wave stays halted: later runs change nothing.
    b.upstream?.refuseAcknowledgement(undefined);
    const again = await runAsFunction('resync', () => runFleetWaves({ detail: { waveId: wave.id } }, app));
    expect(again.map((outcome) => outcome.outcome)).toEqual(['halted']);
    expect((await waveNow(wave.id)).version).toBe(halted.version);
  }, 120_000);

  it('holds a wave at a cluster a freeze window covers, records why once, and starts it after a recorded override', async () => {
    // Prepare: fleet-a labelled env=prod; a deny window for env=prod open Mondays 09:00-17:00 UTC;
    // the resync's clock on a Monday at 10:30.
    const [a] = members as [Member];
    await stores.clusters.putCluster({ ...delegateRecord('fleet-a', a.cluster), labels: { env: 'prod' } });
    const monday = createAppContext({ config: CONFIG, stores, clock: { now: () => Date.parse('2026-12-07T10:30:00Z') } });
    const advance = () => runAsFunction('resync', () => runFleetWaves({}, monday, notificationBus));
    expect(await operator(['admin', 'fleet', 'freeze', 'launch-freeze', '--schedule', '0 9 * * MON', '--duration', '8h', '-l', 'env=prod'])).toBe(
      'freeze window launch-freeze defined: deny for 8h from each "0 9 * * MON" (UTC), clusters matching env=prod\n',
    );
    expect(await operator(['admin', 'fleet', 'windows'])).toMatch(/^NAME +EFFECT +SCHEDULE \(UTC\) +DURATION +SELECTOR +NOW\nlaunch-freeze +deny +0 9 \* \* MON +8h +env=prod +(open until|closed, opens) /);
    const wave = await operator(['admin', 'fleet', 'sync', `ServingRuntime/${RUNTIME}`, '-n', NS, '-l', 'env=prod', '--yes', '-o', 'json']).then((out) => JSON.parse(out) as SyncWave);
    expect(wave.clusters.map((step) => step.clusterId)).toEqual(['fleet-a']);
    const patchesBefore = wavePatches(a);

    // Act 1: the runs find fleet-a frozen; the first records it, the others write nothing.
    const outcomes = await advance();
    const frozen = await waveNow(wave.id);
    await Promise.all([advance(), advance()]);

    // Assess 1
    expect(outcomes.map((outcome) => outcome.outcome)).toEqual(['frozen']);
    expect(statesOf(frozen)).toEqual(['fleet-a:Pending']);
    expect(frozen.frozen).toEqual({ clusterId: 'fleet-a', window: 'launch-freeze', effect: 'deny', until: Date.parse('2026-12-07T17:00:00Z'), message: 'freeze window launch-freeze is open until 2026-12-07T17:00:00Z', since: Date.parse('2026-12-07T10:30:00Z') });
    expect((await waveNow(wave.id)).version).toBe(frozen.version);
    expect(wavePatches(a)).toBe(patchesBefore);
    expect(await operator(['admin', 'fleet', 'status', wave.id])).toContain(
      'Selector:    env=prod\nFrozen:      fleet-a waits: freeze window launch-freeze is open until 2026-12-07T17:00:00Z (since 2026-12-07T10:30:00Z)\n',
    );

    // Act 2: the operator overrides, with a reason; the next run starts fleet-a.
    expect(await operator(['admin', 'fleet', 'override', wave.id, '--reason', 'hotfix for CVE-2026-1234', '--yes'])).toContain(`sync wave ${wave.id} overrides the freeze windows from its next run`);
    await advance();

    // Assess 2: fleet-a is already in sync (nothing drifts), so its step is acknowledged at once and the wave completes.
    const done = await waveNow(wave.id);
    expect(statesOf(done)).toEqual(['fleet-a:Acknowledged']);
    expect(done.state).toBe('Completed');
    expect(done.frozen).toBeUndefined();
    expect(done.freezeOverride).toMatchObject({ reason: 'hotfix for CVE-2026-1234' });
    expect(await operator(['admin', 'fleet', 'status', wave.id])).toMatch(/\nOverride: +hotfix for CVE-2026-1234 \(/);
    expect(await operator(['admin', 'fleet', 'unfreeze', 'launch-freeze'])).toBe('freeze window launch-freeze deleted\n');
    expect(await operator(['admin', 'fleet', 'windows'])).toBe('No freeze windows found.\n');
  }, 120_000);
  it('moves a wave selected by label in two stages, half of a stage at once, soaks between them, and holds a cluster for a freeze window', async () => {
    // Prepare: every cluster pinned to the same revision, then the runtime changes everywhere
    // (upstream paused). fleet-a is the canary stage, fleet-b and fleet-c the main one; a deny
    // window for the main stage opens Tuesdays 11:00-12:00 UTC. The resync's clock moves by hand.
    const [a, b, c] = members as [Member, Member, Member];
    for (const member of members) if (!member.upstream) resumeUpstream(member);
    for (const member of members) {
      await applyRuntime(member.cluster.client, seedRuntime('0.85'));
      if ((await pinColumns(member.cluster.client)).pinned === REV_085) continue;
      await pollUntil(`${member.id} drifts`, () => pinColumns(member.cluster.client), (cols) => cols.reason === 'RevisionMismatch');
      await member.cluster.client.patch(Resources.inferenceServices, NS, ISVC, { metadata: { annotations: { 'ome.io/runtime-sync': 'realign-before-stages' } } }, { type: 'merge' });
      await acknowledged(member, 'realign-before-stages');
    }
    await changeRuntimeEverywhere('0.9');
    await stores.clusters.putCluster({ ...delegateRecord('fleet-a', a.cluster), labels: { env: 'prod', tier: 'canary' } });
    for (const [id, member] of [['fleet-b', b], ['fleet-c', c]] as const) await stores.clusters.putCluster({ ...delegateRecord(id, member.cluster), labels: { env: 'prod', tier: 'main' } });
    let at = Date.parse('2026-12-08T10:00:00Z');
    const tuesday = createAppContext({ config: CONFIG, stores, clock: { now: () => at } });
    const advance = async () => (await runAsFunction('resync', () => runFleetWaves({}, tuesday, notificationBus))).map((outcome) => outcome.outcome);
    await operator(['admin', 'fleet', 'freeze', 'main-window', '--schedule', '0 11 * * TUE', '--duration', '1h', '-l', 'tier=main']);
    const wave = await operator([
      'admin', 'fleet', 'sync', `ServingRuntime/${RUNTIME}`, '-n', NS, '-l', 'env=prod',
      '--stage', 'tier=canary', '--stage', 'tier=main', '--max-update', '50%', '--soak', '30m', '--ack-timeout', '2h', '--yes', '-o', 'json',
    ]).then((out) => JSON.parse(out) as SyncWave);
    expect(wave.clusters.map((step) => `${step.stage}:${step.clusterId}`)).toEqual(['0:fleet-a', '1:fleet-b', '1:fleet-c']);

    // Act 1 (10:00): the canary stage starts; the main stage waits for it.
    expect(await advance()).toEqual(['waiting']);
    expect(statesOf(await waveNow(wave.id))).toEqual(['fleet-a:Syncing', 'fleet-b:Pending', 'fleet-c:Pending']);
    resumeUpstream(a);
    await acknowledged(a, wave.token);

    // Act 2 (10:05): fleet-a acknowledged; the main stage soaks 30 minutes from then.
    at = Date.parse('2026-12-08T10:05:00Z');
    expect(await advance()).toEqual(['soaking']);
    expect(statesOf(await waveNow(wave.id))).toEqual(['fleet-a:Acknowledged', 'fleet-b:Pending', 'fleet-c:Pending']);
    expect(await syncAnnotation(b)).not.toBe(wave.token);

    // Act 3 (10:36): soaked; half of the main stage (one of two) starts.
    at = Date.parse('2026-12-08T10:36:00Z');
    expect(await advance()).toEqual(['waiting']);
    expect(statesOf(await waveNow(wave.id))).toEqual(['fleet-a:Acknowledged', 'fleet-b:Syncing', 'fleet-c:Pending']);
    expect(await syncAnnotation(c)).not.toBe(wave.token);
    resumeUpstream(b);
    await acknowledged(b, wave.token);

    // Act 4 (11:10): fleet-b acknowledged; fleet-c would start, but the main window is open.
    at = Date.parse('2026-12-08T11:10:00Z');
    expect(await advance()).toEqual(['frozen']);
    const frozen = await waveNow(wave.id);
    expect(statesOf(frozen)).toEqual(['fleet-a:Acknowledged', 'fleet-b:Acknowledged', 'fleet-c:Pending']);
    expect(frozen.frozen).toMatchObject({ clusterId: 'fleet-c', window: 'main-window', until: Date.parse('2026-12-08T12:00:00Z') });
    expect(await operator(['admin', 'fleet', 'status', wave.id])).toContain(
      'Stages:      2, 50% at once, soak 30m between\n  1. tier=canary: 1/1 acknowledged\n  2. tier=main: 1/2 acknowledged\n',
    );

    // Act 5 (12:01): the window closed; fleet-c starts and acknowledges; the wave completes.
    at = Date.parse('2026-12-08T12:01:00Z');
    expect(await advance()).toEqual(['waiting']);
    resumeUpstream(c);
    await acknowledged(c, wave.token);
    at = Date.parse('2026-12-08T12:05:00Z');
    expect(await advance()).toEqual(['completed']);

    // Assess: every cluster rolled forward once, stage by stage.
    const done = await waveNow(wave.id);
    expect(done.state).toBe('Completed');
    expect(done.clusters.map((step) => [step.clusterId, step.startedAt, step.acknowledgedAt])).toEqual([
      ['fleet-a', Date.parse('2026-12-08T10:00:00Z'), Date.parse('2026-12-08T10:05:00Z')],
      ['fleet-b', Date.parse('2026-12-08T10:36:00Z'), Date.parse('2026-12-08T11:10:00Z')],
      ['fleet-c', Date.parse('2026-12-08T12:01:00Z'), Date.parse('2026-12-08T12:05:00Z')],
    ]);
    for (const member of members) expect(await pinColumns(member.cluster.client)).toMatchObject({ pinned: REV_090, drifted: '<none>', token: wave.token });
    expect(await operator(['admin', 'fleet', 'unfreeze', 'main-window'])).toBe('freeze window main-window deleted\n');
  }, 180_000);
});
