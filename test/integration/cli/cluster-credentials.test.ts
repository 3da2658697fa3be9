/**
 * `flotilla clusters get` and `flotilla clusters revoke` as a real process (node cli/dist/main.js)
 * against a real hub and NATS: `get` shows the agent's public key (shortened) and when its JWT
 * expires, never a secret; `revoke` is an admin's, cuts the cluster off (its renewals are refused
 * from then on) and says that re-keying is the agent's to start.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  joinCluster,
  renewCredentials,
  startFleetNats,
  startTestHub,
  type FleetNats,
  type JoinedCluster,
  type TestHub,
} from '../hub/fleet.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = path.join(ROOT, 'cli/dist/main.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let nats: FleetNats;
let t: TestHub;
let joined: JoinedCluster;

function flotilla(args: string[], token: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), FLOTILLA_HUB_URL: t.hub.url!, FLOTILLA_TOKEN: token },
        timeout: 60_000,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build (npm test builds first)`);
  nats = await startFleetNats();
  t = await startTestHub(nats);
  joined = await joinCluster(t, 'cred-a', { fleet: 'cli' });
});

afterAll(async () => {
  await t?.hub.close();
  await t?.db.close();
  await nats?.stop();
});

describe('flotilla clusters get / revoke', { timeout: 120_000 }, () => {
  it('get shows the key and the credential expiry, and no secret', async () => {
    const publicKey = (await t.db.pool.query<{ k: string }>('select agent_public_key k from clusters')).rows[0]!.k;
    const table = await flotilla(['clusters', 'get', 'cred-a'], t.viewerToken);
    expect(table.code, table.stderr).toBe(0);
    const [header, row] = table.stdout.split('\n');
    expect(header).toMatch(/\bKEY\s+CREDENTIAL$/);
    expect(row).toContain(`${publicKey.slice(0, 8)}…${publicKey.slice(-4)}`);
    expect(row).toMatch(/\bin (23h|24h|1d)$/);

    const json = await flotilla(['clusters', 'get', 'cred-a', '-o', 'json'], t.viewerToken);
    const c = JSON.parse(json.stdout) as { publicKey: string; credentialExpiresAt: string };
    expect(c.publicKey).toBe(publicKey);
    expect(Date.parse(c.credentialExpiresAt)).toBe(Date.parse(joined.nats.expiresAt));
    for (const out of [table.stdout, json.stdout]) {
      expect(out).not.toContain(joined.nats.jwt);
      expect(out).not.toContain(joined.seed);
    }
  });

  it('revoke is an admin’s; it cuts the cluster off, and the help says re-keying is the agent’s', async () => {
    const help = await flotilla(['clusters', 'revoke', '--help'], t.viewerToken);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: flotilla clusters revoke NAME');
    expect(help.stdout).toContain('Re-keying cannot be done from here: it is initiated by the agent');

    const asOperator = await flotilla(['clusters', 'revoke', 'cred-a'], t.operatorToken);
    expect(asOperator.code).toBe(1);
    expect(asOperator.stderr).toContain('403');
    const missing = await flotilla(['clusters', 'revoke', 'nope'], t.adminToken);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('404 HUB_ERR_NOT_FOUND: cluster nope not found');

    const revoked = await flotilla(['clusters', 'revoke', 'cred-a'], t.adminToken);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe('cluster cred-a: NATS key revoked; the cluster must register again\n');
    await expect(renewCredentials(t, joined)).rejects.toThrow(/403/);

    const after = await flotilla(['clusters', 'get', 'cred-a'], t.viewerToken);
    expect(after.stdout.split('\n')[1]).toMatch(/<revoked>\s+-$/);
    const audit = await t.db.pool.query<{ action: string }>(
      "select action from audit_log where target_id = 'cred-a' and action = 'cluster.credentials.revoke'",
    );
    expect(audit.rows).toHaveLength(1);
  });
});
