/**
 * The `agent manager` process as a user runs it: flags, health endpoints, the Lease, JSON logs
 * without secrets, and a clean exit on SIGTERM that releases the lease. A bad flag exits 2
 * naming the option.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freePort } from '@flotilla/test';
import { kubeLeaseClient } from '@flotilla/agent/runtime';
import { cluster } from '../helpers/context.js';
import { eventually, testNamespace } from '../helpers/kube.js';
import { runtimeEnv } from './support.js';

const env = runtimeEnv();
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function agent(args: string[]): { child: ChildProcess; output: () => string; exit: Promise<number | null> } {
  const child = spawn(
    process.execPath,
    ['--conditions=@flotilla/source', '--import', 'tsx', 'agent/src/main.ts', ...args],
    {
      cwd: root,
      // No components: controllers and the webhook act cluster-wide and would touch the objects
      // of every other suite on this shared cluster. This suite is about the process.
      env: {
        ...process.env,
        KUBECONFIG: '',
        FLOTILLA_CLUSTER_NAME: '',
        FLOTILLA_COMPONENTS: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exit };
}

describe('agent manager process', () => {
  it('runs, leads, serves health, and exits 0 on SIGTERM after releasing the lease', async () => {
    const ns = await testNamespace(env.k, 'main');
    const port = await freePort();
    const c = cluster(0);
    const proc = agent([
      'manager',
      `--kubeconfig=${c.kubeconfigPath}`,
      '--cluster-name=c1',
      '--identity=main-a',
      '--health-host=127.0.0.1',
      `--health-port=${port}`,
      `--lease-namespace=${ns}`,
      '--lease-duration=3s',
      '--renew-deadline=2s',
      '--retry-period=500ms',
      '--log-level=debug',
    ]);
    try {
      await eventually('readyz', async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, 60_000);
      const lease = await eventually('lease held', async () => {
        const l = await kubeLeaseClient(env.rest).get(ns, 'flotilla-agent');
        return l?.spec?.holderIdentity === 'main-a' && l;
      });
      expect(lease.spec?.leaseDurationSeconds).toBe(3);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toContain(`flotilla_agent_leader_election_is_leader{lease="${ns}/flotilla-agent"} 1`);
    } finally {
      proc.child.kill('SIGTERM');
    }
    expect(await proc.exit).toBe(0);
    expect((await kubeLeaseClient(env.rest).get(ns, 'flotilla-agent'))?.spec?.holderIdentity).toBe('');
    const lines = proc
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string });
    expect(lines.map((l) => l.msg)).toEqual(
      expect.arrayContaining(['agent manager starting', 'became leader', 'released lease', 'agent manager stopped']),
    );
    const token = /token: (\S+)/.exec(c.kubeconfig)?.[1];
    if (token) expect(proc.output()).not.toContain(token);
  });

  it('exits 2 naming the bad option', async () => {
    const proc = agent([
      'manager',
      `--kubeconfig=${cluster(0).kubeconfigPath}`,
      '--cluster-name=Bad_Name',
      '--health-port=x',
    ]);
    expect(await proc.exit).toBe(2);
    expect(proc.output()).toContain('--cluster-name (FLOTILLA_CLUSTER_NAME): must be a DNS label');
    expect(proc.output()).toContain('--health-port (FLOTILLA_HEALTH_PORT): must be a port number');
  });
});
