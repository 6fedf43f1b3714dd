/**
 * Freeze windows for fleet waves: a cron schedule (UTC) and a duration, which either deny
 * changes while open (`deny`: a weekend, a launch) or allow them only while open (`allow`:
 * business hours), for every cluster or those a label selector chooses. A wave does not
 * start its next cluster while that cluster is frozen; a wave's recorded override lets it
 * go anyway. Pure: the caller passes the time.
 *
 * The cron grammar is the classic five fields (minute hour day-of-month month
 * day-of-week) with `*`, lists, ranges, steps and the names JAN-DEC and SUN-SAT; as in
 * cron, a restricted day-of-month and day-of-week match when either does.
 */
import { InvalidInputError } from '../errors';
import { parseGoDuration } from '../go-duration';
import { parseClusterSelector, selectorMatches, type ClusterLabels } from './cluster-labels';

export type FreezeEffect = 'deny' | 'allow';

export interface FreezeWindow {
  /** A name of at most 63 lowercase letters, digits and "-". */
  name: string;
  effect: FreezeEffect;
  /** Five-field cron, UTC: when each window opens. */
  schedule: string;
  /** How long each window stays open, as the operator wrote it (a Go duration). */
  duration: string;
  durationMs: number;
  /** The clusters it applies to (their registry labels); every cluster when absent. */
  selector?: string;
  createdAt: number;
}

/** A window open longer than a week is a policy, not a window: refused. */
export const MAX_FREEZE_DURATION_MS = 7 * 24 * 3_600_000;
const MINUTE = 60_000;
/** How far ahead the next opening of an allow window is looked for. */
const LOOKAHEAD_MS = MAX_FREEZE_DURATION_MS + 24 * 3_600_000;

const NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

interface Field {
  label: string;
  min: number;
  max: number;
  names?: readonly string[];
  /** The first name's value (JAN is 1, SUN is 0). */
  nameBase?: number;
}

const FIELDS: readonly Field[] = [
  { label: 'minute', min: 0, max: 59 },
  { label: 'hour', min: 0, max: 23 },
  { label: 'day of month', min: 1, max: 31 },
  { label: 'month', min: 1, max: 12, names: MONTHS, nameBase: 1 },
  // 7 is Sunday too, as in cron.
  { label: 'day of week', min: 0, max: 7, names: DAYS, nameBase: 0 },
];

export interface CronSchedule {
  minutes: ReadonlySet<number>;
  hours: ReadonlySet<number>;
  days: ReadonlySet<number>;
  months: ReadonlySet<number>;
  weekdays: ReadonlySet<number>;
  /** Whether day of month / day of week were `*`: cron ORs the two only when both are restricted. */
  anyDay: boolean;
  anyWeekday: boolean;
}

function valueOf(text: string, field: Field, schedule: string): number {
  const upper = text.toUpperCase();
  const named = field.names?.indexOf(upper) ?? -1;
  if (named >= 0) return named + (field.nameBase ?? 0);
  if (!/^\d{1,2}$/.test(text)) throw new InvalidInputError(`schedule "${schedule}": "${text}" is not a ${field.label}`);
  const value = Number(text);
  if (value < field.min || value > field.max) throw new InvalidInputError(`schedule "${schedule}": ${field.label} ${value} is outside ${field.min}-${field.max}`);
  return value;
}

function parseField(text: string, field: Field, schedule: string): Set<number> {
  const values = new Set<number>();
  for (const part of text.split(',')) {
    const [range = '', stepText, extra] = part.split('/');
    if (extra !== undefined || range === '') throw new InvalidInputError(`schedule "${schedule}": "${part}" is not a ${field.label}`);
    const step = stepText === undefined ? 1 : Number(stepText);
    if (stepText !== undefined && (!/^\d{1,2}$/.test(stepText) || step < 1)) throw new InvalidInputError(`schedule "${schedule}": step "${stepText}" must be a positive number`);
    let from: number;
    let to: number;
    if (range === '*') {
      from = field.min;
      to = field.max;
    } else if (range.includes('-')) {
      const [low = '', high = ''] = range.split('-');
      from = valueOf(low, field, schedule);
      to = valueOf(high, field, schedule);
      if (from > to) throw new InvalidInputError(`schedule "${schedule}": range ${range} runs backwards`);
    } else {
      from = valueOf(range, field, schedule);
      to = stepText === undefined ? from : field.max;
    }
    for (let value = from; value <= to; value += step) values.add(field.label === 'day of week' && value === 7 ? 0 : value);
  }
  return values;
}

/** Parses a five-field cron schedule; InvalidInputError says which field is wrong. */
export function parseCronSchedule(text: string): CronSchedule {
  const fields = text.trim().split(/\s+/);
  if (text.length > 200 || fields.length !== 5) throw new InvalidInputError(`schedule "${text}" must have five fields: minute hour day-of-month month day-of-week (UTC), such as "0 18 * * FRI"`);
  const [minutes, hours, days, months, weekdays] = fields.map((field, index) => parseField(field, FIELDS[index] as Field, text)) as [Set<number>, Set<number>, Set<number>, Set<number>, Set<number>];
  return { minutes, hours, days, months, weekdays, anyDay: fields[2] === '*', anyWeekday: fields[4] === '*' };
}

/** Whether the schedule fires at the minute starting at `epochMs` (UTC). */
export function cronFiresAt(schedule: CronSchedule, epochMs: number): boolean {
  const at = new Date(epochMs);
  if (!schedule.minutes.has(at.getUTCMinutes()) || !schedule.hours.has(at.getUTCHours()) || !schedule.months.has(at.getUTCMonth() + 1)) return false;
  const dayMatches = schedule.days.has(at.getUTCDate());
  const weekdayMatches = schedule.weekdays.has(at.getUTCDay());
  if (schedule.anyDay || schedule.anyWeekday) return dayMatches && weekdayMatches;
  return dayMatches || weekdayMatches;
}

/** A window's opening that contains `now`, or undefined. */
export function openOccurrence(window: Pick<FreezeWindow, 'schedule' | 'durationMs'>, now: number, schedule: CronSchedule = parseCronSchedule(window.schedule)): { start: number; end: number } | undefined {
  const latest = Math.floor(now / MINUTE) * MINUTE;
  for (let start = latest; start > now - window.durationMs; start -= MINUTE) {
    if (cronFiresAt(schedule, start)) return { start, end: start + window.durationMs };
  }
  return undefined;
}

/** The next opening after `now` within about eight days, or undefined. */
export function nextOpening(window: Pick<FreezeWindow, 'schedule'>, now: number, schedule: CronSchedule = parseCronSchedule(window.schedule)): number | undefined {
  for (let start = Math.floor(now / MINUTE) * MINUTE + MINUTE; start <= now + LOOKAHEAD_MS; start += MINUTE) {
    if (cronFiresAt(schedule, start)) return start;
  }
  return undefined;
}

const DAY = 24 * 3_600_000;

/** Whether any day of the next eight years (two leap cycles) matches the schedule's days and months. */
function firesOnSomeDay(schedule: CronSchedule, now: number): boolean {
  const today = Math.floor(now / DAY) * DAY;
  // Any hour and minute of the schedule on a day will do: those sets are never empty.
  const firstOfDay = Math.min(...schedule.hours) * 3_600_000 + Math.min(...schedule.minutes) * MINUTE;
  for (let day = today; day < today + 2_923 * DAY; day += DAY) {
    if (cronFiresAt(schedule, day + firstOfDay)) return true;
  }
  return false;
}

/** Checks and builds a window as an operator defines it. */
export function createFreezeWindow(input: { name: string; effect: FreezeEffect; schedule: string; duration: string; selector?: string; now: number }): FreezeWindow {
  if (!NAME.test(input.name)) throw new InvalidInputError(`freeze window name "${input.name}" must be at most 63 lowercase letters, digits and "-", beginning and ending with a letter or digit`);
  const schedule = parseCronSchedule(input.schedule);
  const nanoseconds = parseGoDuration(input.duration);
  const durationMs = Number(nanoseconds / 1_000_000n);
  if (durationMs < MINUTE || durationMs > MAX_FREEZE_DURATION_MS) throw new InvalidInputError(`freeze window duration "${input.duration}" must be between 1m and 168h`);
  if (!firesOnSomeDay(schedule, input.now)) throw new InvalidInputError(`schedule "${input.schedule}" never fires (no such day in the next eight years)`);
  const selector = input.selector === undefined ? undefined : parseClusterSelector(input.selector);
  return {
    name: input.name,
    effect: input.effect,
    schedule: input.schedule.trim().split(/\s+/).join(' '),
    duration: input.duration,
    durationMs,
    ...(selector?.text ? { selector: selector.text } : {}),
    createdAt: input.now,
  };
}

/** Why a cluster may not take a change now. */
export interface Freeze {
  window: string;
  effect: FreezeEffect;
  /** When it thaws, where known (the deny window's end, the next allow window's opening). */
  until?: number;
  message: string;
}

const iso = (epochMs: number): string => new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * Whether a cluster with `labels` is frozen at `now`: an open deny window that applies to
 * it freezes it; so does having allow windows that apply to it, none of them open. The
 * first deny window (by name) wins.
 */
export function freezeOf(windows: readonly FreezeWindow[], labels: ClusterLabels | undefined, now: number): Freeze | undefined {
  const applying = [...windows]
    .filter((window) => window.selector === undefined || selectorMatches(parseClusterSelector(window.selector), labels))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const window of applying) {
    if (window.effect !== 'deny') continue;
    const open = openOccurrence(window, now);
    if (open) return { window: window.name, effect: 'deny', until: open.end, message: `freeze window ${window.name} is open until ${iso(open.end)}` };
  }
  const allows = applying.filter((window) => window.effect === 'allow');
  if (allows.length === 0 || allows.some((window) => openOccurrence(window, now) !== undefined)) return undefined;
  const openings = allows.map((window) => nextOpening(window, now)).filter((at): at is number => at !== undefined);
  const until = openings.length > 0 ? Math.min(...openings) : undefined;
  const names = allows.map((window) => window.name).join(', ');
  return {
    window: allows[0]?.name ?? '',
    effect: 'allow',
    ...(until === undefined ? {} : { until }),
    message: `outside every allow window (${names})${until === undefined ? '' : `; the next opens at ${iso(until)}`}`,
  };
}
