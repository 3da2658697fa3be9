/**
 * Maintenance windows of a cluster: when a rollout may start updating it. Each window opens at
 * the times of a cron expression read in an IANA time zone and stays open for a duration of
 * elapsed time. A cluster without windows is always open; with several, it is open while any is.
 */
import { Type, type Static } from 'typebox';
import type { FieldError } from '../validation/field-error.js';
import { parseCron } from './cron.js';

export const MAX_MAINTENANCE_WINDOWS = 20;
/** The longest window: one week. */
export const MAX_WINDOW_MINUTES = 7 * 24 * 60;

export const MaintenanceWindow = Type.Object(
  {
    cron: Type.String({ minLength: 1, maxLength: 128, description: 'when it opens: 5-field cron, e.g. "0 2 * * SAT"' }),
    duration: Type.String({
      minLength: 2,
      maxLength: 16,
      description: 'how long it stays open: e.g. "4h", "1h30m", "2d"',
    }),
    timeZone: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'IANA time zone the cron is read in, e.g. "Europe/Berlin"',
    }),
  },
  { additionalProperties: false },
);
export type MaintenanceWindow = Static<typeof MaintenanceWindow>;

export const MaintenanceWindows = Type.Array(MaintenanceWindow, { maxItems: MAX_MAINTENANCE_WINDOWS });

const DURATION = /^(?:(\d{1,2})d)?(?:(\d{1,3})h)?(?:(\d{1,5})m)?$/;
const IANA_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

/** Minutes of a duration such as "4h", "1h30m" or "2d"; undefined when it is not one. */
export function durationMinutes(text: string): number | undefined {
  const m = DURATION.exec(text);
  if (!m || text === '') return undefined;
  return Number(m[1] ?? 0) * 1440 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
}

/** Whether the runtime knows the zone by this IANA name (offsets like "+01:00" are not names). */
export function isTimeZone(name: string): boolean {
  if (!IANA_NAME.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

function windowErrors(w: MaintenanceWindow, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const cron = parseCron(w.cron);
  if (!cron.ok)
    errors.push({ path: `${path}.cron`, code: 'Invalid', message: `invalid cron "${w.cron}": ${cron.message}` });
  const minutes = durationMinutes(w.duration);
  if (minutes === undefined || minutes < 1 || minutes > MAX_WINDOW_MINUTES) {
    errors.push({
      path: `${path}.duration`,
      code: 'Invalid',
      message: `"${w.duration}" must be a duration such as "4h", "1h30m" or "2d", from 1m to 7d`,
    });
  }
  if (!isTimeZone(w.timeZone)) {
    errors.push({
      path: `${path}.timeZone`,
      code: 'Invalid',
      message: `"${w.timeZone}" is not an IANA time zone (e.g. "Europe/Berlin", "UTC")`,
    });
  }
  return errors;
}

/** Problems with windows already shaped as the schema says; paths start at `path`. */
export function validateMaintenanceWindows(windows: readonly MaintenanceWindow[], path = 'windows'): FieldError[] {
  return windows.flatMap((w, i) => windowErrors(w, `${path}[${i}]`));
}
