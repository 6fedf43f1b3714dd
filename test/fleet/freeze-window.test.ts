import { describe, expect, it } from 'vitest';
import { createFreezeWindow, cronFiresAt, freezeOf, nextOpening, openOccurrence, parseCronSchedule, type FreezeWindow } from '../../shared/domain/fleet/freeze-window';
import { freezeWave, startCluster, createSyncWave } from '../../shared/domain/fleet/sync-wave';
import { InvalidInputError } from '../../shared/domain/errors';

// 2026-12-07 is a Monday.
const at = (text: string) => Date.parse(text);
const MONDAY_1030 = at('2026-12-07T10:30:00Z');

describe('Function: cronFiresAt', () => {
  it.each<[string, string, boolean]>([
    ['* * * * *', '2026-12-07T10:30:00Z', true],
    ['30 10 * * *', '2026-12-07T10:30:00Z', true],
    ['31 10 * * *', '2026-12-07T10:30:00Z', false],
    ['0 9 * * MON', '2026-12-07T09:00:00Z', true],
    ['0 9 * * MON', '2026-12-08T09:00:00Z', false],
    ['0 9 * * 1-5', '2026-12-11T09:00:00Z', true],
    ['0 9 * * 1-5', '2026-12-12T09:00:00Z', false],
    ['0 0 * * 7', '2026-12-06T00:00:00Z', true],
    ['*/15 * * * *', '2026-12-07T10:45:00Z', true],
    ['*/15 * * * *', '2026-12-07T10:50:00Z', false],
    ['5/20 * * * *', '2026-12-07T10:45:00Z', true],
    ['0 0 1 JAN *', '2027-01-01T00:00:00Z', true],
    ['0 0 1,15 * *', '2026-12-15T00:00:00Z', true],
    // Day of month and day of week both restricted: either matches, as in cron.
    ['0 0 13 * FRI', '2026-12-11T00:00:00Z', true],
    ['0 0 13 * FRI', '2026-12-13T00:00:00Z', true],
    ['0 0 13 * FRI', '2026-12-12T00:00:00Z', false],
  ])('%s at %s: %s', (schedule, time, fires) => {
    expect(cronFiresAt(parseCronSchedule(schedule), at(time))).toBe(fires);
  });

  it.each<[string, string]>([
    ['0 9 * *', 'must have five fields'],
    ['60 * * * *', 'minute 60 is outside 0-59'],
    ['* 24 * * *', 'hour 24 is outside 0-23'],
    ['* * 0 * *', 'day of month 0 is outside 1-31'],
    ['* * * 13 *', 'month 13 is outside 1-12'],
    ['* * * * FUNDAY', '"FUNDAY" is not a day of week'],
    ['*/0 * * * *', 'step "0" must be a positive number'],
    ['5-1 * * * *', 'range 5-1 runs backwards'],
    ['1,,2 * * * *', '"" is not a minute'],
  ])('refuses %s', (schedule, message) => {
    expect(() => parseCronSchedule(schedule)).toThrow(InvalidInputError);
    expect(() => parseCronSchedule(schedule)).toThrow(message);
  });
});

describe('Function: openOccurrence and nextOpening', () => {
  const workday = { schedule: '0 9 * * MON-FRI', durationMs: 8 * 3_600_000 };
  it.each<[string, { start: string; end: string } | undefined, string | undefined]>([
    ['2026-12-07T10:30:00Z', { start: '2026-12-07T09:00:00.000Z', end: '2026-12-07T17:00:00.000Z' }, undefined],
    ['2026-12-07T09:00:00Z', { start: '2026-12-07T09:00:00.000Z', end: '2026-12-07T17:00:00.000Z' }, undefined],
    // The end is open: at 17:00 the window is closed.
    ['2026-12-07T17:00:00Z', undefined, '2026-12-08T09:00:00.000Z'],
    ['2026-12-12T12:00:00Z', undefined, '2026-12-14T09:00:00.000Z'],
  ])('at %s', (time, open, next) => {
    const found = openOccurrence(workday, at(time));
    expect(found && { start: new Date(found.start).toISOString(), end: new Date(found.end).toISOString() }).toEqual(open);
    const opening = open ? undefined : nextOpening(workday, at(time));
    expect(opening === undefined ? undefined : new Date(opening).toISOString()).toEqual(next);
  });

  it('finds no opening more than about eight days ahead', () => {
    expect(nextOpening({ schedule: '0 0 1 JUN *' }, MONDAY_1030)).toBeUndefined();
  });
});

describe('Function: createFreezeWindow', () => {
  it('keeps the schedule with single spaces, and the duration as written and in milliseconds', () => {
    expect(createFreezeWindow({ name: 'weekend', effect: 'deny', schedule: ' 0  18 * * FRI ', duration: '62h', selector: 'env=prod', now: MONDAY_1030 })).toEqual({
      name: 'weekend',
      effect: 'deny',
      schedule: '0 18 * * FRI',
      duration: '62h',
      durationMs: 62 * 3_600_000,
      selector: 'env=prod',
      createdAt: MONDAY_1030,
    });
  });

  it.each<[string, Partial<Parameters<typeof createFreezeWindow>[0]>, string]>([
    ['a bad name', { name: 'Weekend!' }, 'freeze window name "Weekend!" must be'],
    ['a duration over a week', { duration: '169h' }, 'freeze window duration "169h" must be between 1m and 168h'],
    ['a duration under a minute', { duration: '30s' }, 'must be between 1m and 168h'],
    ['a duration that is not one', { duration: 'all weekend' }, 'time: invalid duration "all weekend"'],
    ['a schedule that never fires', { schedule: '0 0 31 FEB *' }, 'schedule "0 0 31 FEB *" never fires'],
    ['a malformed selector', { selector: 'env in (prod' }, 'unbalanced parentheses'],
  ])('refuses %s', (_name, change, message) => {
    expect(() => createFreezeWindow({ name: 'weekend', effect: 'deny', schedule: '0 18 * * FRI', duration: '62h', now: MONDAY_1030, ...change })).toThrow(message);
  });
});

describe('Function: freezeOf', () => {
  const window = (name: string, effect: 'deny' | 'allow', schedule: string, duration: string, selector?: string): FreezeWindow =>
    createFreezeWindow({ name, effect, schedule, duration, now: 0, ...(selector ? { selector } : {}) });
  const launch = window('launch', 'deny', '0 9 * * MON', '8h', 'env=prod');
  const weekend = window('weekend', 'deny', '0 18 * * FRI', '62h');
  const business = window('business', 'allow', '0 8 * * MON-FRI', '10h', 'tier=gpu');

  it.each<[string, FreezeWindow[], Record<string, string> | undefined, string, string | undefined]>([
    ['no windows: never frozen', [], { env: 'prod' }, '2026-12-07T10:30:00Z', undefined],
    ['an open deny window for the cluster', [launch], { env: 'prod' }, '2026-12-07T10:30:00Z', 'deny launch: freeze window launch is open until 2026-12-07T17:00:00Z'],
    ['an open deny window for other clusters', [launch], { env: 'lab' }, '2026-12-07T10:30:00Z', undefined],
    ['a closed deny window', [launch], { env: 'prod' }, '2026-12-07T17:00:00Z', undefined],
    ['a weekend freeze on Saturday, for every cluster', [weekend], undefined, '2026-12-12T12:00:00Z', 'deny weekend: freeze window weekend is open until 2026-12-14T08:00:00Z'],
    ['inside an allow window', [business], { tier: 'gpu' }, '2026-12-07T10:30:00Z', undefined],
    ['outside every allow window', [business], { tier: 'gpu' }, '2026-12-07T19:00:00Z', 'allow business: outside every allow window (business); the next opens at 2026-12-08T08:00:00Z'],
    ['an allow window for other clusters does not hold this one', [business], { tier: 'cpu' }, '2026-12-07T19:00:00Z', undefined],
    ['a deny window wins inside an allow window', [business, launch], { env: 'prod', tier: 'gpu' }, '2026-12-07T10:30:00Z', 'deny launch: freeze window launch is open until 2026-12-07T17:00:00Z'],
  ])('%s', (_name, windows, labels, time, expected) => {
    const freeze = freezeOf(windows, labels, at(time));
    expect(freeze && `${freeze.effect} ${freeze.window}: ${freeze.message}`).toEqual(expected);
  });
});

describe('Function: freezeWave', () => {
  const wave = createSyncWave({ id: 'w1', runtime: { kind: 'ClusterServingRuntime', namespace: '', name: 'vllm' }, clusterIds: ['c1', 'c2'], ackTimeout: '30m', ackTimeoutMs: 1_800_000, now: 0 });
  const freeze = { clusterId: 'c1', window: 'launch', effect: 'deny' as const, until: 100, message: 'freeze window launch is open until …' };

  it('records a freeze once, keeps its start while it lasts, and a started cluster clears it', () => {
    const frozen = freezeWave(wave, freeze, 10);
    expect(frozen?.frozen).toEqual({ ...freeze, since: 10 });
    expect(freezeWave(frozen!, freeze, 20)).toBeUndefined();
    expect(freezeWave(frozen!, { ...freeze, window: 'weekend', until: 200 }, 30)?.frozen).toMatchObject({ window: 'weekend', since: 10 });
    expect(startCluster(frozen!, 0, [], 40).frozen).toBeUndefined();
  });
});
