// Pinning bench processes to CPUs, to give the control plane cores of its own as a control-plane node has.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import os from 'node:os';

/** Pins every thread of a process to `cpus` (a taskset list such as `0` or `1-3`); threads started later inherit it. */
export function pinToCpus(pid: number | undefined, cpus: string, name: string): void {
  if (pid === undefined) throw new Error(`no ${name} process to pin to CPUs ${cpus}`);
  const res = spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`taskset for ${name} failed: ${res.stderr || String(res.error)}`);
}

/** The processes of a harness cluster that make up its control plane (a control-plane node's). */
export const CONTROL_PLANE = ['kube-apiserver', 'etcd', 'kube-scheduler', 'kube-controller-manager'] as const;

/**
 * `--split-cores`: the first half of the machine's CPUs for the control plane, the other half for
 * the worker side (kwok's nodes, the agent, the bench), as taskset lists (one CPU each on two).
 */
export function splitCpus(): { controlPlane: string; workers: string } {
  const n = os.cpus().length;
  const half = Math.max(1, Math.floor(n / 2));
  const list = (from: number, to: number): string => (to - from > 1 ? `${from}-${to - 1}` : `${from}`);
  return { controlPlane: list(0, half), workers: n > 1 ? list(half, n) : list(0, 1) };
}

/**
 * Sets the nice value of every thread of a process (on Linux it is per thread; threads started
 * later inherit their creator's). A bench uses it to rank processes sharing a core as separate
 * nodes would not have to share it.
 */
export function reniceProcess(pid: number | undefined, nice: number, name: string): void {
  if (pid === undefined) throw new Error(`no ${name} process to renice`);
  for (const tid of readdirSync(`/proc/${pid}/task`)) os.setPriority(Number(tid), nice);
}
