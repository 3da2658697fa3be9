import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { lowerCallingThread, type ThreadPriority } from './priority.js';

const silent = pino({ level: 'silent' });

function fake(platform: NodeJS.Platform, fail?: Error): ThreadPriority & { set: number[] } {
  const set: number[] = [];
  return {
    platform,
    set,
    setCallingThreadNice: (nice) => {
      if (fail) throw fail;
      set.push(nice);
    },
  };
}

describe('lowerCallingThread', () => {
  it('sets the nice value on Linux and says it did', () => {
    const p = fake('linux');
    expect(lowerCallingThread(10, p, silent)).toBe(true);
    expect(p.set).toEqual([10]);
  });

  it('leaves priorities alone for 0, on other systems (nice is per process there) and when refused', () => {
    const zero = fake('linux');
    expect(lowerCallingThread(0, zero, silent)).toBe(false);
    expect(zero.set).toEqual([]);
    const mac = fake('darwin');
    expect(lowerCallingThread(10, mac, silent)).toBe(false);
    expect(mac.set).toEqual([]);
    expect(lowerCallingThread(10, fake('linux', Object.assign(new Error('EACCES'), { code: 'EACCES' })), silent)).toBe(
      false,
    );
  });

  it('on Linux lowers the calling thread alone: a thread started before keeps its priority', () => {
    // A process of its own: the test runner's threads keep their priority.
    const script = `
      import { Worker } from 'node:worker_threads';
      import { readFileSync } from 'node:fs';
      import pino from 'pino';
      import { lowerCallingThread, osThreadPriority } from ${JSON.stringify(new URL('./priority.ts', import.meta.url).href)};
      // The worker stays alive (listening) until it is read: a finished thread leaves /proc/self/task.
      const worker = new Worker('const { parentPort } = require("node:worker_threads"); parentPort.on("message", () => undefined); parentPort.postMessage(readTid()); function readTid() { return require("node:fs").readlinkSync("/proc/thread-self").split("/").pop(); }', { eval: true, execArgv: [] });
      const workerTid = await new Promise((r) => worker.once('message', r));
      lowerCallingThread(10, osThreadPriority, pino({ level: 'silent' }));
      const nice = (tid) => { const s = readFileSync('/proc/self/task/' + tid + '/stat', 'utf8'); return Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[16]); };
      console.log(JSON.stringify({ main: nice(process.pid), worker: nice(workerTid) }));
      process.exit(0);
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    // The worker keeps the nice value the process started with (the runner's own, 0 unless run under `nice`).
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual({ main: 10, worker: os.getPriority() });
  });
});
