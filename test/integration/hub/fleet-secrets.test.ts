/**
 * The fleet harness (shared by the demo and the e2e suite) keeps secrets off command lines:
 * /proc/<pid>/cmdline is readable by every user of the machine. A one-cluster fleet (hub and a
 * real agent process that registers, is accepted and claims its credentials) is started and
 * every process's command line is read back.
 */
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../fleet/fleet.js';
import { clusters } from '../helpers/context.js';
import { kube } from '../helpers/kube.js';

let fleet: Fleet;
let dir: string;
let ns: string;

beforeAll(async () => {
  const info = clusters()[0]!;
  ns = `fleet-secrets-${Math.random().toString(36).slice(2, 7)}`;
  dir = mkdtempSync(path.join(os.tmpdir(), 'flotilla-fleet-secrets-'));
  fleet = await startFleet({
    dir,
    env: process.env,
    namespace: ns,
    scopeControllers: true,
    members: [{ name: `secrets-${info.name}`, cluster: info, labels: { suite: 'secrets' } }],
    logLevel: 'warn',
  });
}, 240_000);

afterAll(async () => {
  await fleet?.stop();
  const info = clusters()[0];
  if (info)
    await kube(info)
      .core.deleteNamespace({ name: ns })
      .catch(() => undefined);
});

const cmdline = (pid: number): string => readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');

describe('fleet processes', () => {
  it('joined an agent whose command line holds no token', () => {
    const agents = [...fleet.agents.values()];
    expect(agents).toHaveLength(1);
    for (const { process: proc } of agents) {
      const line = cmdline(proc.pid);
      expect(line).toContain('--bootstrap-token-file=');
      expect(line).not.toContain(fleet.bootstrapToken);
      expect(line).not.toContain(fleet.adminToken);
    }
    expect(cmdline(fleet.hub().pid)).not.toContain(fleet.bootstrapToken);
  });

  it('keeps the token file readable by its owner only', () => {
    expect(statSync(path.join(dir, 'bootstrap-token')).mode & 0o777).toBe(0o600);
  });
});
