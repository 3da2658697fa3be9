// Pinning bench processes to CPUs, to give the apiserver cores of its own as a control-plane node has.
import { spawnSync } from 'node:child_process';

/** Pins every thread of a process to `cpus` (a taskset list such as `0` or `1-3`); threads started later inherit it. */
export function pinToCpus(pid: number | undefined, cpus: string, name: string): void {
  if (pid === undefined) throw new Error(`no ${name} process to pin to CPUs ${cpus}`);
  const res = spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`taskset for ${name} failed: ${res.stderr || String(res.error)}`);
}
