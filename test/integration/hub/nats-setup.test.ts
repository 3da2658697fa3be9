/**
 * `flotilla-hub nats-setup --out DIR`, as an installer runs it (its own process, from the
 * sources): it writes the hub's four files, the nats-server fragment and the operator's identity
 * key apart (directory 0700, files 0600) and prints the kubectl commands but no secret. A real
 * 3-node TLS nats-server cluster runs with that fragment (included by a relative path, as the
 * printed steps say), a hub started with exactly those four files becomes ready, and an agent
 * registers, claims its credentials, connects and receives a workload. Running the command again
 * into the same directory is refused and changes nothing; an empty directory is taken, a file in
 * DIR's place refused.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
import { startNatsCluster, type NatsCluster } from '@flotilla/test';
import { eventually } from '../helpers/kube.js';
import { cloneSetSpec } from './fixtures.js';
import { connectAs, joinCluster, rest, startTestHub, type TestHub } from './fleet.js';
import { startSimAgent, type SimAgent } from './sim-agent.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const HUB_FILES = ['account-signing.nk', 'hub-system.creds', 'hub.creds', 'operator-signing.nk'];

let dir: string;
let out: string;
let stdout: string;
let nats: NatsCluster | undefined;
let hub: TestHub | undefined;
let nc: NatsConnection | undefined;
let sim: SimAgent | undefined;

/** Runs `flotilla-hub nats-setup …`; resolves with its exit code and output. */
async function natsSetup(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const argv = ['--conditions=@flotilla/source', '--import', 'tsx', 'hub/src/local/main.ts', 'nats-setup', ...args];
  try {
    const r = await promisify(execFile)(process.execPath, argv, { cwd: root, env: { PATH: process.env['PATH'] } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

const mode = (file: string): number => statSync(file).mode & 0o777;
const file = (rel: string): string => path.join(out, rel);

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'flotilla-nats-setup-'));
  out = path.join(dir, 'setup');
  const run = await natsSetup(['--out', out]);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  stdout = run.stdout;
});

afterAll(async () => {
  await sim?.stop();
  await nc?.close();
  await hub?.hub.close();
  await nats?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('flotilla-hub nats-setup', () => {
  it('writes the four hub files, the server fragment and the identity key apart, all private', () => {
    expect(readdirSync(out).sort()).toEqual(['hub', 'nats-server', 'offline']);
    expect(readdirSync(file('hub')).sort()).toEqual(HUB_FILES);
    expect(readdirSync(file('nats-server'))).toEqual(['flotilla-operator.conf']);
    expect(readdirSync(file('offline'))).toEqual(['operator-identity.nk']);
    for (const d of ['.', 'hub', 'nats-server', 'offline']) expect(mode(file(d)), d).toBe(0o700);
    const files = [
      ...HUB_FILES.map((f) => `hub/${f}`),
      'nats-server/flotilla-operator.conf',
      'offline/operator-identity.nk',
    ];
    for (const f of files) expect(mode(file(f)), f).toBe(0o600);
    expect(readFileSync(file('offline/operator-identity.nk'), 'utf8')).toMatch(/^SO[A-Z2-7]+\n$/);
  });

  it('prints both kubectl commands and no secret', () => {
    expect(stdout).toContain('kubectl -n flotilla create secret generic flotilla-nats-auth');
    for (const f of HUB_FILES) expect(stdout).toContain(`--from-file=${f}=${file(`hub/${f}`)}`);
    expect(stdout).toContain(
      `kubectl -n nats create secret generic flotilla-nats-operator \\\n    --from-file=flotilla-operator.conf=${file('nats-server/flotilla-operator.conf')}`,
    );
    expect(stdout).toContain(`Move ${file('offline/operator-identity.nk')} offline now`);
    const secrets = [...HUB_FILES.map((f) => `hub/${f}`), 'offline/operator-identity.nk'].flatMap((f) =>
      readFileSync(file(f), 'utf8')
        .split('\n')
        .filter((line) => /^(S[OAU]|eyJ)/.test(line)),
    );
    expect(secrets.length).toBeGreaterThanOrEqual(6);
    for (const s of secrets) expect(stdout).not.toContain(s);
  });

  it('a 3-node TLS cluster runs with the fragment; a hub with the four files gets ready; an agent joins', async () => {
    const fragment = readFileSync(file('nats-server/flotilla-operator.conf'), 'utf8');
    const defaultDir = 'dir: "/data/resolver"';
    expect(fragment).toContain(defaultDir);
    // As the printed steps say: each server's config includes the fragment by a relative path.
    // In Kubernetes every node mounts its own volume at /data; three processes on one machine
    // need a resolver folder each, so each node gets a copy with only that path changed.
    nats = await startNatsCluster({
      dir: path.join(dir, 'nats'),
      nodes: 3,
      renderAuth: (node) => {
        const copy = path.join(dir, 'fragments', node.name, 'flotilla-operator.conf');
        mkdirSync(path.dirname(copy), { recursive: true });
        writeFileSync(copy, fragment.replace(defaultDir, `dir: ${JSON.stringify(path.join(node.dir, 'jwt'))}`));
        return `include ${JSON.stringify(path.relative(node.dir, copy))}`;
      },
    });
    const hubEnv = {
      NATS_URL: nats.url,
      FLOTILLA_NATS_CA_FILE: nats.caFile,
      FLOTILLA_NATS_REPLICAS: '3',
      FLOTILLA_NATS_START_TIMEOUT_SECONDS: '60',
      FLOTILLA_NATS_CREDS_FILE: file('hub/hub.creds'),
      FLOTILLA_NATS_SYSTEM_CREDS_FILE: file('hub/hub-system.creds'),
      FLOTILLA_NATS_OPERATOR_SIGNING_KEY_FILE: file('hub/operator-signing.nk'),
      FLOTILLA_NATS_ACCOUNT_SIGNING_KEY_FILE: file('hub/account-signing.nk'),
    };
    hub = await startTestHub({ hubEnv });
    const t = hub;
    await eventually('the hub is ready', async () => {
      const res = await fetch(`${t.hub.url}/readyz`);
      return res.status === 200 ? true : undefined;
    });

    const creds = await joinCluster(t, 'setup-1', { setup: 'yes' });
    expect(creds.nats.servers).toEqual(nats.urls);
    nc = await connectAs(nats, creds);
    sim = await startSimAgent(nc, creds, { intervalMs: 500 });
    await rest(t, 'POST', '/api/v1/workloads', t.adminToken, {
      kind: 'CloneSet',
      name: 'web',
      namespace: 'apps',
      spec: cloneSetSpec(1),
      placement: { clusterSelector: { matchLabels: { setup: 'yes' } } },
    });
    const agent = sim;
    await eventually('the agent receives the workload', () => Promise.resolve(agent.desired.get('CloneSet/apps/web')));
  });

  it('refuses to write into the same directory again, and changes nothing there', async () => {
    const before = readFileSync(file('hub/operator-signing.nk'), 'utf8');
    const again = await natsSetup(['--out', out]);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toBe(
      `flotilla-hub: --out ${out} already exists and is not empty; nats-setup makes a new operator and never ` +
        'overwrites an earlier setup (servers and a hub may be using it): give a new directory\n',
    );
    expect(readFileSync(file('hub/operator-signing.nk'), 'utf8')).toBe(before);
    expect(readdirSync(dir).filter((name) => name.includes('partial'))).toEqual([]);
  });

  it('takes an empty existing directory (made 0700) and refuses a file in its place', async () => {
    const empty = path.join(dir, 'empty');
    mkdirSync(empty, { mode: 0o755 });
    chmodSync(empty, 0o755);
    expect((await natsSetup(['--out', empty])).code).toBe(0);
    expect(mode(empty)).toBe(0o700);
    expect(readdirSync(path.join(empty, 'hub')).sort()).toEqual(HUB_FILES);

    const plain = path.join(dir, 'plain');
    writeFileSync(plain, 'x');
    const refused = await natsSetup(['--out', plain]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`flotilla-hub: --out ${plain} exists and is not a directory\n`);
  });
});
