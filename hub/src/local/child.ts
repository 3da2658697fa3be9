/**
 * The processes `flotilla-hub` starts (postgres, nats-server): each in its own process group, so
 * a Ctrl-C in the terminal reaches only the hub command, which then stops them in order (the hub
 * drains first, its servers after it). Output goes to a log file in the data directory; a failed
 * start shows its last lines.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ServiceProcess {
  pid: number;
  /** Resolves with the exit code (or the signal's name) once the process is gone. */
  exited: Promise<number | string>;
  hasExited(): boolean;
  /** Sends `signal`, waits up to `timeoutMs`, then kills. */
  stop(signal: NodeJS.Signals, timeoutMs: number): Promise<void>;
}

export interface ServiceSpec {
  command: string;
  args: string[];
  logFile: string;
  /** Run as this user and group (root starting postgres, which refuses to run as root). */
  runAs?: { uid: number; gid: number };
  env?: NodeJS.ProcessEnv;
}

export function startService(spec: ServiceSpec): ServiceProcess {
  const log = openSync(spec.logFile, 'a', 0o600);
  let exitedWith: number | string | undefined;
  try {
    const child = spawn(spec.command, spec.args, {
      detached: true,
      stdio: ['ignore', log, log],
      ...(spec.env ? { env: spec.env } : {}),
      ...(spec.runAs ?? {}),
    });
    const exited = new Promise<number | string>((resolve) => {
      child.once('error', (err) => resolve((exitedWith = `error: ${err.message}`)));
      child.once('exit', (code, signal) => resolve((exitedWith = code ?? signal ?? 'unknown')));
    });
    // The command's exit must not wait for its children's handles.
    child.unref();
    return {
      pid: child.pid ?? -1,
      exited,
      hasExited: () => exitedWith !== undefined,
      async stop(signal, timeoutMs) {
        if (exitedWith !== undefined) return;
        child.kill(signal);
        const outcome = await Promise.race([exited.then(() => 'gone'), sleep(timeoutMs).then(() => 'late')]);
        if (outcome === 'late') {
          child.kill('SIGKILL');
          await exited;
        }
      },
    };
  } finally {
    closeSync(log);
  }
}

/** The last `lines` lines of a log file (empty when it cannot be read). */
export function logTail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Whether a process with this pid exists (EPERM: it does, owned by someone else). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/**
 * Stops a server a previous run left behind (that run was killed before it could stop it): its
 * pid file names it, and /proc confirms it is still that program, not a reused pid.
 */
export async function stopLeftover(pid: number | undefined, program: string, timeoutMs: number): Promise<boolean> {
  if (pid === undefined || !processAlive(pid)) return false;
  if (!commandLine(pid).includes(program)) return false;
  process.kill(pid, 'SIGINT');
  for (let waited = 0; waited < timeoutMs && processAlive(pid); waited += 100) await sleep(100);
  if (processAlive(pid)) process.kill(pid, 'SIGKILL');
  return true;
}
