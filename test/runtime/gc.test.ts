import { describe, expect, it } from 'vitest';
import { computeGcGroupKey, formatGcMark, planRevisionGc, RevisionGcPlanner, type RevisionMeta } from '../../shared/runtime/gc';

const NOW = Date.parse('2026-09-30T12:00:00Z');
const HOUR = 3_600_000;

function rev(name: string, minutesOld: number, options: { runtime?: string; namespace?: string; kind?: string; mark?: string } = {}): RevisionMeta {
  return {
    name,
    creationTimestamp: new Date(NOW - minutesOld * 60_000).toISOString().replace('.000Z', 'Z'),
    labels: {
      'ome.io/runtime-of': options.runtime ?? 'rt',
      'ome.io/runtime-of-kind': options.kind ?? 'ServingRuntime',
      'ome.io/runtime-of-namespace': options.namespace ?? 'ns',
    },
    annotations: options.mark === undefined ? {} : { 'ome.io/gc-eligible-since': options.mark },
  };
}

function actions(revisions: RevisionMeta[], referenced: string[] = [], retention = 2, graceMs = 24 * HOUR) {
  return Object.fromEntries(planRevisionGc({ revisions, referencedNames: new Set(referenced), retention, graceMs, now: NOW }).map((d) => [d.name, d.action]));
}

describe('planRevisionGc', () => {
  it.each([
    ['keeps the N newest', [rev('a', 1), rev('b', 2), rev('c', 3)], [], { a: 'keep', b: 'keep', c: 'mark' }],
    ['keeps referenced revisions beyond N', [rev('a', 1), rev('b', 2), rev('c', 3)], ['c'], { a: 'keep', b: 'keep', c: 'keep' }],
    ['unmarks a revision that is kept again', [rev('a', 1, { mark: '2026-09-30T00:00:00Z' })], [], { a: 'unmark' }],
    ['waits inside the grace period', [rev('a', 1), rev('b', 2), rev('c', 3, { mark: '2026-09-30T00:00:00Z' })], [], { c: 'wait' }],
    ['deletes after the grace period', [rev('a', 1), rev('b', 2), rev('c', 3, { mark: '2026-09-29T12:00:00Z' })], [], { c: 'delete' }],
    ['re-marks an unparsable mark', [rev('a', 1), rev('b', 2), rev('c', 3, { mark: 'yesterday' })], [], { c: 'mark' }],
    ['breaks timestamp ties by name', [rev('b', 5), rev('a', 5), rev('c', 5)], [], { a: 'keep', b: 'keep', c: 'mark' }],
    [
      'groups by kind, namespace and name, unlike upstream',
      [rev('a', 1), rev('b', 2), rev('c', 3, { namespace: 'other' }), rev('d', 4, { kind: 'ClusterServingRuntime', namespace: '' })],
      [],
      { a: 'keep', b: 'keep', c: 'keep', d: 'keep' },
    ],
  ])('%s', (_name, revisions, referenced, expected) => {
    expect(actions(revisions, referenced)).toMatchObject(expected);
  });

  it('marks with now in UTC RFC 3339 without fractions', () => {
    const [decision] = planRevisionGc({ revisions: [rev('a', 1)], referencedNames: new Set(), retention: 0, now: NOW + 123 });
    expect(decision).toEqual({ name: 'a', group: 'ServingRuntime/ns/rt', action: 'mark', markValue: '2026-09-30T12:00:00Z' });
  });

  it('uses upstream defaults: 10 newest, 24 hours', () => {
    const revisions = Array.from({ length: 12 }, (_, i) => rev(`r${i}`, i, { mark: i >= 10 ? formatGcMark(NOW - 24 * HOUR) : undefined }));
    const decisions = planRevisionGc({ revisions, referencedNames: new Set(), now: NOW });
    expect(decisions.filter((d) => d.action === 'delete').map((d) => d.name)).toEqual(['r10', 'r11']);
  });
});

describe('RevisionGcPlanner', () => {
  it('gives the same plan page by page as all at once', () => {
    const revisions = Array.from({ length: 50 }, (_, i) => rev(`r${i}`, i, { runtime: `rt${i % 3}` }));
    const planner = new RevisionGcPlanner();
    for (let i = 0; i < revisions.length; i += 7) planner.addPage(revisions.slice(i, i + 7));
    const options = { referencedNames: new Set(['r49']), retention: 3, now: NOW };
    const sortByName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    expect([...planner.plan(options)].sort(sortByName)).toEqual(planRevisionGc({ revisions, ...options }).sort(sortByName));
  });

  it('keys groups on the labels', () => {
    expect(computeGcGroupKey(rev('a', 1, { kind: 'ClusterServingRuntime', namespace: '' }))).toBe('ClusterServingRuntime//rt');
  });
});
