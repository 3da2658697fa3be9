import { readFileSync, readdirSync } from 'node:fs';

/** Resident set size of a process and its descendants in bytes (0 when it is gone). */
export function readRssBytes(pid: number): number {
  let total = 0;
  for (const p of [pid, ...descendants(pid)]) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      if (m) total += Number(m[1]) * 1024;
    } catch {
      // exited meanwhile
    }
  }
  return total;
}

function descendants(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      const kids = readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim();
      for (const k of kids ? kids.split(/\s+/).map(Number) : []) out.push(k, ...descendants(k));
    }
  } catch {
    // exited meanwhile
  }
  return out;
}
