import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readSync, fstatSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { HarnessError } from './errors.js';

/** A long-running child (etcd, apiserver, kwok, nats-server...) that the harness owns. */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves with the exit code (or null when killed by a signal). */
  readonly exited: Promise<number | null>;
  hasExited(): boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
  logTail(lines?: number): string;
}

export interface StartProcessOptions {
  name: string;
  command: string;
  args: string[];
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Run as this system user (and its group); for servers that refuse to run as root (postgres). */
  runAs?: { uid: number; gid: number };
}

const live = new Set<ManagedProcess>();
let cleanupInstalled = false;

/** Reads the end of a log file without loading all of it. */
export function readLogTail(file: string, lines = 40): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const size = fstatSync(fd).size;
    const len = Math.min(size, 16 * 1024);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    return buf
      .toString('utf8')
      .split('\n')
      .slice(-lines - 1)
      .join('\n')
      .trimEnd();
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/**
 * No child may outlive the harness: on exit every process group is killed synchronously, and
 * on SIGINT/SIGTERM the children are terminated before the signal's default action runs.
 * `setpriv --pdeathsig` in startProcess covers the case where the harness itself is SIGKILLed.
 */
function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.on('exit', () => {
    for (const p of live) killGroup(p.pid, 'SIGKILL');
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    const onSignal = (): void => {
      for (const p of live) killGroup(p.pid, 'SIGTERM');
      process.removeListener(sig, onSignal);
      // Only take the default action when nobody else (vitest, the demo) handles the signal.
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    };
    process.on(sig, onSignal);
  }
}

export function startProcess(opts: StartProcessOptions): ManagedProcess {
  installCleanup();
  mkdirSync(path.dirname(opts.logFile), { recursive: true });
  const out = openSync(opts.logFile, 'a');
  // setpriv makes the kernel kill the child if the harness dies without running any cleanup;
  // detached puts it in its own process group so its own children are stopped with it.
  // setpriv sets the parent-death signal after switching user, so it survives the switch.
  const user = opts.runAs ? [`--reuid=${opts.runAs.uid}`, `--regid=${opts.runAs.gid}`, '--clear-groups'] : [];
  const child = spawn('setpriv', [...user, '--pdeathsig', 'KILL', '--', opts.command, ...opts.args], {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    detached: true,
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  if (child.pid === undefined) {
    throw new HarnessError('START_FAILED', opts.name, `could not spawn ${opts.command}`, readLogTail(opts.logFile));
  }
  const pid = child.pid;
  let done = false;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      done = true;
      live.delete(proc);
      resolve(code);
    });
    child.once('error', () => {
      done = true;
      live.delete(proc);
      resolve(-1);
    });
  });
  const proc: ManagedProcess = {
    name: opts.name,
    pid,
    logFile: opts.logFile,
    exited,
    hasExited: () => done,
    logTail: (lines?: number) => readLogTail(opts.logFile, lines),
    async stop(graceMs = 5000): Promise<void> {
      if (done) return;
      killGroup(pid, 'SIGTERM');
      const timer = sleep(graceMs).then(() => 'timeout' as const);
      if ((await Promise.race([exited, timer])) === 'timeout') {
        killGroup(pid, 'SIGKILL');
        await exited;
      }
    },
  };
  live.add(proc);
  return proc;
}

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Fail fast, with its log, when this process exits while we wait for it. */
  process?: ManagedProcess;
  what?: string;
}

/** Polls `probe` until it returns true. Probe errors count as "not yet". */
export async function waitFor(component: string, probe: () => Promise<boolean>, opts: WaitOptions): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError: unknown;
  for (;;) {
    if (opts.process?.hasExited()) {
      const code = await opts.process.exited;
      throw new HarnessError(
        'EXITED_EARLY',
        component,
        `exited with code ${code} before it was ready`,
        opts.process.logTail(),
      );
    }
    try {
      if (await probe()) return;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? ` (last probe error: ${lastError.message})` : '';
      throw new HarnessError(
        'NOT_READY',
        component,
        `${opts.what ?? 'not ready'} after ${opts.timeoutMs} ms${why}`,
        opts.process?.logTail() ?? '',
        { cause: lastError },
      );
    }
    await sleep(opts.intervalMs ?? 200);
  }
}

/** Stops every process the harness started, newest first. */
export async function stopAll(): Promise<void> {
  const procs = [...live].reverse();
  for (const p of procs) await p.stop();
}
