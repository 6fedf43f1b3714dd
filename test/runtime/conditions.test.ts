import { describe, expect, it } from 'vitest';
import { removeCondition, setCondition, type StatusCondition } from '../../shared/domain/runtime/conditions';

const ready: StatusCondition = { type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' };
const drifted: StatusCondition = { type: 'RuntimeDrifted', status: 'True', reason: 'RevisionMismatch', message: 'm1', lastTransitionTime: '2026-01-01T00:00:00Z' };
const NOW = '2026-09-28T14:17:13Z';

describe('setCondition', () => {
  it.each([
    ['adds a missing condition with now', [ready], { type: 'RuntimeDrifted', status: 'True', reason: 'RevisionMismatch', message: 'm1' }, [ready, { ...drifted, lastTransitionTime: NOW }]],
    ['moves lastTransitionTime when the reason changes (as upstream)', [ready, drifted], { type: 'RuntimeDrifted', status: 'True', reason: 'RevisionMissing', message: 'm2' }, [ready, { ...drifted, reason: 'RevisionMissing', message: 'm2', lastTransitionTime: NOW }]],
    ['moves lastTransitionTime when only the message changes (as upstream)', [ready, drifted], { type: 'RuntimeDrifted', status: 'True', reason: 'RevisionMismatch', message: 'm2' }, [ready, { ...drifted, message: 'm2', lastTransitionTime: NOW }]],
    ['keeps other fields of the condition (severity)', [{ ...drifted, severity: 'Info' }], { type: 'RuntimeDrifted', status: 'True', reason: 'RevisionMismatch', message: 'm2' }, [{ ...drifted, severity: 'Info', message: 'm2', lastTransitionTime: NOW }]],
    ['moves lastTransitionTime when the status changes', [{ ...drifted, status: 'False' }], { type: 'RuntimeDrifted', status: 'True', reason: 'RevisionMismatch', message: 'm1' }, [{ ...drifted, lastTransitionTime: NOW }]],
    ['handles an absent array', undefined, { type: 'RuntimeDrifted', status: 'True', reason: 'RevisionMismatch', message: 'm1' }, [{ ...drifted, lastTransitionTime: NOW }]],
  ])('%s', (_name, conditions, next, expected) => {
    expect(setCondition(conditions, next, NOW)).toEqual(expected);
  });

  it('returns the same array when nothing changes, and never mutates', () => {
    const conditions = Object.freeze([ready, drifted]) as StatusCondition[];
    expect(setCondition(conditions, { type: 'RuntimeDrifted', status: 'True', reason: 'RevisionMismatch', message: 'm1' }, NOW)).toBe(conditions);
    expect(() => setCondition(conditions, { type: 'RuntimeDrifted', status: 'True', reason: 'X', message: 'y' }, NOW)).not.toThrow();
  });
});

describe('removeCondition', () => {
  it.each([
    ['removes the condition', [ready, drifted], [ready]],
    ['leaves others alone', [ready], [ready]],
    ['handles an absent array', undefined, []],
  ])('%s', (_name, conditions, expected) => {
    expect(removeCondition(conditions, 'RuntimeDrifted')).toEqual(expected);
  });

  it('returns the same array when the condition is absent', () => {
    const conditions = [ready];
    expect(removeCondition(conditions, 'RuntimeDrifted')).toBe(conditions);
  });
});
