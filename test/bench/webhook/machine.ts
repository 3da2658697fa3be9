// Who used the machine's CPU during a phase: every process's CPU time from /proc/<pid>/stat,
// grouped by what it is (the agent, the bench itself, the cluster's processes, anything else on
// the shared machine), and the machine's total from /proc/stat. The webhook bench's latencies
// move with everything the two cores run; this says what that was.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { round } from './metrics.js';

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

export interface MachineSample {
  atMs: number;
  /** Busy and total ticks of all CPUs (/proc/stat's first line). */
  busy: number;
  total: number;
  /** Ticks of irq + softirq (no process is charged) and steal (the hypervisor ran someone else). */
  interrupts: number;
  steal: number;
  /** pid → command name and user + system ticks. */
  processes: Map<number, { comm: string; ticks: number; start: number }>;
}

export function sampleMachine(): MachineSample {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal ...
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  const processes = new Map<number, { comm: string; ticks: number; start: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      let comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (comm === 'node' || comm === 'MainThread') comm = `node ${nodeScript(entry)}`;
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      processes.set(Number(entry), { comm, ticks: Number(rest[11]) + Number(rest[12]), start: Number(rest[19]) });
    } catch {
      // Gone between the listing and the read.
    }
  }
  return {
    atMs: Date.now(),
    busy: total - idle,
    total,
    interrupts: (fields[5] ?? 0) + (fields[6] ?? 0),
    steal: fields[7] ?? 0,
    processes,
  };
}

/**
 * Average cores used between two samples: the machine's total and per group. `named` gives
 * groups to known pids (the agent, the bench); the others are grouped by command name, and the
 * CPU of processes that ended in between (or of the kernel) is what `unattributed` holds.
 */
export function machineUse(
  a: MachineSample,
  b: MachineSample,
  named: Record<number, string>,
): {
  cores: number;
  machineBusyCores: number;
  byGroup: Record<string, number>;
  interruptCores: number;
  stealCores: number;
  unattributedCores: number;
} {
  const seconds = Math.max(0.001, (b.atMs - a.atMs) / 1000);
  const cores = (ticks: number): number => ticks / CLOCK_TICKS / seconds;
  const groups = new Map<string, number>();
  let attributed = 0;
  for (const [pid, now] of b.processes) {
    const before = a.processes.get(pid);
    // A process started in between (or a pid reused since) counts from zero.
    const used = before && before.start === now.start ? now.ticks - before.ticks : now.ticks;
    if (used === 0) continue;
    // Kernel workers rename themselves after their current work: one group for all of them.
    const group = named[pid] ?? (now.comm.startsWith('kworker/') ? 'kworker' : now.comm);
    groups.set(group, (groups.get(group) ?? 0) + used);
    attributed += used;
  }
  const byGroup: Record<string, number> = {};
  for (const [group, ticks] of [...groups].sort((x, y) => y[1] - x[1])) {
    const c = round(cores(ticks), 3);
    if (c >= 0.005) byGroup[group] = c;
  }
  // /proc/stat counts every CPU's ticks: divide by the CPUs for the machine's own clock.
  const cpus = (b.total - a.total) / CLOCK_TICKS / seconds;
  const share = (ticks: number): number => round((ticks / Math.max(1, b.total - a.total)) * cpus, 3);
  return {
    cores: round(cpus, 2),
    machineBusyCores: share(b.busy - a.busy),
    byGroup,
    interruptCores: share(b.interrupts - a.interrupts),
    stealCores: share(b.steal - a.steal),
    // Busy time no live process was charged with: interrupts, steal, and processes that ended.
    unattributedCores: round(Math.max(0, share(b.busy - a.busy) - cores(attributed)), 3),
  };
}

/** What a node process runs: its first script-like argument (a .ts/.js/.mjs file, vitest, tsx), shortened. */
function nodeScript(pid: string): string {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const script = args
      .slice(1)
      .find((a) => /\.(m?[jt]s|cjs)$/.test(a) && !a.includes('preflight') && !a.includes('loader'));
    return script ? script.split('/').slice(-3).join('/') : (args[1] ?? '');
  } catch {
    return '?';
  }
}
