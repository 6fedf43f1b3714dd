import { describe, expect, it } from 'vitest';
import type { ObservedChange } from '../../shared/domain/hint-event';
import { computeChangeTime, recordLag } from '../../shared/use-cases/forwarder/forwarder-lag';
import type { KubeObject } from '../../shared/ports/cluster';

const OBSERVED = Date.parse('2026-12-01T12:00:00Z');

function objectWith(metadata: Record<string, unknown>): KubeObject {
  return { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', metadata: { name: 'a', namespace: 'n', uid: 'u', resourceVersion: '7', ...metadata } } as KubeObject;
}

const managed = (...times: unknown[]): Record<string, unknown> => ({ managedFields: times.map((time) => ({ manager: 'kubectl', operation: 'Update', time })) });

describe('Function: computeChangeTime', () => {
  it.each<[string, ObservedChange, Record<string, unknown>, number]>([
    ['a modify dated by its newest managed field', 'MODIFIED', managed('2026-12-01T11:58:00Z', '2026-12-01T11:59:30Z'), OBSERVED - 30_000],
    ['an add dated by its managed field', 'ADDED', managed('2026-12-01T11:55:00Z'), OBSERVED - 300_000],
    ['a change without managed fields, at its observation', 'MODIFIED', {}, OBSERVED],
    ['managed fields without usable times, at its observation', 'MODIFIED', managed(undefined, 'yesterday', 42), OBSERVED],
    ['a relisted object (the list says nothing of when it changed)', 'RELISTED', managed('2026-12-01T10:00:00Z'), OBSERVED],
    ['a delete dated by its deletionTimestamp, not its last update', 'DELETED', { ...managed('2026-12-01T10:00:00Z'), deletionTimestamp: '2026-12-01T11:59:50Z' }, OBSERVED - 10_000],
    ['a delete without deletionTimestamp, at its observation', 'DELETED', managed('2026-12-01T10:00:00Z'), OBSERVED],
    ['a time ahead of our clock, capped at the observation', 'MODIFIED', managed('2026-12-01T12:00:05Z'), OBSERVED],
  ])('dates %s', (_name, change, metadata, expected) => {
    expect(computeChangeTime(change, objectWith(metadata), OBSERVED)).toBe(expected);
  });
});

describe('Function: recordLag', () => {
  it('keeps the largest lag and never a negative one', () => {
    // Prepare
    const counter = { maxLagMs: 0 };

    // Act
    recordLag(counter, 1_000, 4_000);
    recordLag(counter, 3_000, 4_000);
    recordLag(counter, 9_000, 4_000);

    // Assess
    expect(counter.maxLagMs).toBe(3_000);
  });
});
