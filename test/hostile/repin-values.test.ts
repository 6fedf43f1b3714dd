/**
 * `ome.io/rollout-repin` values that can never apply, through the repin-apply hint
 * handler on the embedded cluster: each is rejected with one Warning event and consumed
 * before anything is claimed, so no idempotency record is written and the run is untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdempotencyStore } from '../../shared/ports/store';
import { activeRunOf, createIsvc, eventsOf, getIsvc, manualCanary, openRunOn, requestRepin, startBench, type Bench } from '../rollout-runs/harness';

let bench: Bench;
const claims: string[] = [];

beforeAll(async () => {
  bench = await startBench();
  const inner = bench.stores.idempotency;
  const counting: IdempotencyStore = {
    claim: (key, options) => (claims.push(key), inner.claim(key, options)),
    complete: (key, result) => inner.complete(key, result),
    abandon: (key) => inner.abandon(key),
  };
  bench.stores = { ...bench.stores, idempotency: counting };
});

afterAll(async () => {
  await bench?.stop();
});

const steps = manualCanary([
  { capacity: '25%', traffic: 10 },
  { capacity: '100%', traffic: 100 },
]);

describe('unusable repin values', () => {
  it.each([
    ['oversized', 'rp1:'.padEnd(200_000, 'f'), `repin rejected: annotation value "${'rp1:'.padEnd(64, 'f')}"… (200000 characters) is neither "now" nor a plan digest (rp1: followed by 12 lowercase hex characters)`],
    ['NUL', 'now\u0000', 'repin rejected: annotation value "now\\u0000" is neither "now" nor a plan digest (rp1: followed by 12 lowercase hex characters)'],
    ['uppercase digest', 'rp1:ABCDEF012345', 'repin rejected: annotation value "rp1:ABCDEF012345" is neither "now" nor a plan digest (rp1: followed by 12 lowercase hex characters)'],
  ])('a %s value: one Warning event, consumed, no record, the run untouched', async (label, value, message) => {
    const name = `repin-${label.replace(/\W+/g, '-').toLowerCase()}`;
    const opened = await openRunOn(bench, name, [steps]);
    const claimsBefore = claims.length;
    const metricsBefore = bench.repins.length;

    expect(await requestRepin(bench, name, value)).toEqual({ outcome: 'rejected', message, annotationRemoved: true });

    const after = await getIsvc(bench, name);
    expect(after.metadata.annotations?.['ome.io/rollout-repin']).toBeUndefined();
    expect(activeRunOf(after)).toEqual(activeRunOf(opened));
    expect(after.status?.canary).toEqual(opened.status?.canary);
    expect(claims.length).toBe(claimsBefore);
    expect(bench.repins.slice(metricsBefore)).toEqual([{ namespace: 'prod', outcome: 'rejected' }]);
    expect(await eventsOf(bench, name, 'RolloutRepinRejected')).toEqual([expect.objectContaining({ type: 'Warning', message })]);
    expect(message.length).toBeLessThan(300);
  });

  it('is rejected the same way without an active run, before any run check', async () => {
    await createIsvc(bench, 'repin-no-run', [steps]);
    const claimsBefore = claims.length;
    expect(await requestRepin(bench, 'repin-no-run', 'latest')).toMatchObject({ outcome: 'rejected', annotationRemoved: true });
    expect(claims.length).toBe(claimsBefore);
  });

  it('a usable value is claimed under a hashed key', async () => {
    await openRunOn(bench, 'repin-usable', [steps]);
    const claimsBefore = claims.length;
    await requestRepin(bench, 'repin-usable', 'now');
    expect(claims.slice(claimsBefore)).toEqual([expect.stringMatching(/^rollout-repin#local#[^#]+#sha256:[0-9a-f]{64}$/)]);
  });
});
