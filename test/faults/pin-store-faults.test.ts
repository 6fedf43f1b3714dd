/**
 * Fault cases of RELIABILITY.md through the real pin use-case, with leases and idempotency
 * records in DynamoDB Local and the embedded API server: a recreated object (3), crashes
 * after and before the status write (7, 8), a remaining time of 0 (9), ambiguous DynamoDB
 * timeouts (12), the same token in two clusters (16), the same key for another payload
 * (17), redelivery after the record expired (18), a dead-letter redrive days later (19),
 * and 401/403 in the middle of the writes (24). Effects are read from the API server's
 * watch stream (`EffectLog`), never from the code's own counters.
 */
import { DeleteCommand, PutCommand, ScanCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlPlaneError, IdempotencyPayloadMismatchError, isRetryable } from '../../shared/domain/errors';
import { Resources } from '../../shared/domain/model/resources';
import type { ClusterClient } from '../../shared/ports/cluster';
import { idempotencyKey } from '../../shared/ports/store';
import { hashIdempotencyPayload, MAX_IN_PROGRESS_MS, MIN_IN_PROGRESS_MS } from '../../shared/domain/idempotency-rules';
import {
  annotateSync,
  applyRuntime,
  deliver,
  engineRenderedFrom,
  getIsvc,
  KilledError,
  Killable,
  LEASE_TTL_MS,
  seedIsvc,
  seedRuntime,
  startDynamoTable,
  startFaultWorld,
  type DynamoTable,
  type FaultWorld,
} from './support';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let table: DynamoTable;
let world: FaultWorld;

beforeAll(async () => {
  table = await startDynamoTable();
  world = await startFaultWorld({ clusterId: 'east', stores: (clock) => table.stores(clock) });
}, 90_000);

afterAll(async () => {
  await world?.stop();
  await table?.stop();
});

/** An InferenceService on its own runtime, pinned at 0.9, then asked to roll forward to 0.85 with `token`. */
async function rollForwardPending(name: string, token = 'roll-1', target: FaultWorld = world): Promise<{ uid: string; rev090: string; runtime: string }> {
  const runtime = `rt-${name}`;
  await applyRuntime(target.admin, seedRuntime('0.9', runtime));
  await target.admin.create(Resources.inferenceServices, seedIsvc(name, runtime));
  await deliver(() => target.pin(name));
  const pinned = await getIsvc(target.admin, name);
  await applyRuntime(target.admin, seedRuntime('0.85', runtime));
  await annotateSync(target.admin, name, token);
  return { uid: pinned.metadata.uid ?? '', rev090: pinned.status?.pinnedRevisionName ?? '', runtime };
}

async function effectsOf(name: string, target: FaultWorld = world): Promise<{ tokens: string[]; templates: string[] }> {
  await target.effects.settle();
  return {
    tokens: target.effects.of('token-applied', name).map((e) => e.value),
    templates: target.effects.of('template-changed', name).map((e) => e.value),
  };
}

async function pinnedRevision(name: string): Promise<string> {
  return (await getIsvc(world.admin, name)).status?.pinnedRevisionName ?? '';
}

/** The idempotency items of one object, straight from the table. */
async function recordsOf(uid: string): Promise<Array<Record<string, unknown>>> {
  const output = await table.client.send(new ScanCommand({ TableName: table.tableName, ConsistentRead: true }));
  return (output.Items ?? []).filter((item) => String(item.pk).startsWith('IDEMPOTENCY#') && String(item.pk).includes(uid));
}

function failed(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('an object deleted and recreated under the same name (case 3)', () => {
  it('drops the old object\'s hints and lets the new one roll forward on a value the old one used', async () => {
    // Prepare: the first object rolled forward on roll-1.
    const name = 'recreated';
    const first = await rollForwardPending(name);
    await deliver(() => world.pin(name, { uid: first.uid }));
    await world.admin.delete(Resources.inferenceServices, 'llama-demo', name);
    await world.admin.create(Resources.inferenceServices, seedIsvc(name, `rt-${name}`));
    const second = await getIsvc(world.admin, name);
    expect(second.metadata.uid).not.toBe(first.uid);

    // Act: late hints of the old object, then the new one's first pin and its own roll-1.
    const late = await Promise.all([1, 2, 3].map(() => deliver(() => world.pin(name, { uid: first.uid }))));
    await deliver(() => world.pin(name, { uid: second.metadata.uid ?? '' }));
    await applyRuntime(world.admin, seedRuntime('0.9', `rt-${name}`));
    await annotateSync(world.admin, name, 'roll-1');
    const rolled = await deliver(() => world.pin(name, { uid: second.metadata.uid ?? '' }));

    // Assess
    expect(late.map((r) => r.outcome)).toEqual(['gone', 'gone', 'gone']);
    expect(rolled.tokenApplied).toBe('roll-1');
    await world.effects.settle();
    const byUid = (uid: string) => world.effects.of('token-applied', name).filter((e) => e.uid === uid).map((e) => e.value);
    expect(byUid(first.uid)).toEqual(['roll-1']);
    expect(byUid(second.metadata.uid ?? '')).toEqual(['roll-1']);
    expect(await pinnedRevision(name)).toBe(first.rev090);
  });
});

describe('a worker killed mid-reconcile', () => {
  it('after the status write, before the claim completed: the retry only finishes the Deployment (case 7)', async () => {
    // Prepare
    const name = 'killed-after-write';
    const { rev090 } = await rollForwardPending(name);
    const killable = new Killable();
    killable.killOnStore = (method) => method === 'complete';

    // Act: the worker dies holding its lease and an in-progress claim.
    const error = await failed(world.pin(name, { client: killable.client(world.admin), stores: killable.stores(world.stores) }));
    const whileHeld = await failed(world.pin(name));
    world.clock.advance(LEASE_TTL_MS + 1_000);
    const retries = [await deliver(() => world.pin(name)), await deliver(() => world.pin(name)), await deliver(() => world.pin(name))];

    // Assess: roll-1 took effect once; the Deployment followed once.
    expect(error).toBeInstanceOf(KilledError);
    expect(isRetryable(whileHeld)).toBe(true);
    expect(retries.map((r) => r.tokenApplied)).toEqual([undefined, undefined, undefined]);
    expect(retries.map((r) => r.statusWritten)).toEqual([false, false, false]);
    const rev085 = await pinnedRevision(name);
    expect(rev085).not.toBe(rev090);
    expect(await effectsOf(name)).toEqual({ tokens: ['roll-1'], templates: [rev090, rev085] });
  });

  it('after the status write, the runtime moved on since: the retries use the value no more, the status token matches (case 7)', async () => {
    // Prepare
    const name = 'killed-then-moved';
    const { runtime, rev090 } = await rollForwardPending(name);
    const killable = new Killable();
    killable.killOnStore = (method) => method === 'complete';
    const error = await failed(world.pin(name, { client: killable.client(world.admin), stores: killable.stores(world.stores) }));
    const rev085 = await pinnedRevision(name);
    // The runtime changes again, so only the token recorded in status tells the retries that
    // roll-1 was used: the revision comparison alone would roll forward once more.
    await applyRuntime(world.admin, seedRuntime('0.9', runtime));

    // Act
    world.clock.advance(LEASE_TTL_MS + 1_000);
    const retries = [await deliver(() => world.pin(name)), await deliver(() => world.pin(name)), await deliver(() => world.pin(name))];

    // Assess: held at the rolled revision and reported drifted; roll-1 took effect once, and
    // the Deployment the dead worker never wrote now serves the revision status names.
    expect(error).toBeInstanceOf(KilledError);
    expect(retries.map((r) => [r.tokenApplied, r.outcome, r.drift, r.pinnedRevisionName])).toEqual([1, 2, 3].map(() => [undefined, 'drifted', 'RevisionMismatch', rev085]));
    expect(await pinnedRevision(name)).toBe(rev085);
    expect(await effectsOf(name)).toEqual({ tokens: ['roll-1'], templates: [rev090, rev085] });
  });

  it('before the status write: nothing happens until the claim expires, then it applies once (case 8)', async () => {
    // Prepare
    const name = 'killed-before-write';
    const { rev090 } = await rollForwardPending(name);
    const killable = new Killable();
    killable.killOnWrite = (verb, type) => verb === 'replaceStatus' && type.plural === 'inferenceservices';

    // Act
    const error = await failed(world.pin(name, { client: killable.client(world.admin), stores: killable.stores(world.stores) }));
    const early = await Promise.all([1, 2, 3].map(() => failed(world.pin(name))));
    const before = await effectsOf(name);
    world.clock.advance(LEASE_TTL_MS + 1_000);
    const results = await Promise.all([1, 2, 3, 4].map(() => deliver(() => world.pin(name, { leaseWaitMs: 5_000 }))));

    // Assess
    expect(error).toBeInstanceOf(KilledError);
    expect(early.every((e) => isRetryable(e))).toBe(true);
    expect(before).toEqual({ tokens: [], templates: [rev090] });
    expect(results.filter((r) => r.tokenApplied === 'roll-1')).toHaveLength(1);
    const rev085 = await pinnedRevision(name);
    expect(await effectsOf(name)).toEqual({ tokens: ['roll-1'], templates: [rev090, rev085] });
  });

  it('with remainingTimeInMillis 0: the claim still expires, neither at once nor never (case 9)', async () => {
    // Prepare
    const name = 'no-time-left';
    const { uid } = await rollForwardPending(name);
    const killable = new Killable();
    killable.killOnWrite = (verb, type) => verb === 'replaceStatus' && type.plural === 'inferenceservices';

    // Act: the worker that claimed roll-1 had 0 ms left by its context, and died.
    const claimedAt = world.clock.now();
    const error = await failed(world.pin(name, { client: killable.client(world.admin), stores: killable.stores(world.stores), remainingTimeMs: () => 0 }));
    const [record] = await recordsOf(uid);
    const duplicate = await world.stores.idempotency.claim(String(record?.pk).slice('IDEMPOTENCY#'.length), {
      inProgressTtlMs: LEASE_TTL_MS,
      recordTtlSeconds: 60,
      payloadHash: hashIdempotencyPayload({ scope: 'runtime-sync', token: 'roll-1' }),
      owner: 'someone-else',
    });
    world.clock.advance(LEASE_TTL_MS + 1_000);
    const later = await deliver(() => world.pin(name));

    // Assess: bounded by the configured TTL, not "now" (instantly stale) and not unbounded.
    expect(error).toBeInstanceOf(KilledError);
    const expiry = Number(record?.inProgressExpiry);
    expect(expiry - claimedAt).toBeGreaterThanOrEqual(Math.max(MIN_IN_PROGRESS_MS, LEASE_TTL_MS - 1_000));
    expect(expiry - claimedAt).toBeLessThanOrEqual(Math.min(MAX_IN_PROGRESS_MS, LEASE_TTL_MS + 1_000));
    expect(duplicate).toEqual({ state: 'in-progress' });
    expect(later.tokenApplied).toBe('roll-1');
    expect((await effectsOf(name)).tokens).toEqual(['roll-1']);
  });
});

/**
 * A document client whose first matching write succeeds server-side but whose reply is
 * lost: `retry` sends it again (as the SDK's retry would); otherwise the caller gets the
 * timeout.
 */
function ambiguousClient(inner: DynamoDBDocumentClient, matches: (command: unknown) => boolean, mode: 'retry' | 'timeout'): DynamoDBDocumentClient {
  let armed = true;
  const send = async (command: unknown): Promise<unknown> => {
    const result = await (inner.send as (c: unknown) => Promise<unknown>)(command);
    if (!armed || !matches(command)) return result;
    armed = false;
    if (mode === 'retry') return (inner.send as (c: unknown) => Promise<unknown>)(command);
    throw Object.assign(new Error('socket timed out after the request was sent'), { name: 'TimeoutError' });
  };
  return { send } as unknown as DynamoDBDocumentClient;
}

const isClaim = (command: unknown): boolean => command instanceof PutCommand && String(command.input.Item?.pk).startsWith('IDEMPOTENCY#');
const isAcquire = (command: unknown): boolean =>
  command instanceof UpdateCommand && String(command.input.Key?.pk).startsWith('LEASE#') && String(command.input.UpdateExpression).includes('ADD fencingToken');

describe('an ambiguous DynamoDB timeout that succeeded server-side (case 12)', () => {
  it.each([
    ['the token claim', isClaim],
    ['the lease acquisition', isAcquire],
  ])('%s, retried by the SDK: the worker recognises its own write and applies once', async (label, matches) => {
    const name = label.includes('claim') ? 'ambiguous-claim' : 'ambiguous-lease';
    const { rev090 } = await rollForwardPending(name);
    const stores = table.stores(world.clock, ambiguousClient(table.client, matches, 'retry'));

    const result = await world.pin(name, { stores });

    expect(result.tokenApplied).toBe('roll-1');
    expect(await effectsOf(name)).toEqual({ tokens: ['roll-1'], templates: [rev090, await pinnedRevision(name)] });
  });

  it('the token claim, surfacing as a timeout: redeliveries wait for the claim to expire, then one applies', async () => {
    // Prepare
    const name = 'ambiguous-timeout';
    await rollForwardPending(name);
    const stores = table.stores(world.clock, ambiguousClient(table.client, isClaim, 'timeout'));

    // Act
    const error = await failed(world.pin(name, { stores }));
    const early = await Promise.all([1, 2, 3].map(() => failed(world.pin(name, { leaseWaitMs: 2_000 }))));
    const before = await effectsOf(name);
    world.clock.advance(LEASE_TTL_MS + 1_000);
    const results = await Promise.all([1, 2, 3].map(() => deliver(() => world.pin(name, { leaseWaitMs: 5_000 }))));

    // Assess: never two workers acting on roll-1.
    expect(isRetryable(error)).toBe(true);
    expect(early.every((e) => isRetryable(e))).toBe(true);
    expect(before.tokens).toEqual([]);
    expect(results.filter((r) => r.tokenApplied === 'roll-1')).toHaveLength(1);
    expect((await effectsOf(name)).tokens).toEqual(['roll-1']);
  });
});

/**
 * A client that shows the uid `real` as `alias` in everything it reads and writes `alias`
 * back as `real`: the cluster as one restored from another's backup with its uids would
 * look to the plane (the embedded API server always assigns a fresh one).
 */
function clientSeeingUidAs(inner: ClusterClient, real: string, alias: string): ClusterClient {
  const swap = <T>(value: T, from: string, to: string): T =>
    value === undefined ? value : (JSON.parse(JSON.stringify(value).replaceAll(from, to)) as T);
  const read = <T>(result: Promise<T>): Promise<T> => result.then((value) => swap(value, real, alias));
  const client: ClusterClient = {
    get: (type, namespace, name) => read(inner.get(type, namespace, name)),
    list: (type, options) => read(inner.list(type, options)),
    create: (type, object, options) => read(inner.create(type, swap(object, alias, real), options)),
    replace: (type, object, options) => read(inner.replace(type, swap(object, alias, real), options)),
    replaceStatus: (type, object, options) => read(inner.replaceStatus(type, swap(object, alias, real), options)),
    patch: (type, namespace, name, patch, options) => read(inner.patch(type, namespace, name, swap(patch, alias, real), options)),
    delete: (type, namespace, name, options) => inner.delete(type, namespace, name, swap(options, alias, real)),
    watch: (type, options, onEvent) => inner.watch(type, options, (event) => onEvent(swap(event, real, alias) as Parameters<typeof onEvent>[0])),
  };
  return client;
}

describe('the same token in two clusters (case 16)', () => {
  it('is processed in both, even for objects of the same uid: the key carries the cluster id', async () => {
    const west = await startFaultWorld({ clusterId: 'west', stores: (clock) => table.stores(clock) });
    try {
      // Prepare: the same object in both clusters, uid included, asked to roll forward on the same value.
      const { uid } = await rollForwardPending('twin', 'same-token');
      const westUid = (await rollForwardPending('twin', 'same-token', west)).uid;
      const westClient = clientSeeingUidAs(west.admin, westUid, uid);
      expect((await getIsvc(westClient, 'twin')).metadata.uid).toBe(uid);

      // Act
      const [east, other] = await Promise.all([deliver(() => world.pin('twin')), deliver(() => west.pin('twin', { client: westClient }))]);

      // Assess
      expect([east.tokenApplied, other.tokenApplied]).toEqual(['same-token', 'same-token']);
      expect((await effectsOf('twin')).tokens).toEqual(['same-token']);
      expect((await effectsOf('twin', west)).tokens).toEqual(['same-token']);
    } finally {
      await west.stop();
    }
  });
});

describe('the same key with a different payload (case 17)', () => {
  it('is a validation error: nothing is written and the delivery is not retried', async () => {
    // Prepare: the key of roll-1 already stands for another request (a colliding key).
    const name = 'collision';
    const { uid, rev090 } = await rollForwardPending(name);
    const key = idempotencyKey('east', uid, 'runtime-sync', 'roll-1');
    await world.stores.idempotency.claim(key, { inProgressTtlMs: LEASE_TTL_MS, recordTtlSeconds: 3600, payloadHash: hashIdempotencyPayload({ other: 'request' }) });
    await world.stores.idempotency.complete(key, { pinnedRevisionName: 'elsewhere' });

    // Act
    const error = await failed(world.pin(name));

    // Assess
    expect(error).toBeInstanceOf(IdempotencyPayloadMismatchError);
    expect(isRetryable(error)).toBe(false);
    expect(await effectsOf(name)).toEqual({ tokens: [], templates: [rev090] });
    expect(await pinnedRevision(name)).toBe(rev090);
  });
});

describe('redelivery after the idempotency record expired (case 18)', () => {
  it('23 h later, with the record gone, does nothing: the status token matches', async () => {
    // Prepare
    const name = 'record-expired';
    const { uid, rev090, runtime } = await rollForwardPending(name);
    await deliver(() => world.pin(name));
    const rev085 = await pinnedRevision(name);
    // The runtime moves on after the roll, so the value would roll forward again but for
    // the token recorded in status.
    await applyRuntime(world.admin, seedRuntime('0.9', runtime));
    for (const record of await recordsOf(uid)) {
      await table.client.send(new DeleteCommand({ TableName: table.tableName, Key: { pk: record.pk, sk: record.sk } }));
    }
    expect(await recordsOf(uid)).toEqual([]);

    // Act
    world.clock.advance(23 * HOUR);
    const results = await Promise.all([1, 2, 3].map(() => deliver(() => world.pin(name, { leaseWaitMs: 5_000 }))));

    // Assess: held at the rolled revision and reported drifted, the value not used again.
    expect(results.map((r) => [r.tokenApplied, r.outcome, r.drift, r.pinnedRevisionName])).toEqual(
      [1, 2, 3].map(() => [undefined, 'drifted', 'RevisionMismatch', rev085]),
    );
    expect(await recordsOf(uid)).toEqual([]);
    expect(await pinnedRevision(name)).toBe(rev085);
    expect(await engineRenderedFrom(world.admin, name)).toBe(rev085);
    expect(await effectsOf(name)).toEqual({ tokens: ['roll-1'], templates: [rev090, rev085] });
  });
});

describe('a dead-letter redrive 3 days later (case 19)', () => {
  it('applies once, however many copies are redriven, even after the runtime moved on again', async () => {
    // Prepare: the first delivery and Lambda's two retries all fail (500): dead-lettered.
    const name = 'redrive';
    const { rev090, runtime } = await rollForwardPending(name);
    world.cluster.faults.inject({ verb: 'update', resource: 'inferenceservices/status', name, count: 3, status: 500 });
    const attempts = [await failed(world.pin(name)), await failed(world.pin(name)), await failed(world.pin(name))];
    const before = await effectsOf(name);

    // Act: three days later (every idempotency record long expired) the queue is redriven;
    // the runtime then changes again, and a stray duplicate and a second redrive arrive.
    world.clock.advance(3 * DAY);
    const redriven = await deliver(() => world.pin(name));
    const rev085 = await pinnedRevision(name);
    await applyRuntime(world.admin, seedRuntime('0.9', runtime));
    const again = await Promise.all([1, 2].map(() => deliver(() => world.pin(name, { leaseWaitMs: 5_000 }))));

    // Assess: roll-1 took effect once; the later copies find it in status and report drift.
    expect(attempts.every((e) => isRetryable(e))).toBe(true);
    expect(before).toEqual({ tokens: [], templates: [rev090] });
    expect(redriven.tokenApplied).toBe('roll-1');
    expect(again.map((r) => [r.tokenApplied, r.outcome, r.drift, r.pinnedRevisionName])).toEqual([1, 2].map(() => [undefined, 'drifted', 'RevisionMismatch', rev085]));
    expect(await effectsOf(name)).toEqual({ tokens: ['roll-1'], templates: [rev090, rev085] });
  });
});

describe('401 or 403 in the middle of the writes (case 24)', () => {
  it('403 on the status write: terminal, nothing written, and the value applies once access is back', async () => {
    // Prepare
    const name = 'forbidden';
    const { rev090 } = await rollForwardPending(name);
    world.cluster.faults.inject({ verb: 'update', resource: 'inferenceservices/status', name, count: 1, status: 403 });

    // Act
    const error = await failed(world.pin(name));
    const during = await effectsOf(name);
    const engineDuring = await engineRenderedFrom(world.admin, name);
    const restored = await deliver(() => world.pin(name));

    // Assess: acknowledged (not retried), no partial write, and the claim was given back.
    expect(error).toBeInstanceOf(ControlPlaneError);
    expect(isRetryable(error)).toBe(false);
    expect(during).toEqual({ tokens: [], templates: [rev090] });
    expect(engineDuring).toBe(rev090);
    expect(restored.tokenApplied).toBe('roll-1');
    expect((await effectsOf(name)).tokens).toEqual(['roll-1']);
  });

  it('401 (expired token) on the status write: retried, nothing written until the redelivery, which applies once', async () => {
    // Prepare
    const name = 'unauthorized';
    const { uid, rev090 } = await rollForwardPending(name);
    const before = await getIsvc(world.admin, name);
    world.cluster.faults.inject({ verb: 'update', resource: 'inferenceservices/status', name, count: 1, status: 401 });

    // Act
    const error = await failed(world.pin(name));
    const during = await effectsOf(name);
    const isvcDuring = await getIsvc(world.admin, name);
    const recordsDuring = await recordsOf(uid);
    const engineDuring = await engineRenderedFrom(world.admin, name);
    const retried = await deliver(() => world.pin(name));

    // Assess: no partial write: the object, its Deployment and the token's record are as
    // before the run, so the redelivery rolls forward as if the first run never happened.
    expect(isRetryable(error)).toBe(true);
    expect(world.cluster.faults.pending()).toBe(0);
    expect(during).toEqual({ tokens: [], templates: [rev090] });
    expect(isvcDuring.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(engineDuring).toBe(rev090);
    expect(recordsDuring).toEqual([]);
    expect(retried.tokenApplied).toBe('roll-1');
    expect(await effectsOf(name)).toEqual({ tokens: ['roll-1'], templates: [rev090, await pinnedRevision(name)] });
  });
});
