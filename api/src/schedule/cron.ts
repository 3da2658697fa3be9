/**
 * Five-field cron expressions (minute hour day-of-month month day-of-week) as Vixie cron reads
 * them: `*`, numbers, ranges `a-b`, steps `*\/n`, `a-b/n` and `a/n`, comma lists, month and
 * weekday names (JAN–DEC, SUN–SAT; 0 and 7 are Sunday). When both day fields are restricted a
 * day matches if either does; when either starts with `*`, it must match both. Parsing is pure; errors say which field is wrong and why.
 */

export interface Cron {
  /** allowed[v] for minute 0–59, hour 0–23, day of month 1–31, month 1–12, weekday 0–6. */
  minute: boolean[];
  hour: boolean[];
  dayOfMonth: boolean[];
  month: boolean[];
  dayOfWeek: boolean[];
  /** The day fields as written were `*` (unrestricted). */
  anyDayOfMonth: boolean;
  anyDayOfWeek: boolean;
}

export type CronParse = { ok: true; cron: Cron } | { ok: false; message: string };

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  // 7 is Sunday too; folded into 0 after parsing.
  { name: 'day of week', min: 0, max: 7, names: DAYS },
];

class CronError extends Error {}

function value(text: string, spec: FieldSpec): number {
  const named = spec.names?.indexOf(text.toUpperCase()) ?? -1;
  if (named >= 0) return named + (spec.name === 'month' ? 1 : 0);
  if (!/^\d{1,2}$/.test(text)) throw new CronError(`${spec.name}: "${text}" is not a number`);
  const n = Number(text);
  if (n < spec.min || n > spec.max) throw new CronError(`${spec.name}: ${n} is outside ${spec.min}-${spec.max}`);
  return n;
}

/** One comma-separated part: `*`, `n`, `a-b`, each optionally `/step`. */
function part(text: string, spec: FieldSpec, allowed: boolean[]): void {
  const [range, stepText, extra] = text.split('/');
  if (extra !== undefined || range === undefined || range === '')
    throw new CronError(`${spec.name}: "${text}" is malformed`);
  let step = 1;
  if (stepText !== undefined) {
    if (!/^\d{1,2}$/.test(stepText) || Number(stepText) === 0)
      throw new CronError(`${spec.name}: step "${stepText}" must be a number from 1`);
    step = Number(stepText);
  }
  let from = spec.min;
  let to = spec.max;
  if (range !== '*') {
    const [a, b, more] = range.split('-');
    if (more !== undefined || a === undefined || a === '') throw new CronError(`${spec.name}: "${range}" is malformed`);
    from = value(a, spec);
    // `a/n` runs from a to the end of the field, as Vixie cron reads it.
    to = b !== undefined ? value(b, spec) : stepText !== undefined ? spec.max : from;
    if (to < from) throw new CronError(`${spec.name}: range "${range}" runs backwards`);
  }
  for (let v = from; v <= to; v += step) allowed[v] = true;
}

function field(text: string, spec: FieldSpec): boolean[] {
  const allowed = new Array<boolean>(spec.max + 1).fill(false);
  for (const p of text.split(',')) part(p, spec, allowed);
  return allowed;
}

export function parseCron(expression: string): CronParse {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) {
    return { ok: false, message: `needs 5 fields (minute hour day-of-month month day-of-week), has ${parts.length}` };
  }
  try {
    const [minute, hour, dayOfMonth, month, dayOfWeek] = parts.map((p, i) => field(p, FIELDS[i]!));
    if (dayOfWeek![7]) dayOfWeek![0] = true;
    return {
      ok: true,
      cron: {
        minute: minute!,
        hour: hour!,
        dayOfMonth: dayOfMonth!,
        month: month!,
        dayOfWeek: dayOfWeek!.slice(0, 7),
        anyDayOfMonth: parts[2]!.startsWith('*'),
        anyDayOfWeek: parts[4]!.startsWith('*'),
      },
    };
  } catch (err) {
    if (err instanceof CronError) return { ok: false, message: err.message };
    throw err;
  }
}

/** Whether the cron runs on this calendar day (month 1–12, weekday 0 = Sunday). */
export function cronMatchesDay(cron: Cron, day: { month: number; dayOfMonth: number; dayOfWeek: number }): boolean {
  if (!cron.month[day.month]) return false;
  const dom = cron.dayOfMonth[day.dayOfMonth] === true;
  const dow = cron.dayOfWeek[day.dayOfWeek] === true;
  return cron.anyDayOfMonth || cron.anyDayOfWeek ? dom && dow : dom || dow;
}
