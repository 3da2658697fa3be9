/**
 * "Admissions first": the agent's main thread (controllers, informers) lowers its own CPU
 * priority once the admission thread runs, so on a busy node a pod create never waits behind the
 * agent's controllers for the agent's CPU. Linux keeps a nice value per thread, and
 * setpriority(PRIO_PROCESS, 0) sets the calling thread's alone; elsewhere it would set the whole
 * process's, the admission thread's included, so the agent leaves it alone there. Raising a nice
 * value needs no privilege; lowering it again does, so a thread started later from the main thread
 * (a restarted admission thread) inherits the lower priority.
 */
import os from 'node:os';
import type { Logger } from 'pino';

export interface ThreadPriority {
  platform: NodeJS.Platform;
  /** Sets the calling thread's nice value (pid 0). */
  setCallingThreadNice(nice: number): void;
}

export const osThreadPriority: ThreadPriority = {
  platform: process.platform,
  setCallingThreadNice: (nice) => os.setPriority(nice),
};

/** Lowers the calling thread to `nice`; true when it did. Never throws: a refusal is logged. */
export function lowerCallingThread(nice: number, priority: ThreadPriority, log: Logger): boolean {
  if (nice <= 0) return false;
  if (priority.platform !== 'linux') {
    log.warn(
      { nice, platform: priority.platform },
      'controllers keep their CPU priority: per-thread nice is Linux only',
    );
    return false;
  }
  try {
    priority.setCallingThreadNice(nice);
    log.info({ nice }, 'controllers run at a lower CPU priority than admissions');
    return true;
  } catch (err) {
    log.warn({ err, nice }, 'could not lower the CPU priority of the controllers');
    return false;
  }
}
