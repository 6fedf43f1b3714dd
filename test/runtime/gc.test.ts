import { describe, expect, it } from 'vitest';
import { computeGcGroupKey, decideRevision, formatGcMark, NewestRevisions, planRevisionGc, type RevisionMeta } from '../../shared/domain/runtime/gc';

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

/**
 * Fixtures are listed out of age order on purpose: the plan must sort newest first
 * itself, not rely on the order the API server lists revisions in.
 */
describe('planRevisionGc', () => {
  it.each([
    ['keeps the N newest', [rev('c', 3), rev('a', 1), rev('b', 2)], [], { a: 'keep', b: 'keep', c: 'mark' }],
    ['keeps the N newest, listed oldest first', [rev('e', 5), rev('d', 4), rev('c', 3), rev('b', 2), rev('a', 1)], [], { a: 'keep', b: 'keep', c: 'mark', d: 'mark', e: 'mark' }],
    ['keeps referenced revisions beyond N', [rev('b', 2), rev('c', 3), rev('a', 1)], ['c'], { a: 'keep', b: 'keep', c: 'keep' }],
    ['unmarks a revision that is kept again', [rev('a', 1, { mark: '2026-09-30T00:00:00Z' })], [], { a: 'unmark' }],
    ['unmarks a referenced revision beyond N', [rev('c', 3, { mark: '2026-09-29T00:00:00Z' }), rev('a', 1), rev('b', 2)], ['c'], { a: 'keep', b: 'keep', c: 'unmark' }],
    ['waits inside the grace period', [rev('c', 3, { mark: '2026-09-30T00:00:00Z' }), rev('b', 2), rev('a', 1)], [], { a: 'keep', b: 'keep', c: 'wait' }],
    ['waits one millisecond before the grace period ends', [rev('c', 3, { mark: '2026-09-29T12:00:00.001Z' }), rev('a', 1), rev('b', 2)], [], { a: 'keep', b: 'keep', c: 'wait' }],
    ['deletes when the grace period has just ended', [rev('b', 2), rev('c', 3, { mark: '2026-09-29T12:00:00Z' }), rev('a', 1)], [], { a: 'keep', b: 'keep', c: 'delete' }],
    ['deletes after the grace period, with an offset mark', [rev('c', 3, { mark: '2026-09-29T13:00:00+02:00' }), rev('b', 2), rev('a', 1)], [], { a: 'keep', b: 'keep', c: 'delete' }],
    ['re-marks an unparsable mark', [rev('a', 1), rev('c', 3, { mark: 'yesterday' }), rev('b', 2)], [], { a: 'keep', b: 'keep', c: 'mark' }],
    ['re-marks a mark with a date inside a longer text', [rev('c', 3, { mark: 'x2026-09-29T00:00:00Z' }), rev('a', 1), rev('b', 2)], [], { a: 'keep', b: 'keep', c: 'mark' }],
    ['re-marks a mark with trailing text', [rev('c', 3, { mark: '2026-09-29T00:00:00Zx' }), rev('a', 1), rev('b', 2)], [], { a: 'keep', b: 'keep', c: 'mark' }],
    ['re-marks a well-formed but impossible date', [rev('c', 3, { mark: '2026-13-45T00:00:00Z' }), rev('a', 1), rev('b', 2)], [], { a: 'keep', b: 'keep', c: 'mark' }],
    ['breaks timestamp ties by name', [rev('b', 5), rev('c', 5), rev('a', 5)], [], { a: 'keep', b: 'keep', c: 'mark' }],
    ['breaks timestamp ties by name, listed in reverse', [rev('c', 5), rev('b', 5), rev('a', 5)], [], { a: 'keep', b: 'keep', c: 'mark' }],
    ['treats a revision without a timestamp as the oldest', [{ ...rev('a', 1), creationTimestamp: undefined }, rev('c', 3), rev('b', 2)], [], { a: 'mark', b: 'keep', c: 'keep' }],
    ['treats an unparsable timestamp as the oldest', [{ ...rev('a', 1), creationTimestamp: 'soon' }, rev('c', 3), rev('b', 2)], [], { a: 'mark', b: 'keep', c: 'keep' }],
    [
      'groups by kind, namespace and name, unlike upstream',
      [rev('c', 3, { namespace: 'other' }), rev('a', 1), rev('d', 4, { kind: 'ClusterServingRuntime', namespace: '' }), rev('e', 5, { runtime: 'other' }), rev('b', 2)],
      [],
      { a: 'keep', b: 'keep', c: 'keep', d: 'keep', e: 'keep' },
    ],
  ])('%s', (_name, revisions, referenced, expected) => {
    expect(actions(revisions, referenced)).toEqual(expected);
  });

  it('lists each group newest first, whatever order the revisions came in', () => {
    const revisions = [rev('r3', 3), rev('r1', 1), rev('r4', 4), rev('r2', 2), rev('x2', 2, { runtime: 'x' }), rev('x1', 1, { runtime: 'x' })];
    const decisions = planRevisionGc({ revisions, referencedNames: new Set(), retention: 1, graceMs: HOUR, now: NOW });
    expect(decisions.map((d) => [d.group, d.name, d.action])).toEqual([
      ['ServingRuntime/ns/rt', 'r1', 'keep'],
      ['ServingRuntime/ns/rt', 'r2', 'mark'],
      ['ServingRuntime/ns/rt', 'r3', 'mark'],
      ['ServingRuntime/ns/rt', 'r4', 'mark'],
      ['ServingRuntime/ns/x', 'x1', 'keep'],
      ['ServingRuntime/ns/x', 'x2', 'mark'],
    ]);
  });

  it('keeps nothing beyond the referenced ones with a retention of 0', () => {
    expect(actions([rev('b', 2), rev('a', 1)], ['b'], 0)).toEqual({ a: 'mark', b: 'keep' });
  });

  it('holds a mark for exactly the grace period given', () => {
    const marked = (mark: string) => actions([rev('a', 1, { mark })], [], 0, HOUR).a;
    expect(marked(formatGcMark(NOW - HOUR + 1000))).toBe('wait');
    expect(marked(formatGcMark(NOW - HOUR))).toBe('delete');
  });

  it('marks with now in UTC RFC 3339 without fractions', () => {
    const [decision] = planRevisionGc({ revisions: [rev('a', 1)], referencedNames: new Set(), retention: 0, now: NOW + 123 });
    expect(decision).toEqual({ name: 'a', group: 'ServingRuntime/ns/rt', action: 'mark', markValue: '2026-09-30T12:00:00Z' });
  });

  it('uses upstream defaults: 10 newest, 24 hours', () => {
    const revisions = Array.from({ length: 12 }, (_, i) => rev(`r${i}`, i, { mark: i >= 10 ? formatGcMark(NOW - 24 * HOUR) : undefined }));
    const decisions = planRevisionGc({ revisions, referencedNames: new Set(), now: NOW });
    expect(decisions.filter((d) => d.action === 'delete').map((d) => d.name)).toEqual(['r10', 'r11']);
    expect(decisions.filter((d) => d.action === 'keep')).toHaveLength(10);
  });

  it('waits just inside the default 24 hours', () => {
    const revisions = Array.from({ length: 11 }, (_, i) => rev(`r${i}`, i, { mark: i === 10 ? formatGcMark(NOW - 24 * HOUR + 1000) : undefined }));
    const decisions = planRevisionGc({ revisions: [...revisions].reverse(), referencedNames: new Set(), now: NOW });
    expect(decisions.find((d) => d.name === 'r10')?.action).toBe('wait');
  });
});

describe('grouping and marks', () => {
  it('keys groups on the labels', () => {
    expect(computeGcGroupKey(rev('a', 1, { kind: 'ClusterServingRuntime', namespace: '' }))).toBe('ClusterServingRuntime//rt');
    expect(computeGcGroupKey({ name: 'bare' })).toBe('//');
  });

  it('formats marks to the second, in UTC', () => {
    expect(formatGcMark(Date.parse('2026-09-30T12:34:56.999Z'))).toBe('2026-09-30T12:34:56Z');
    expect(formatGcMark(Date.parse('2026-09-30T12:34:56.000Z'))).toBe('2026-09-30T12:34:56Z');
  });
});

describe('NewestRevisions and decideRevision', () => {
  // Three runtimes, same-second ties (two revisions per minute), marks old, fresh and garbled.
  const revisions = Array.from({ length: 60 }, (_, i) =>
    rev(`r${String(i).padStart(2, '0')}`, Math.floor(i / 2), {
      runtime: `rt${i % 3}`,
      ...(i % 5 === 0 ? { mark: formatGcMark(NOW - 2 * 24 * HOUR) } : i % 7 === 0 ? { mark: formatGcMark(NOW - HOUR) } : i % 11 === 0 ? { mark: 'garbled' } : {}),
    }),
  );
  const sortByName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);

  /** Offers every revision as a sweep does and decides each as it falls out, the rest at the end. */
  function stream(input: RevisionMeta[], options: Parameters<typeof decideRevision>[2]) {
    const newest = new NewestRevisions<RevisionMeta>(options.retention);
    const decisions = [];
    let peak = 0;
    for (const revision of input) {
      const out = newest.offer(revision, revision);
      peak = Math.max(peak, newest.size);
      if (out) decisions.push(decideRevision(out, false, options));
    }
    for (const revision of newest.held()) decisions.push(decideRevision(revision, true, options));
    return { decisions, peak };
  }

  it.each([0, 1, 3, 10, 25])('decides one revision at a time as the whole plan does (retention %i)', (retention) => {
    const options = { referencedNames: new Set(['r59', 'r58', 'r01']), retention, graceMs: 24 * HOUR, now: NOW };
    // In list order and reversed: a listing's order is the API server's, not the age.
    for (const order of [revisions, [...revisions].reverse()]) {
      const { decisions, peak } = stream(order, options);
      expect(decisions.sort(sortByName)).toEqual(planRevisionGc({ revisions, ...options }).sort(sortByName));
      expect(peak).toBeLessThanOrEqual(retention * 3);
    }
  });

  it('hands back at once a revision older than its runtime\'s N newest, and the one a newer revision pushes out', () => {
    const newest = new NewestRevisions<string>(2);
    expect(newest.offer(rev('b', 2), 'b')).toBeUndefined();
    expect(newest.offer(rev('c', 1), 'c')).toBeUndefined();
    expect(newest.offer(rev('a', 3), 'a')).toBe('a');
    expect(newest.offer(rev('d', 0), 'd')).toBe('b');
    expect(newest.offer(rev('e', 0, { runtime: 'other' }), 'e')).toBeUndefined();
    expect([...newest.held()].sort()).toEqual(['c', 'd', 'e']);
    expect(newest.size).toBe(3);
  });
});
