/**
 * The `flotilla` CLI as a real process (node cli/dist/main.js) against a real hub
 * (HTTP listener, Postgres, harness nats-server, rollout scheduler). Agents are simulated the way
 * the rollout suite does it (heartbeats and status written through the hub's own repositories).
 * Also: the dashboard's files are public and carry the CSP, while its data still needs a token.
 */
import { newAgentKey } from '@flotilla/api';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { cloneSetSpec } from '../hub/fixtures.js';
import { startFleetNats, startTestHub, type FleetNats, type TestHub } from '../hub/fleet.js';
import { agentsReport, heartbeat, type Harness } from '../rollouts/harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
// The built CLI, as users run it (`npm test` builds before it tests): a tsx start costs seconds
// on a loaded machine and the suite starts the CLI some sixty times.
const CLI = path.join(ROOT, 'cli/dist/main.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let nats: FleetNats;
let t: TestHub;
let dir: string;
/** What the simulation helpers of the rollout suite need: the hub's database and a clock. */
let sim: Harness;

/** Runs the CLI with only the environment given (no FLOTILLA_* leaks in from the test runner). */
function flotilla(args: string[], env: Record<string, string> = {}, stdin?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), FLOTILLA_HUB_URL: t.hub.url!, ...env },
        timeout: 90_000,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end(stdin ?? '');
  });
}

const as = (token: string): Record<string, string> => ({ FLOTILLA_TOKEN: token });

function file(name: string, content: unknown): string {
  const p = path.join(dir, name);
  writeFileSync(p, typeof content === 'string' ? content : YAML.stringify(content));
  return p;
}

const workload = (image: string, replicas = 2): Record<string, unknown> => ({
  kind: 'CloneSet',
  name: 'web',
  namespace: 'default',
  updatePolicy: 'Rollout',
  spec: cloneSetSpec(replicas, image),
  placement: { clusterSelector: { matchLabels: { fleet: 'cli' } } },
});

let operator = '';
/** Accepted clusters heartbeat as live agents would (a stale one is skipped by a rollout). */
let beats: ReturnType<typeof setInterval> | undefined;

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build (npm test builds first)`);
  dir = mkdtempSync(path.join(os.tmpdir(), 'flotilla-cli-'));
  nats = await startFleetNats();
  t = await startTestHub(nats);
  sim = { hub: t.db, now: () => Date.now() } as unknown as Harness;
  // Two agents register with the bootstrap token (the agent's side of the double opt-in).
  for (const name of ['cli-a', 'cli-b']) {
    const res = await fetch(`${t.hub.url}/api/v1/clusters/register`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.bootstrapToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name,
        labels: { fleet: 'cli', ring: name === 'cli-a' ? 'canary' : 'main' },
        publicKey: newAgentKey().publicKey,
      }),
    });
    expect(res.status).toBe(201);
  }
});

afterAll(async () => {
  clearInterval(beats);
  await t?.hub.close();
  await t?.db.close();
  await nats?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// Each test starts the CLI a dozen times.
describe('flotilla CLI against a real hub', { timeout: 300_000 }, () => {
  it('tokens: the secret is printed once, to stdout only, and works; lists never show it', async () => {
    const created = await flotilla(['tokens', 'create', '--role', 'operator', 'cli-operator'], as(t.adminToken));
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^flt_\S+\n$/);
    expect(created.stderr).toContain('shown only this once');
    operator = created.stdout.trim();
    expect(created.stderr).not.toContain(operator);

    const list = await flotilla(['tokens', 'list', '-o', 'json'], as(t.adminToken));
    expect(list.code, list.stderr).toBe(0);
    const items = JSON.parse(list.stdout) as Record<string, unknown>[];
    expect(items.find((i) => i['name'] === 'cli-operator')).toMatchObject({ role: 'operator', revokedAt: null });
    expect(list.stdout).not.toContain(operator);
    expect(items.every((i) => !('token' in i))).toBe(true);

    // The new token works, from a file too; a viewer-level read is enough to check it.
    const tokenFile = file('token', `${operator}\n`);
    const viaFile = await flotilla(['clusters', 'list', '--token-file', tokenFile]);
    expect(viaFile.code, viaFile.stderr).toBe(0);
  });

  it('errors: no token is a 401 message, bad flags are usage errors (exit 2)', async () => {
    const none = await flotilla(['clusters', 'list']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('401 HUB_ERR_UNAUTHORIZED: a bearer token is required');
    const bad = await flotilla(['clusters', 'list'], as('flt_wrong'));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('the token is unknown or revoked');
    expect(bad.stderr).not.toContain('flt_wrong');
    const usage = await flotilla(['workloads', 'apply'], as(operator));
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('workloads apply needs -f FILE');
    const format = await flotilla(['clusters', 'list', '-o', 'xml'], as(operator));
    expect(format.code).toBe(2);
    const unreachable = await flotilla(['clusters', 'list', '--hub-url', 'http://127.0.0.1:1'], as(operator));
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('cannot reach the hub at http://127.0.0.1:1');
  });

  it('clusters: list, accept, label, get, selector and health filters, 404', async () => {
    const pending = await flotilla(['clusters', 'list'], as(operator));
    expect(pending.code, pending.stderr).toBe(0);
    expect(pending.stdout.split('\n')[0]).toMatch(/^NAME\s+STATE\s+HEALTH\s+LAST-HEARTBEAT/);
    expect(pending.stdout).toMatch(/cli-a\s+pending\s+Pending/);

    for (const name of ['cli-a', 'cli-b']) {
      const acc = await flotilla(['clusters', 'accept', name], as(operator));
      expect(acc.code, acc.stderr).toBe(0);
      expect(acc.stdout).toBe(`cluster ${name} accepted\n`);
    }
    await heartbeat(sim, ['cli-a', 'cli-b']);
    beats = setInterval(() => void heartbeat(sim, ['cli-a', 'cli-b']).catch(() => undefined), 3000);

    const label = await flotilla(['clusters', 'label', 'cli-b', 'region=eu', 'ring-'], as(operator));
    expect(label.code, label.stderr).toBe(0);
    expect(label.stdout).toBe('cluster cli-b labeled: fleet=cli,region=eu\n');

    const get = await flotilla(['clusters', 'get', 'cli-b', '-o', 'yaml'], as(operator));
    expect(get.code, get.stderr).toBe(0);
    expect(YAML.parse(get.stdout)).toMatchObject({
      name: 'cli-b',
      state: 'accepted',
      health: 'Online',
      labels: { fleet: 'cli', region: 'eu' },
    });

    const eu = await flotilla(['clusters', 'list', '--selector', 'region=eu', '-o', 'json'], as(operator));
    expect((JSON.parse(eu.stdout) as { name: string }[]).map((c) => c.name)).toEqual(['cli-b']);
    const online = await flotilla(['clusters', 'list', '--health', 'Online', '-o', 'json'], as(operator));
    expect((JSON.parse(online.stdout) as { name: string }[]).map((c) => c.name)).toEqual(['cli-a', 'cli-b']);
    const badHealth = await flotilla(['clusters', 'list', '--health', 'Sleepy'], as(operator));
    expect(badHealth.code).toBe(1);
    expect(badHealth.stderr).toContain('400 HUB_ERR_INVALID');
    expect(badHealth.stderr).toContain('querystring.health');

    const missing = await flotilla(['clusters', 'get', 'nope'], as(operator));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('404 HUB_ERR_NOT_FOUND: cluster nope not found');
  });

  it('workloads: apply creates then updates by name; list, get, revisions, status; bad specs name the field', async () => {
    const v1 = file('web-v1.yaml', workload('registry.local/web:1.0'));
    const created = await flotilla(['workloads', 'apply', '-f', v1], as(operator));
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toBe('CloneSet default/web created (revision 1)\n');
    const again = await flotilla(['workloads', 'apply', '-f', v1], as(operator));
    expect(again.stdout).toBe('CloneSet default/web unchanged (revision 1)\n');
    const v2 = file('web-v2.yaml', workload('registry.local/web:1.1'));
    const updated = await flotilla(['workloads', 'apply', '-f', v2], as(operator));
    expect(updated.stdout).toBe('CloneSet default/web configured (revision 2)\n');
    // From standard input, as a Kruise manifest with the hub's fields beside spec: nothing changes.
    const { name: _name, namespace: _namespace, ...rest } = workload('registry.local/web:1.1');
    const manifest = {
      apiVersion: 'apps.kruise.io/v1alpha1',
      ...rest,
      metadata: { name: 'web', namespace: 'default' },
    };
    const stdin = YAML.stringify(manifest);
    const piped = await flotilla(['workloads', 'apply', '-f', '-'], as(operator), stdin);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toBe('CloneSet default/web unchanged (revision 2)\n');

    const list = await flotilla(['workloads', 'list'], as(operator));
    expect(list.stdout).toMatch(/CloneSet\s+default\s+web\s+2\s+1\s+Rollout/);
    const get = await flotilla(['workloads', 'get', 'default/web', '-o', 'json'], as(operator));
    const w = JSON.parse(get.stdout) as { id: string; revision: number; stableRevision: number; spec: unknown };
    expect(w).toMatchObject({ revision: 2, stableRevision: 1, spec: cloneSetSpec(2, 'registry.local/web:1.1') });
    const byId = await flotilla(['workloads', 'get', w.id, '-o', 'json'], as(operator));
    expect((JSON.parse(byId.stdout) as { id: string }).id).toBe(w.id);

    const revisions = await flotilla(['workloads', 'revisions', 'web'], as(operator));
    expect(revisions.code, revisions.stderr).toBe(0);
    const rows = revisions.stdout.trim().split('\n');
    expect(rows).toHaveLength(3);
    expect(rows[1]).toMatch(/^2\s/);
    expect(rows[2]).toMatch(/^1 \(stable\)\s/);

    const status = await flotilla(['workloads', 'status', 'web'], as(operator));
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/cli-a\s+Pending\s+1\s+-\s+no/);
    expect(status.stdout).toMatch(/cli-b\s+Pending\s+1\s+-\s+no/);
    expect(status.stdout).toContain('revision 2: 2 clusters, 0 up to date (Pending 2)');

    const invalid = file('bad.yaml', workload('registry.local/web:1.2', -1));
    const bad = await flotilla(['workloads', 'apply', '-f', invalid], as(operator));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('400 HUB_ERR_INVALID');
    expect(bad.stderr).toMatch(/spec\.replicas: .*0/);

    const unknown = await flotilla(['workloads', 'get', 'default/nope'], as(operator));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('workload default/nope not found');
    const unknownId = await flotilla(['workloads', 'status', '00000000-0000-4000-8000-000000000000'], as(operator));
    expect(unknownId.code).toBe(1);
    expect(unknownId.stderr).toContain('404 HUB_ERR_NOT_FOUND');

    const viewer = await flotilla(['workloads', 'delete', 'web'], as(t.viewerToken));
    expect(viewer.code).toBe(1);
    expect(viewer.stderr).toContain('403 HUB_ERR_FORBIDDEN: this needs the operator role; the token has viewer');
  });

  it('rollouts: start, get, pause, resume, abort, a 409 naming the phase, and watch exit codes', async () => {
    const started = await flotilla(['rollouts', 'start', 'web', '--canary', 'cli-a', '--soak', '600'], as(operator));
    expect(started.code, started.stderr).toBe(0);
    const id = /^rollout (\S+) started: revision 1 -> 2, phase Progressing$/m.exec(started.stdout)?.[1];
    expect(id, started.stdout).toBeDefined();

    const get = await flotilla(['rollouts', 'get', id!], as(operator));
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toContain('phase Progressing, wave canary');
    expect(get.stdout).toMatch(/^canary\s+\S+\s+cli-a\s+1\s+600s/m);
    expect(get.stdout).toMatch(/^main\s+Pending\s+cli-b\s/m);

    const pause = await flotilla(['rollouts', 'pause', id!, '--reason', 'lunch'], as(operator));
    expect(pause.code, pause.stderr).toBe(0);
    expect(pause.stdout).toBe(`rollout ${id} pause: phase Paused\n`);
    const twice = await flotilla(['rollouts', 'pause', id!], as(operator));
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('409 HUB_ERR_CONFLICT: cannot pause a rollout that is Paused');
    expect(twice.stderr).toContain('phase: Paused');
    const resume = await flotilla(['rollouts', 'resume', id!], as(operator));
    expect(resume.stdout).toBe(`rollout ${id} resume: phase Progressing\n`);
    const abort = await flotilla(['rollouts', 'abort', id!, '-o', 'json'], as(operator));
    expect(abort.code, abort.stderr).toBe(0);
    expect(JSON.parse(abort.stdout)).toMatchObject({ id, phase: 'Aborted' });

    // A finished rollout: watch prints its history and exits 1 because it did not succeed.
    const watched = await flotilla(['rollouts', 'watch', id!], as(operator));
    expect(watched.code).toBe(1);
    expect(watched.stdout).toContain('created by cli-operator');
    expect(watched.stderr).toContain(`rollout ${id} Aborted`);

    // A strategy file the hub refuses: the message names the field inside the strategy.
    const strategy = file('strategy.yaml', { waves: [{ name: 'canary', maxConcurrency: '150%' }] });
    const refused = await flotilla(['rollouts', 'start', 'web', '--strategy', strategy], as(operator));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('400 HUB_ERR_INVALID: the rollout strategy is invalid');
    expect(refused.stderr).toContain('strategy.waves[0].maxConcurrency');
    const both = await flotilla(
      ['rollouts', 'start', 'web', '--strategy', strategy, '--canary', 'cli-a'],
      as(operator),
    );
    expect(both.code).toBe(2);

    const list = await flotilla(['rollouts', 'list', 'web'], as(operator));
    expect(list.stdout).toMatch(new RegExp(`${id}\\s+Aborted\\s+1->2`));
  });

  it('rollouts watch follows a live rollout to Succeeded and exits 0; rollback --watch follows the rollback', async () => {
    const w0 = JSON.parse((await flotilla(['workloads', 'get', 'web', '-o', 'json'], as(operator))).stdout) as {
      id: string;
    };
    // The simulated agents report every object they were sent as healthy until the watch ends.
    let watching = true;
    const agents = (async (): Promise<void> => {
      while (watching) {
        await agentsReport(sim, w0.id, () => 'Healthy');
        await new Promise((r) => setTimeout(r, 300));
      }
    })();
    const started = await flotilla(['rollouts', 'start', 'web', '--canary', 'cli-a', '-o', 'json'], as(operator));
    expect(started.code, started.stderr).toBe(0);
    const { id } = JSON.parse(started.stdout) as { id: string };
    const watched = await flotilla(['rollouts', 'watch', id], as(operator));
    expect(watched.code, watched.stdout + watched.stderr).toBe(0);
    expect(watched.stderr).toContain(`rollout ${id} Succeeded`);
    expect(watched.stdout).toMatch(/canary\/cli-a/);
    expect(watched.stdout).toMatch(/main\/cli-b/);
    const w = await flotilla(['workloads', 'get', 'web', '-o', 'json'], as(operator));
    expect(JSON.parse(w.stdout)).toMatchObject({ revision: 2, stableRevision: 2 });

    // Rollback: a new rollout back to the previous revision, followed to its end with --watch.
    const back = await flotilla(['rollouts', 'rollback', id, '--watch'], as(operator));
    watching = false;
    await agents;
    expect(back.code, back.stdout + back.stderr).toBe(0);
    const backId = /^rollout (\S+) started: rollback to revision 1\n/.exec(back.stdout)?.[1];
    expect(backId).toBeDefined();
    expect(back.stdout).toMatch(/canary\/cli-a/);
    expect(back.stderr).toContain(`rollout ${backId} Succeeded`);
    const rolledBack = await flotilla(['workloads', 'get', 'web', '-o', 'json'], as(operator));
    expect(JSON.parse(rolledBack.stdout)).toMatchObject({ stableRevision: 1 });
  });

  it('tokens revoke by name: the token stops working', async () => {
    const revoke = await flotilla(['tokens', 'revoke', 'cli-operator'], as(t.adminToken));
    expect(revoke.code, revoke.stderr).toBe(0);
    expect(revoke.stdout).toMatch(/^token cli-operator \(\S+\) revoked\n$/);
    const after = await flotilla(['workloads', 'list'], as(operator));
    expect(after.code).toBe(1);
    expect(after.stderr).toContain('401 HUB_ERR_UNAUTHORIZED: the token is unknown or revoked');
  });
});

describe('dashboard on the real hub', () => {
  it('serves the page with its CSP without a token, while the data it reads still needs one', async () => {
    const root = await fetch(`${t.hub.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/ui/');
    for (const asset of ['', 'app.js', 'render.js', 'sse.js', 'style.css']) {
      const res = await fetch(`${t.hub.url}/ui/${asset}`);
      expect(res.status, asset).toBe(200);
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    for (const api of ['/api/v1/clusters', '/api/v1/workloads', '/api/v1/tokens']) {
      const res = await fetch(`${t.hub.url}${api}`);
      expect(res.status, api).toBe(401);
    }
    const wrongRole = await fetch(`${t.hub.url}/api/v1/tokens`, {
      headers: { authorization: `Bearer ${t.viewerToken}` },
    });
    expect(wrongRole.status).toBe(403);
  });
});
