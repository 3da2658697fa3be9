// CPU time of the processes taking part in the hub benchmark, read from /proc (Linux). On a
// shared machine wall-clock latency moves with everyone else's load; CPU milliseconds per change
// and per report move much less, so they are what a before/after comparison should look at.
import { readFileSync } from 'node:fs';

// USER_HZ: 100 on every Linux the project supports (sysconf(_SC_CLK_TCK)).
const MS_PER_TICK = 10;

/** utime + stime of one process in ms, or undefined when it is gone. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after "(comm)" start at field 3 (state); utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK;
  } catch {
    return undefined;
  }
}

export type CpuSample = Map<number, number>;

export function sampleCpu(pids: readonly number[]): CpuSample {
  const out: CpuSample = new Map();
  for (const pid of pids) {
    const ms = processCpuMs(pid);
    if (ms !== undefined) out.set(pid, ms);
  }
  return out;
}

/**
 * CPU ms used between two samples: the growth of processes present in both, plus all of the
 * processes that appeared in between (a connection pool opening a backend mid-run). Processes
 * that ended in between are missed, so callers sample over short windows.
 */
export function cpuBetween(before: CpuSample, after: CpuSample): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}
