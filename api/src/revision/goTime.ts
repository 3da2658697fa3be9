/**
 * metav1.Time as its JSON codec round-trips it: RFC 3339 in, UTC with whole seconds out, and
 * the zero time (0001-01-01T00:00:00Z) out as null. Returns undefined where Go's parser fails.
 */
export function roundTripGoTime(text: string): string | null | undefined {
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const fraction = m[7] ?? '';
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const offsetMinutes = zoneOffsetMinutes(m[8] ?? 'Z');
  if (offsetMinutes === undefined) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute - offsetMinutes, second, 0);
  const isZero = date.getTime() === GO_ZERO_TIME && !/[1-9]/.test(fraction);
  return isZero ? null : formatUtc(date);
}

/** Minutes east of UTC of `Z` or `±hh:mm`; undefined when Go's parser rejects the offset. */
function zoneOffsetMinutes(zone: string): number | undefined {
  if (zone === 'Z') return 0;
  const zoneHours = Number(zone.slice(1, 3));
  const zoneMinutes = Number(zone.slice(4, 6));
  if (zoneHours > 23 || zoneMinutes > 59) return undefined;
  return (zone[0] === '-' ? -1 : 1) * (zoneHours * 60 + zoneMinutes);
}

// Go's RFC 3339 parser takes any number of fractional-second digits (after "." or, in its
// general parser, ","), and the encoder drops them. Go's general parser also takes a one-digit
// hour; that leniency is not reproduced (such text never comes out of an API server).
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}:\d{2})$/;

/** 0001-01-01T00:00:00Z in Unix milliseconds: Go's zero time.Time. */
const GO_ZERO_TIME = -62_135_596_800_000;

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function formatUtc(date: Date): string {
  const year = date.getUTCFullYear();
  const yyyy = (year < 0 ? '-' : '') + String(Math.abs(year)).padStart(4, '0');
  const two = (n: number): string => String(n).padStart(2, '0');
  return (
    `${yyyy}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())}` +
    `T${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}Z`
  );
}
