/**
 * EventBridge schedule expressions for the local bus: `rate(value unit)` and
 * `cron(minutes hours day-of-month month day-of-week year)` in UTC, with `*`, `?`, lists,
 * ranges, steps and month/day names. `L`, `W` and `#` are not supported and are rejected.
 */
import { InvalidInputError } from '../../shared/domain/errors.js';

export type Schedule = { kind: 'rate'; periodMs: number } | { kind: 'cron'; fields: CronFields };

interface CronFields {
  minutes: Set<number>;
  hours: Set<number>;
  daysOfMonth: Set<number> | 'any';
  months: Set<number>;
  /** 1 = Sunday … 7 = Saturday, as EventBridge counts. */
  daysOfWeek: Set<number> | 'any';
  years: Set<number>;
}

const RATE_UNITS: Record<string, number> = {
  minute: 60_000,
  minutes: 60_000,
  hour: 3_600_000,
  hours: 3_600_000,
  day: 86_400_000,
  days: 86_400_000,
};

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

export function parseSchedule(expression: string): Schedule {
  const rate = /^rate\(\s*(\d+)\s+([a-z]+)\s*\)$/.exec(expression.trim());
  if (rate) {
    const unit = RATE_UNITS[rate[2] as string];
    const value = Number(rate[1]);
    if (!unit || value < 1) throw new InvalidInputError(`unsupported schedule ${expression}: use rate(N minute[s]|hour[s]|day[s])`);
    return { kind: 'rate', periodMs: value * unit };
  }
  const cron = /^cron\((.+)\)$/.exec(expression.trim());
  if (!cron) throw new InvalidInputError(`unsupported schedule ${expression}: expected rate(...) or cron(...)`);
  const parts = (cron[1] as string).trim().split(/\s+/);
  if (parts.length !== 6) throw new InvalidInputError(`cron(${cron[1]}) needs six fields: minutes hours day-of-month month day-of-week year`);
  const [minutes, hours, dom, month, dow, year] = parts as [string, string, string, string, string, string];
  return {
    kind: 'cron',
    fields: {
      minutes: parseField(minutes, 0, 59),
      hours: parseField(hours, 0, 23),
      daysOfMonth: dom === '?' ? 'any' : parseField(dom, 1, 31),
      months: parseField(month, 1, 12, MONTHS),
      daysOfWeek: dow === '?' ? 'any' : parseField(dow, 1, 7, DAYS),
      years: parseField(year, 1970, 2199),
    },
  };
}

function parseField(field: string, min: number, max: number, names: string[] = []): Set<number> {
  if (/[LW#]/.test(field.replace(/[A-Z]{3}/g, (name) => (names.includes(name) ? '' : name)))) {
    throw new InvalidInputError(`cron field ${field}: L, W and # are not supported locally`);
  }
  const values = new Set<number>();
  const toNumber = (token: string): number => {
    const index = names.indexOf(token.toUpperCase());
    const value = index >= 0 ? index + 1 : Number(token);
    if (!Number.isInteger(value) || value < min || value > max) throw new InvalidInputError(`cron field ${field}: ${token} is out of range`);
    return value;
  };
  for (const part of field.split(',')) {
    const [range = '*', stepText] = part.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) throw new InvalidInputError(`cron field ${field}: bad step`);
    let [from, to] = [min, max];
    if (range !== '*' && range !== '?') {
      const [a = '', b] = range.split('-');
      from = toNumber(a);
      to = b === undefined ? (stepText === undefined ? from : max) : toNumber(b);
    }
    for (let value = from; value <= to; value += step) values.add(value);
  }
  return values;
}

/** The first firing strictly after `after` (epoch ms), or undefined within the next ~5 years. */
export function nextFireTime(schedule: Schedule, after: number): number | undefined {
  if (schedule.kind === 'rate') return after + schedule.periodMs;
  const { fields } = schedule;
  const start = new Date(Math.floor(after / 60_000) * 60_000 + 60_000);
  // Walk day by day, then minute by minute within a matching day: cheap even for yearly crons.
  for (let day = 0; day < 366 * 5; day += 1) {
    const date = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + day));
    if (!dayMatches(fields, date)) continue;
    for (const hour of [...fields.hours].sort((a, b) => a - b)) {
      for (const minute of [...fields.minutes].sort((a, b) => a - b)) {
        const at = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate(), hour, minute);
        if (at > after) return at;
      }
    }
  }
  return undefined;
}

function dayMatches(fields: CronFields, date: Date): boolean {
  if (!fields.years.has(date.getUTCFullYear()) || !fields.months.has(date.getUTCMonth() + 1)) return false;
  const domOk = fields.daysOfMonth === 'any' || fields.daysOfMonth.has(date.getUTCDate());
  const dowOk = fields.daysOfWeek === 'any' || fields.daysOfWeek.has(date.getUTCDay() + 1);
  return domOk && dowOk;
}
