/**
 * reserveOrdinals: ordinals an Advanced StatefulSet skips. An entry is a number or a string range
 * "a-b" (both ends included, a ≤ b), as OpenKruise v1.9 reads them (pkg/util/api/asts.go).
 */
import type { IntOrString } from '../../validation/intstr.js';

const RANGE = /^(\d+)-(\d+)$/;

export type ParsedReserveOrdinal = { ok: true; from: number; to: number } | { ok: false; reason: string };

/** One reserveOrdinals entry as the range it covers. */
export function parseReserveOrdinal(entry: IntOrString): ParsedReserveOrdinal {
  if (typeof entry === 'number') {
    return entry < 0 ? { ok: false, reason: 'reserve ordinal is negative' } : { ok: true, from: entry, to: entry };
  }
  const match = RANGE.exec(entry);
  if (!match) return { ok: false, reason: 'not a valid range: must look like "2-5"' };
  const from = Number(match[1]);
  const to = Number(match[2]);
  if (from > to) return { ok: false, reason: 'invalid range: the start is above the end' };
  return { ok: true, from, to };
}

/**
 * The reserved ordinals. Like OpenKruise, a list with an invalid entry reserves nothing (admission
 * refuses such lists, so only an object written past it has one).
 */
export function reservedOrdinals(entries: readonly IntOrString[] | undefined): Set<number> {
  const out = new Set<number>();
  for (const entry of entries ?? []) {
    const parsed = parseReserveOrdinal(entry);
    if (!parsed.ok) return new Set();
    for (let i = parsed.from; i <= parsed.to; i++) out.add(i);
  }
  return out;
}
