/**
 * `ome.io/runtime-sync` values as upstream accepts them, through the pin and drift
 * use-cases on the embedded cluster with DynamoDB Local holding the idempotency records:
 * a timestamp, 200 characters and a value with spaces each roll forward once; a value
 * that cannot be recorded (NUL) gets one Warning event and holds nothing back.
 */
import { randomUUID } from 'node:crypto';
import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoClient, createDynamoStores } from '../../shared/adapters/dynamodb';
import { Resources } from '../../shared/domain/model/resources';
import { formatTokenReusedMessage, pinInferenceService } from '../../shared/use-cases/pinning';
import { systemClock } from '../../shared/ports/clock';
import { ensureTable, startDynamoDbLocal, type DynamoDbLocal } from '../../local/dynamodb-local';
import {
  annotateSync,
  applyRuntime,
  editIsvc,
  engineView,
  getIsvc,
  NS,
  pinColumns,
  REV_085,
  REV_090,
  RUNTIME,
  seedIsvc,
  seedRuntime,
  startPinningWorld,
  warningEvents,
  type PinningWorld,
} from '../pinning/support';

const TIMESTAMP = '2026-09-28T14:15:57Z';
const LONG = `ticket-${'x'.repeat(193)}`;
const SPACES = 'roll forward after the mem-frac change';
const NUL = 'bad\u0000token';
const TOKENS = [
  ['timestamp', TIMESTAMP],
  ['long', LONG],
  ['spaces', SPACES],
] as const;
const runtimeChanged = { kind: 'ServingRuntime', namespace: NS, name: RUNTIME, change: 'modified' } as const;

let local: DynamoDbLocal | undefined;
let dynamo: DynamoDBDocumentClient | undefined;
let tableName: string;
let world: PinningWorld;

async function idempotencyKeys(): Promise<string[]> {
  const page = await dynamo?.send(new ScanCommand({ TableName: tableName }));
  return (page?.Items ?? []).map((item) => String(item.pk)).filter((pk) => pk.startsWith('IDEMPOTENCY#'));
}

beforeAll(async () => {
  expect(LONG).toHaveLength(200);
  local = await startDynamoDbLocal();
  dynamo = createDynamoClient({ endpoint: local.endpoint, region: 'us-east-1' });
  tableName = `tokens-${randomUUID()}`;
  await ensureTable(dynamo, tableName);
  const stores = createDynamoStores(dynamo, { tableName, clock: systemClock });
  world = await startPinningWorld({ leases: stores.leases, idempotency: stores.idempotency });
  await applyRuntime(world.admin, seedRuntime('0.9'));
  // Every object is pinned at 0.9 first, then the runtime changes once for all of them.
  for (const name of [...TOKENS.map(([label]) => label), 'nul-drifted']) {
    await world.admin.create(Resources.inferenceServices, seedIsvc(name));
    await world.pin(name);
  }
  await applyRuntime(world.admin, seedRuntime('0.85'));
  await world.driftCheck(runtimeChanged);
});

afterAll(async () => {
  await world?.stop();
  dynamo?.destroy();
  await local?.stop();
});

describe('any annotation value is a token', () => {
  it.each(TOKENS)('a %s value rolls forward once, and the record key holds its hash', async (name, token) => {
    expect(await pinColumns(world.admin, name)).toMatchObject({ pinned: REV_090, reason: 'RevisionMismatch' });
    await annotateSync(world.admin, name, token);
    world.client.reset();
    expect(await world.pin(name)).toMatchObject({ outcome: 'pinned', tokenApplied: token, pinnedRevisionName: REV_085, workload: 'updated' });
    expect(await pinColumns(world.admin, name)).toMatchObject({ pinned: REV_085, drifted: '<none>', token });
    expect((await engineView(world.admin, name))?.renderedFrom).toBe(REV_085);
    expect(await warningEvents(world.admin, name)).toEqual([]);

    // Delivered again: nothing more happens.
    const before = await getIsvc(world.admin, name);
    world.client.reset();
    expect(await world.pin(name)).toMatchObject({ outcome: 'pinned', statusWritten: false, revisionCreated: false });
    expect(world.client.count('replaceStatus', 'inferenceservices')).toBe(0);
    expect((await getIsvc(world.admin, name)).metadata.resourceVersion).toBe(before.metadata.resourceVersion);

    const uid = before.metadata.uid ?? '';
    const keys = (await idempotencyKeys()).filter((key) => key.includes(`#${uid}#`));
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^IDEMPOTENCY#runtime-sync#test#[^#]+#sha256:[0-9a-f]{64}$/);
    expect(keys[0]).not.toContain(token);
  });

  it('a reused value is named as such, and does not roll forward again', async () => {
    await applyRuntime(world.admin, seedRuntime('0.9'));
    await annotateSync(world.admin, 'timestamp', 'another-value');
    await world.driftCheck(runtimeChanged);
    expect(await pinColumns(world.admin, 'timestamp')).toMatchObject({ pinned: REV_090, token: 'another-value' });
    await applyRuntime(world.admin, seedRuntime('0.85'));
    await world.driftCheck(runtimeChanged);
    await annotateSync(world.admin, 'timestamp', TIMESTAMP);
    expect(await world.pin('timestamp')).toMatchObject({ tokenAlreadyUsed: TIMESTAMP, drift: 'RevisionMismatch' });
    expect(await pinColumns(world.admin, 'timestamp')).toMatchObject({ pinned: REV_090, token: 'another-value', reason: 'RevisionMismatch' });
    expect(await warningEvents(world.admin, 'timestamp')).toEqual([{ reason: 'RuntimePinError', message: formatTokenReusedMessage(TIMESTAMP), count: 1 }]);
    expect(formatTokenReusedMessage(TIMESTAMP)).toBe(
      'ome.io/runtime-sync "2026-09-28T14:15:57Z" already rolled this InferenceService forward once and takes effect only once: set a new value, such as a date or a ticket number, to roll forward',
    );
  });
});

describe('a value that cannot be recorded', () => {
  const warning =
    'ome.io/runtime-sync value "bad\\u0000token" is ignored: it contains a NUL character, so it cannot be recorded in status.lastRuntimeSyncToken as it is; set a plain-text value, such as a date or a ticket number, to roll forward';

  it('still reports drift, with one Warning event however often it is evaluated, and leaves no record behind but the warning', async () => {
    const keysBefore = await idempotencyKeys();
    await annotateSync(world.admin, 'nul-drifted', NUL);
    for (let n = 0; n < 3; n += 1) {
      expect(await world.pin('nul-drifted')).toMatchObject({ outcome: 'drifted', drift: 'RevisionMismatch', workload: 'paused' });
    }
    await world.driftCheck(runtimeChanged);
    expect(await pinColumns(world.admin, 'nul-drifted')).toMatchObject({ pinned: REV_090, reason: 'RevisionMismatch', token: '' });
    expect(await warningEvents(world.admin, 'nul-drifted')).toEqual([{ reason: 'RuntimePinError', message: warning, count: 1 }]);
    expect((await idempotencyKeys()).length).toBe(keysBefore.length + 1);

    // A usable value set after it rolls forward as usual.
    await annotateSync(world.admin, 'nul-drifted', 'fixed-value');
    expect(await world.pin('nul-drifted')).toMatchObject({ tokenApplied: 'fixed-value', pinnedRevisionName: REV_085 });
  });

  it('a warning that cannot be recorded holds nothing back, and a later delivery records it', async () => {
    await world.admin.create(Resources.inferenceServices, seedIsvc('nul-events-down', {}, { 'ome.io/runtime-sync': NUL }));
    const eventsDown = { record: () => Promise.reject(new Error('events unavailable')) };
    expect(await pinInferenceService({ ...world.deps, events: eventsDown }, { namespace: NS, name: 'nul-events-down' })).toMatchObject({ outcome: 'pinned', pinnedRevisionName: REV_085 });
    expect(await warningEvents(world.admin, 'nul-events-down')).toEqual([]);
    await world.pin('nul-events-down');
    await world.pin('nul-events-down');
    expect(await warningEvents(world.admin, 'nul-events-down')).toEqual([{ reason: 'RuntimePinError', message: warning, count: 1 }]);
  });

  it('does not hold back the first pin or a workload update', async () => {
    await world.admin.create(Resources.inferenceServices, seedIsvc('nul-first', {}, { 'ome.io/runtime-sync': NUL }));
    expect(await world.pin('nul-first')).toMatchObject({ outcome: 'pinned', pinnedRevisionName: REV_085, workload: 'created' });
    expect(await pinColumns(world.admin, 'nul-first')).toMatchObject({ pinned: REV_085, drifted: '<none>', token: '' });
    expect((await engineView(world.admin, 'nul-first'))?.replicas).toBe(1);

    await editIsvc(world.admin, 'nul-first', (isvc) => {
      isvc.spec.engine = { ...isvc.spec.engine, minReplicas: 2, maxReplicas: 2 };
    });
    expect(await world.pin('nul-first')).toMatchObject({ outcome: 'pinned', workload: 'updated' });
    expect((await engineView(world.admin, 'nul-first'))?.replicas).toBe(2);
    expect(await warningEvents(world.admin, 'nul-first')).toEqual([{ reason: 'RuntimePinError', message: warning, count: 1 }]);
  });
});
