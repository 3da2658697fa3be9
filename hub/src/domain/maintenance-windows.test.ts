import { describe, expect, it } from 'vitest';
import { compileWindows, instantOf, nextOpening, wallClock, windowState } from './maintenance-windows.js';

const t = (iso: string): number => Date.parse(iso);
const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());
const one = (cron: string, duration: string, timeZone: string) => compileWindows([{ cron, duration, timeZone }]);

describe('instantOf (wall time → instant)', () => {
  it('maps an ordinary wall time by the zone offset', () => {
    expect(iso(instantOf(t('2026-07-01T02:00:00Z'), 'Europe/Berlin'))).toBe('2026-07-01T00:00:00.000Z');
    expect(iso(instantOf(t('2026-01-10T09:30:00Z'), 'Asia/Kolkata'))).toBe('2026-01-10T04:00:00.000Z');
  });

  it('moves a wall time skipped by the spring forward past the gap (02:30 → 03:30 CEST)', () => {
    expect(iso(instantOf(t('2026-03-29T02:30:00Z'), 'Europe/Berlin'))).toBe('2026-03-29T01:30:00.000Z');
    expect(iso(instantOf(t('2026-03-08T02:15:00Z'), 'America/New_York'))).toBe('2026-03-08T07:15:00.000Z');
  });

  it('takes the first of a wall time that exists twice (fall back)', () => {
    // 02:30 on 25 Oct 2026 in Berlin is 00:30Z (CEST) and 01:30Z (CET).
    expect(iso(instantOf(t('2026-10-25T02:30:00Z'), 'Europe/Berlin'))).toBe('2026-10-25T00:30:00.000Z');
    // 01:30 on 1 Nov 2026 in New York is 05:30Z (EDT) and 06:30Z (EST).
    expect(iso(instantOf(t('2026-11-01T01:30:00Z'), 'America/New_York'))).toBe('2026-11-01T05:30:00.000Z');
  });

  it('round-trips through wallClock away from changes', () => {
    const at = t('2026-05-05T12:34:00Z');
    expect(instantOf(wallClock(at, 'Australia/Lord_Howe'), 'Australia/Lord_Howe')).toBe(at);
  });
});

describe('nextOpening', () => {
  const [nightly] = one('30 2 * * *', '1h', 'Europe/Berlin');

  it('opens once on the spring-forward night, when the clock reaches 03:30', () => {
    expect(iso(nextOpening(nightly!, t('2026-03-28T12:00:00Z')))).toBe('2026-03-29T01:30:00.000Z');
    expect(iso(nextOpening(nightly!, t('2026-03-29T01:30:00.001Z')))).toBe('2026-03-30T00:30:00.000Z');
  });

  it('opens once on the fall-back night, at the first 02:30', () => {
    expect(iso(nextOpening(nightly!, t('2026-10-24T12:00:00Z')))).toBe('2026-10-25T00:30:00.000Z');
    expect(iso(nextOpening(nightly!, t('2026-10-25T00:30:00.001Z')))).toBe('2026-10-26T01:30:00.000Z');
  });

  it('reads weekdays and months on the local calendar, not UTC', () => {
    // Saturday 00:30 in Tokyo is Friday 15:30Z.
    const [sat] = one('30 0 * * SAT', '2h', 'Asia/Tokyo');
    expect(iso(nextOpening(sat!, t('2026-01-01T00:00:00Z')))).toBe('2026-01-02T15:30:00.000Z');
    const [leap] = one('0 0 29 2 *', '1h', 'UTC');
    expect(iso(nextOpening(leap!, t('2026-01-01T00:00:00Z')))).toBe('2028-02-29T00:00:00.000Z');
  });

  it('with both day fields restricted, either matches (Vixie cron)', () => {
    const [w] = one('0 12 1 * MON', '1h', 'UTC');
    // 2026-06-01 is a Monday; the next match after it is Monday 8 June, before 1 July.
    expect(iso(nextOpening(w!, t('2026-06-01T13:00:00Z')))).toBe('2026-06-08T12:00:00.000Z');
  });
});

describe('windowState', () => {
  it('is always open without windows', () => {
    expect(windowState([], t('2026-01-01T00:00:00Z'))).toEqual({ open: true });
  });

  it('is open from the opening for the duration, closed before and after, with the next opening', () => {
    const w = one('0 22 * * *', '4h', 'Europe/Berlin');
    expect(windowState(w, t('2026-07-01T19:59:00Z'))).toEqual({ open: false, opensAt: t('2026-07-01T20:00:00Z') });
    expect(windowState(w, t('2026-07-01T20:00:00Z'))).toEqual({ open: true });
    // Across midnight: still open at 01:59 local the next day, closed at 02:00.
    expect(windowState(w, t('2026-07-01T23:59:00Z'))).toEqual({ open: true });
    expect(windowState(w, t('2026-07-02T00:00:00Z'))).toEqual({ open: false, opensAt: t('2026-07-02T20:00:00Z') });
  });

  it('counts the duration in elapsed time across the spring forward', () => {
    // Opens 01:00 CET (00:00Z) and stays open 3 hours: until 05:00 CEST (03:00Z).
    const w = one('0 1 29 3 *', '3h', 'Europe/Berlin');
    expect(windowState(w, t('2026-03-29T02:59:00Z')).open).toBe(true);
    expect(windowState(w, t('2026-03-29T03:00:00Z')).open).toBe(false);
  });

  it('is open while any window is, and names the earliest next opening', () => {
    const w = compileWindows([
      { cron: '0 3 * * *', duration: '1h', timeZone: 'UTC' },
      { cron: '0 1 * * *', duration: '30m', timeZone: 'UTC' },
    ]);
    expect(windowState(w, t('2026-07-01T03:10:00Z'))).toEqual({ open: true });
    expect(windowState(w, t('2026-07-01T04:10:00Z'))).toEqual({ open: false, opensAt: t('2026-07-02T01:00:00Z') });
  });
});
