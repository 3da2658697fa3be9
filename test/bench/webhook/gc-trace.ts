// The apiserver's garbage-collection cycles on the wall clock, from its GODEBUG=gctrace=1 lines,
// to tell whether the webhook calls over 10 ms are the ones that ran during a cycle (its mark
// phase takes CPU from requests on a one-core apiserver) or are spread regardless of it.
import { readFileSync } from 'node:fs';

/** One GC cycle: wall-clock start (ms since the epoch) and how long it lasted (both STW phases and the concurrent mark). */
export interface GcCycle {
  startMs: number;
  durationMs: number;
}

// "gc 12 @34.567s 3%: 0.021+45+0.030 ms clock, ..." — @ is seconds since the process started.
const GC_LINE = /^gc \d+ @(\d+\.\d+)s \d+%: ([\d.]+)\+([\d.]+)\+([\d.]+) ms clock/;

/**
 * When `pid` started, in ms since the epoch: its start in clock ticks since boot (/proc/<pid>/stat)
 * plus the boot time (now minus /proc/uptime). Good to about 20 ms (two 10 ms clocks).
 */
export function processStartMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const startTicks = Number(fields[19]);
  const uptimeS = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  const bootMs = Date.now() - uptimeS * 1000;
  return bootMs + (startTicks / 100) * 1000;
}

/** The GC cycles a log holds, placed on the wall clock from the process's start. */
export function gcCycles(logText: string, processStart: number): GcCycle[] {
  const cycles: GcCycle[] = [];
  for (const line of logText.split('\n')) {
    const m = GC_LINE.exec(line);
    if (!m) continue;
    cycles.push({
      startMs: processStart + Number(m[1]) * 1000,
      durationMs: Number(m[2]) + Number(m[3]) + Number(m[4]),
    });
  }
  return cycles;
}

/** Whether the interval [startMs, startMs + durationMs] overlaps any of the cycles. */
export function duringGc(cycles: readonly GcCycle[], startMs: number, durationMs: number): boolean {
  return cycles.some((c) => startMs < c.startMs + c.durationMs && c.startMs < startMs + durationMs);
}

/**
 * How the calls over `overMs` line up with the cycles: the share of all calls that overlapped a
 * cycle against the share of the slow ones. Equal shares: the tail is not GC; a far larger share
 * among the slow ones: it is.
 */
export function gcOverlap(
  calls: readonly { startMs: number; durationMs: number }[],
  cycles: readonly GcCycle[],
  overMs: number,
): {
  cycles: number;
  cycleMsTotal: number;
  shareOfCallsDuringGc: number;
  shareOfSlowCallsDuringGc: number;
  slowCalls: number;
} {
  const during = calls.filter((c) => duringGc(cycles, c.startMs, c.durationMs));
  const slow = calls.filter((c) => c.durationMs > overMs);
  const slowDuring = slow.filter((c) => duringGc(cycles, c.startMs, c.durationMs));
  const share = (n: number, of: number): number => Math.round((n / Math.max(1, of)) * 1000) / 1000;
  return {
    cycles: cycles.length,
    cycleMsTotal: Math.round(cycles.reduce((s, c) => s + c.durationMs, 0)),
    shareOfCallsDuringGc: share(during.length, calls.length),
    shareOfSlowCallsDuringGc: share(slowDuring.length, slow.length),
    slowCalls: slow.length,
  };
}
