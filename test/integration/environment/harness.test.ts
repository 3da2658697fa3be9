import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HarnessError, readVersions, startCluster, startNats, startProcess, toolPath, waitFor } from '@flotilla/test';
import { eventually } from '../helpers/kube.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const tmp = (p: string): string => mkdtempSync(path.join(os.tmpdir(), p));

/** A zombie counts as gone: it has exited and only waits to be reaped by init. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function catchError(p: Promise<unknown>): Promise<HarnessError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof HarnessError) return err;
    throw err;
  }
  throw new Error('expected a HarnessError');
}

describe('the harness fails loudly and cleans up', () => {
  it('names a missing binary and how to build it', () => {
    let err: unknown;
    try {
      toolPath('kube-apiserver', { ...readVersions(), K8S_VERSION: 'v0.0.0-missing' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HarnessError);
    expect((err as HarnessError).code).toBe('TOOL_MISSING');
    expect((err as HarnessError).message).toContain('[kube-apiserver]');
    expect((err as HarnessError).message).toContain('npm run tools');
  });

  it('reports a component that exits before it is ready with its name and log tail', async () => {
    const dir = tmp('crash-');
    const proc = startProcess({
      name: 'crasher',
      command: 'sh',
      args: ['-c', 'echo "fatal: cannot bind"; exit 3'],
      logFile: path.join(dir, 'crasher.log'),
    });
    const err = await catchError(
      waitFor('crasher', () => Promise.resolve(false), { timeoutMs: 10_000, process: proc }),
    );
    expect(err.code).toBe('EXITED_EARLY');
    expect(err.message).toContain('[crasher]');
    expect(err.message).toContain('code 3');
    expect(err.logTail).toContain('fatal: cannot bind');
  });

  it('fails with nats-server named when its port is taken', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const err = await catchError(startNats({ dir: tmp('nats-'), port, name: 'nats-server' }));
      expect(err.code).toBe('EXITED_EARLY');
      expect(err.message).toContain('[nats-server]');
      expect(err.logTail).toMatch(/address already in use/i);
    } finally {
      blocker.close();
    }
  });

  it('stops everything it started when a cluster component cannot start', async () => {
    const err = await catchError(startCluster({ name: 'bad', nodes: 1, apiserverArgs: ['--no-such-flag=1'] }));
    expect(err.component).toBe('bad/kube-apiserver');
    expect(err.logTail).toContain('unknown flag');
    // The cluster's own etcd was started before the apiserver; it must be gone too.
    const etcdPids = pidsMatching(/etcd.*flotilla-bad-/);
    expect(etcdPids).toEqual([]);
  });

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGKILL'] as const) {
    it(`leaves no orphan when the harness process gets ${signal}`, async () => {
      const dir = tmp('orphan-');
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'fixtures/hold-etcd.ts'), dir], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const pid = await new Promise<number>((resolve, reject) => {
        child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
        child.once('exit', (code) => reject(new Error(`fixture exited early with ${code}`)));
      });
      expect(alive(pid)).toBe(true);
      child.kill(signal);
      await eventually(`etcd ${pid} gone after ${signal}`, () => Promise.resolve(!alive(pid)), 15_000);
    });
  }
});

function pidsMatching(re: RegExp): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (re.test(cmd)) out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}
