import { describe, expect, it } from 'vitest';
import { parseCron } from './cron.js';
import { durationMinutes, isTimeZone, validateMaintenanceWindows } from './window.js';

describe('parseCron', () => {
  it('reads lists, ranges, steps and names', () => {
    const r = parseCron('*/15 2-4 1,15 JAN-MAR mon-fri');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.cron.minute.flatMap((on, i) => (on ? [i] : []))).toEqual([0, 15, 30, 45]);
    expect(r.cron.hour.flatMap((on, i) => (on ? [i] : []))).toEqual([2, 3, 4]);
    expect(r.cron.dayOfWeek.flatMap((on, i) => (on ? [i] : []))).toEqual([1, 2, 3, 4, 5]);
    expect(r.cron.month.flatMap((on, i) => (on ? [i] : []))).toEqual([1, 2, 3]);
    expect(r.cron.anyDayOfMonth).toBe(false);
  });

  it('treats 7 as Sunday and a/n as a to the end', () => {
    const r = parseCron('5/20 0 * * 7');
    expect(r.ok && r.cron.dayOfWeek[0]).toBe(true);
    expect(r.ok && r.cron.minute.flatMap((on, i) => (on ? [i] : []))).toEqual([5, 25, 45]);
  });

  it.each([
    ['0 2 * *', 'needs 5 fields'],
    ['60 2 * * *', 'minute: 60 is outside 0-59'],
    ['0 2 * * FUNDAY', 'day of week: "FUNDAY" is not a number'],
    ['0 5-2 * * *', 'hour: range "5-2" runs backwards'],
    ['*/0 * * * *', 'minute: step "0" must be a number from 1'],
    ['0 2 0 * *', 'day of month: 0 is outside 1-31'],
  ])('refuses %j: %s', (expr, message) => {
    const r = parseCron(expr);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toContain(message);
  });
});

describe('maintenance window validation', () => {
  it('reads durations in days, hours and minutes', () => {
    expect(durationMinutes('4h')).toBe(240);
    expect(durationMinutes('1h30m')).toBe(90);
    expect(durationMinutes('2d')).toBe(2880);
    expect(durationMinutes('4 hours')).toBeUndefined();
    expect(durationMinutes('')).toBeUndefined();
  });

  it('knows IANA zones and refuses offsets and unknown names', () => {
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('+01:00')).toBe(false);
    expect(isTimeZone('Mars/Olympus_Mons')).toBe(false);
  });

  it('names the field of every problem', () => {
    const errors = validateMaintenanceWindows([
      { cron: '0 2 * * SAT', duration: '4h', timeZone: 'Europe/Berlin' },
      { cron: '0 25 * * *', duration: '8d', timeZone: 'Nowhere/Land' },
    ]);
    expect(errors.map((e) => e.path)).toEqual(['windows[1].cron', 'windows[1].duration', 'windows[1].timeZone']);
    expect(errors[0]!.message).toContain('hour: 25 is outside 0-23');
  });
});
