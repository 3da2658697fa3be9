/**
 * The maintenance-window calculator: whether a cluster's windows are open at an instant, and
 * when they open next. Pure (time comes in as epoch ms); time zones through Intl.
 *
 * A window opens at each time its cron names on the wall clock of its zone and stays open for
 * its duration of elapsed time (a 3h window opened at 01:00 on a spring-forward night closes at
 * 05:00 local). Around DST changes a wall time that does not exist (skipped by the spring
 * forward) opens the window when the clock reaches it — that many minutes later, as the gap is
 * long — and a wall time that exists twice (the autumn fall back) opens it once, at the first.
 */
import { cronMatchesDay, durationMinutes, parseCron, type Cron, type MaintenanceWindow } from '@flotilla/api';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** How far ahead a next opening is looked for (a 29 February cron opens within 8 years). */
const HORIZON_DAYS = 8 * 366;
/** Zone offsets never change by more than this at once: wall times further back cannot be later instants. */
const MAX_SHIFT = 3 * 60 * MINUTE;

export interface CompiledWindow {
  cron: Cron;
  durationMs: number;
  timeZone: string;
}

export interface WindowState {
  open: boolean;
  /** When a window opens next (epoch ms); absent while open, and when none ever opens. */
  opensAt?: number;
}

/** Windows as stored are valid (validated at the API); one that is not never opens. */
export function compileWindows(windows: readonly MaintenanceWindow[]): CompiledWindow[] {
  const out: CompiledWindow[] = [];
  for (const w of windows) {
    const cron = parseCron(w.cron);
    const minutes = durationMinutes(w.duration);
    if (cron.ok && minutes !== undefined && minutes > 0) {
      out.push({ cron: cron.cron, durationMs: minutes * MINUTE, timeZone: w.timeZone });
    }
  }
  return out;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The wall clock of `timeZone` at `at`, as if that wall time were UTC (epoch ms). */
export function wallClock(at: number, timeZone: string): number {
  const p: Record<string, number> = {};
  for (const { type, value } of formatter(timeZone).formatToParts(at)) p[type] = Number(value);
  return Date.UTC(p.year!, p.month! - 1, p.day, p.hour, p.minute, p.second);
}

const offsetAt = (at: number, timeZone: string): number => wallClock(at, timeZone) - Math.floor(at / 1000) * 1000;

/**
 * The instant a wall time of the zone names: the earlier one when it exists twice, and for a
 * wall time in a spring-forward gap the instant as far past the gap's start as the wall time is.
 */
export function instantOf(wall: number, timeZone: string): number {
  const before = offsetAt(wall - DAY, timeZone);
  const after = offsetAt(wall + DAY, timeZone);
  const valid = [wall - before, wall - after].filter((t) => offsetAt(t, timeZone) === wall - t);
  return valid.length > 0 ? Math.min(...valid) : wall - before;
}

/** The first opening of one window at or after `from`, or undefined within the horizon. */
export function nextOpening(w: CompiledWindow, from: number): number | undefined {
  const fromWall = wallClock(from, w.timeZone);
  const firstDay = Math.floor(fromWall / DAY) * DAY - DAY;
  for (let day = firstDay; day < firstDay + HORIZON_DAYS * DAY; day += DAY) {
    const d = new Date(day);
    if (!cronMatchesDay(w.cron, { month: d.getUTCMonth() + 1, dayOfMonth: d.getUTCDate(), dayOfWeek: d.getUTCDay() })) {
      continue;
    }
    const found = firstInDay(w, day, { from, fromWall });
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The first start on one local day that is at or after `from`. */
function firstInDay(w: CompiledWindow, day: number, at: { from: number; fromWall: number }): number | undefined {
  for (let h = 0; h < 24; h++) {
    if (!w.cron.hour[h]) continue;
    for (let m = 0; m < 60; m++) {
      const wall = day + h * 3_600_000 + m * MINUTE;
      if (!w.cron.minute[m] || wall < at.fromWall - MAX_SHIFT) continue;
      const t = instantOf(wall, w.timeZone);
      if (t >= at.from) return t;
    }
  }
  return undefined;
}

/** Whether one window is open at `at`: it opened less than its duration ago. */
function isOpen(w: CompiledWindow, at: number): boolean {
  const opened = nextOpening(w, at - w.durationMs + 1);
  return opened !== undefined && opened <= at;
}

/** Open while any window is (no windows: always open); otherwise when the first opens next. */
export function windowState(windows: readonly CompiledWindow[], at: number): WindowState {
  if (windows.length === 0 || windows.some((w) => isOpen(w, at))) return { open: true };
  const next = windows.map((w) => nextOpening(w, at)).filter((t): t is number => t !== undefined);
  return next.length > 0 ? { open: false, opensAt: Math.min(...next) } : { open: false };
}
