/**
 * The idempotency record rules behind cases 9, 12 and 17, as pure tables and as one
 * contract run against the memory store and DynamoDB Local: a bounded in-progress expiry
 * whatever the remaining time says, a payload hash that refuses a second request under the
 * same key, and an owner that recognises its own claim and only drops its own.
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyPayloadMismatchError, isRetryable } from '../../shared/domain/errors';
import type { IdempotencyStore } from '../../shared/ports/store';
import { boundInProgressTtl, hashIdempotencyPayload, MAX_IN_PROGRESS_MS, MIN_IN_PROGRESS_MS } from '../../shared/domain/idempotency-rules';
import { MemoryIdempotencyStore } from '../../shared/adapters/memory';
import { ShiftedClock, startDynamoTable, type DynamoTable } from './support';

describe('Function: boundInProgressTtl', () => {
  it.each([
    ['remaining time unknown: the configured TTL', 30_000, undefined, 30_000],
    ['remaining time 0 (the Powertools bug): the configured TTL, not "now"', 30_000, 0, 30_000],
    ['remaining time negative', 30_000, -5, 30_000],
    ['remaining time not a number', 30_000, Number.NaN, 30_000],
    ['remaining time infinite', 30_000, Number.POSITIVE_INFINITY, 30_000],
    ['remaining time known: it', 30_000, 12_000, 12_000],
    ['a few ms left: at least the minimum', 30_000, 10, MIN_IN_PROGRESS_MS],
    ['more than Lambda can run: at most the maximum', 30_000, 10 * 3_600_000, MAX_IN_PROGRESS_MS],
    ['no usable TTL at all: the maximum, never unbounded', 0, 0, MAX_IN_PROGRESS_MS],
    ['a configured TTL over the maximum', 3_600_000, undefined, MAX_IN_PROGRESS_MS],
  ])('%s', (_label, configured, remaining, expected) => {
    expect(boundInProgressTtl(configured, remaining)).toBe(expected);
  });
});

describe('Function: hashIdempotencyPayload', () => {
  it('is the same for the same payload in any key order, and differs for another', () => {
    expect(hashIdempotencyPayload({ scope: 'runtime-sync', token: 'a' })).toBe(hashIdempotencyPayload({ token: 'a', scope: 'runtime-sync' }));
    expect(hashIdempotencyPayload({ scope: 'runtime-sync', token: 'a' })).not.toBe(hashIdempotencyPayload({ scope: 'runtime-sync', token: 'b' }));
    expect(hashIdempotencyPayload({ scope: 'runtime-sync', token: 'a' })).toMatch(/^[0-9a-f]{64}$/);
  });

  // Records outlive a release: a duplicate that reaches the next version must hash as the
  // claim did, so the hash is sha256 of one fixed canonical JSON (keys sorted, no spaces,
  // undefined members left out), written out here by hand.
  it.each([
    ['keys sorted at every depth', { token: 'a', scope: 'runtime-sync', nested: { z: 1, a: [2, 'x'] } }, '{"nested":{"a":[2,"x"],"z":1},"scope":"runtime-sync","token":"a"}'],
    ['undefined members left out, null kept', { a: undefined, b: null, c: [null] }, '{"b":null,"c":[null]}'],
    ['an array stays an array, in its order', [3, 1, 2], '[3,1,2]'],
    ['arrays of objects', [{ b: 1, a: 2 }, {}], '[{"a":2,"b":1},{}]'],
    ['non-ASCII text as UTF-8', { model: 'café-模型' }, '{"model":"café-模型"}'],
    ['a bare undefined as null', undefined, 'null'],
  ])('hashes %s as sha256 of the canonical JSON', (_label, payload, canonicalJson) => {
    expect(hashIdempotencyPayload(payload)).toBe(createHash('sha256').update(canonicalJson, 'utf8').digest('hex'));
  });

  it('tells apart payloads that differ only in how their values split', () => {
    expect(hashIdempotencyPayload({ ids: [1, 23] })).not.toBe(hashIdempotencyPayload({ ids: [12, 3] }));
  });
});

let table: DynamoTable | undefined;

beforeAll(async () => {
  table = await startDynamoTable();
}, 90_000);

afterAll(async () => {
  await table?.stop();
});

const backends: Array<[string, (clock: ShiftedClock) => IdempotencyStore]> = [
  ['memory', (clock) => new MemoryIdempotencyStore(clock)],
  ['DynamoDB Local', (clock) => (table as DynamoTable).stores(clock).idempotency],
];

describe.each(backends)('IdempotencyStore (%s)', (_name, create) => {
  const options = { inProgressTtlMs: 30_000, recordTtlSeconds: 3_600 };
  const A = hashIdempotencyPayload({ token: 'a' });
  const B = hashIdempotencyPayload({ token: 'b' });

  it('refuses the same key for another payload, completed or in progress, with a terminal error (case 17)', async () => {
    const store = create(new ShiftedClock());
    const done = `k-${randomUUID()}`;
    const running = `k-${randomUUID()}`;
    await store.claim(done, { ...options, payloadHash: A });
    await store.complete(done, { ok: true });
    await store.claim(running, { ...options, payloadHash: A });

    const errors = await Promise.all([done, running].map((key) => store.claim(key, { ...options, payloadHash: B }).catch((e: unknown) => e)));

    expect(errors.every((e) => e instanceof IdempotencyPayloadMismatchError)).toBe(true);
    expect(errors.some((e) => isRetryable(e))).toBe(false);
    await expect(store.claim(done, { ...options, payloadHash: A })).resolves.toEqual({ state: 'completed', result: { ok: true } });
    await expect(store.claim(running, { ...options, payloadHash: A })).resolves.toEqual({ state: 'in-progress' });
  });

  it('grants its own claim again to the same owner (a retried put), and no one else (case 12)', async () => {
    const store = create(new ShiftedClock());
    const key = `k-${randomUUID()}`;
    await expect(store.claim(key, { ...options, owner: 'w1#4' })).resolves.toEqual({ state: 'claimed' });
    await expect(store.claim(key, { ...options, owner: 'w1#4' })).resolves.toEqual({ state: 'claimed' });
    await expect(store.claim(key, { ...options, owner: 'w2#5' })).resolves.toEqual({ state: 'in-progress' });
  });

  it('abandons only the owner\'s claim: a claim taken over by another worker stays', async () => {
    const clock = new ShiftedClock();
    const store = create(clock);
    const key = `k-${randomUUID()}`;
    await store.claim(key, { ...options, owner: 'w1#1' });
    clock.advance(31_000);
    await expect(store.claim(key, { ...options, owner: 'w2#2' })).resolves.toEqual({ state: 'claimed' });

    await store.abandon(key, 'w1#1');

    await expect(store.claim(key, { ...options, owner: 'w3#3' })).resolves.toEqual({ state: 'in-progress' });
    await store.abandon(key, 'w2#2');
    await expect(store.claim(key, { ...options, owner: 'w3#3' })).resolves.toEqual({ state: 'claimed' });
  });

  it('bounds the in-progress expiry when the remaining time is 0 (case 9)', async () => {
    const clock = new ShiftedClock();
    const store = create(clock);
    const key = `k-${randomUUID()}`;
    await store.claim(key, { ...options, remainingTimeMs: 0, owner: 'w1#1' });

    clock.advance(1);
    const soon = await store.claim(key, { ...options, owner: 'w2#2' });
    clock.advance(30_000);
    const later = await store.claim(key, { ...options, owner: 'w3#3' });

    expect(soon).toEqual({ state: 'in-progress' });
    expect(later).toEqual({ state: 'claimed' });
  });
});
