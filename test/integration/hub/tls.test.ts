/**
 * TLS on every hop, against real servers: the harness's 3-node NATS cluster refuses a plaintext
 * client and a node whose route certificate comes from another CA; a client (hub or agent) that
 * trusts another CA cannot connect, and says so (the hub names FLOTILLA_NATS_CA_FILE; the agent
 * logs, counts and turns not ready, also when a reconnect fails); the hub serves HTTPS that the CLI and the agent's
 * registration verify with their CA and refuse without it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Registry } from 'prom-client';
import {
  createCa,
  createNatsPki,
  freePort,
  hasTool,
  issueServingCert,
  readLogTail,
  renderNatsConfig,
  startProcess,
  toolPath,
  waitFor,
  type NatsPki,
} from '@flotilla/test';
import {
  createHubLinkMetrics,
  createLinkTlsHealth,
  hubFetch,
  isCertificateError,
  joinFleet,
  memoryCredentialStore,
  natsConnector,
  probeNatsTls,
} from '@flotilla/agent';
import { connect } from '@nats-io/transport-node';
import { get } from '../../env/src/http.js';
import { rest, startFleetNats, startTestHub, type FleetNats, type TestHub } from './fleet.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = path.join(ROOT, 'cli/dist/main.js');

let dir: string;
let nats: FleetNats;
let t: TestHub;
let foreign: NatsPki;
let hubCa: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'flotilla-tls-'));
  nats = await startFleetNats();
  foreign = await createNatsPki(path.join(dir, 'foreign'), 'foreign-ca');
  const ca = await createCa(path.join(dir, 'hub-pki'), 'flotilla-hub-test-ca');
  const cert = await issueServingCert(ca, 'hub', ['IP:127.0.0.1', 'DNS:localhost']);
  hubCa = ca.caCert;
  t = await startTestHub(nats, { env: { FLOTILLA_TLS_CERT_FILE: cert.cert, FLOTILLA_TLS_KEY_FILE: cert.key } });
});

afterAll(async () => {
  await t?.hub.close();
  await t?.db.close();
  await nats?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Speaks plaintext NATS to a TLS-only listener; resolves what the server sent before it closed. */
function plaintextSession(port: number): Promise<{ info: Record<string, unknown>; rest: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let sent = false;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (!sent && received.includes('\r\n')) {
        sent = true;
        socket.write('CONNECT {"verbose":false,"pedantic":false}\r\nPING\r\nSUB > 1\r\n');
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const [first = '', ...more] = received.split('\r\n');
      try {
        resolve({ info: JSON.parse(first.replace(/^INFO /, '')) as Record<string, unknown>, rest: more.join('\r\n') });
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  });
}

describe('nats-server', () => {
  it('refuses a plaintext client on every node: TLS is required, nothing is answered', async () => {
    for (const node of nats.cluster.nodes) {
      const session = await plaintextSession(node.port);
      expect(session.info['tls_required']).toBe(true);
      expect(session.rest).not.toContain('PONG');
    }
  });

  it('refuses a client that trusts another CA (the servers cannot prove who they are)', async () => {
    const err = await connect({
      servers: nats.cluster.urls,
      tls: { caFile: foreign.ca.caCert },
      maxReconnectAttempts: 0,
    })
      .then((nc) => nc.close())
      .catch((e: unknown) => e);
    expect(isCertificateError(err)).toBe(true);
  });

  it('refuses a route from a node whose certificate another CA signed', async () => {
    const nodeDir = path.join(dir, 'intruder');
    const monitorPort = await freePort();
    const config = renderNatsConfig({
      serverName: 'intruder',
      port: await freePort(),
      monitorPort,
      storeDir: path.join(nodeDir, 'js'),
      pki: foreign,
      users: [],
      cluster: { clusterName: nats.cluster.name, port: await freePort(), peers: [nats.cluster.nodes[0]!.clusterPort!] },
    });
    const configFile = path.join(dir, 'intruder.conf');
    writeFileSync(configFile, config);
    const intruder = startProcess({
      name: 'intruder',
      command: hasTool('nats-server') ? toolPath('nats-server') : '/usr/sbin/nats-server',
      args: ['-c', configFile],
      logFile: path.join(nodeDir, 'nats.log'),
    });
    try {
      // The intruder keeps dialling the first node; each attempt fails the TLS handshake there.
      const log = path.join(nats.cluster.nodes[0]!.dir, 'nats.log');
      const refused = (): Promise<boolean> => Promise.resolve(/route handshake error/i.test(readLogTail(log, 200)));
      await waitFor('route refusal', refused, {
        timeoutMs: 20_000,
        process: intruder,
      });
      const routez = await nats.cluster.nodes[0]!.monitor<{ routes: { remote_name?: string }[] }>('/routez');
      expect(routez.routes.map((r) => r.remote_name)).not.toContain('intruder');
      const own = await get(`https://127.0.0.1:${monitorPort}/routez`, { ca: foreign.ca.caPem });
      expect((JSON.parse(own.body) as { num_routes: number }).num_routes).toBe(0);
    } finally {
      await intruder.stop();
    }
  });
});

describe('the hub', () => {
  it('refuses to start against NATS servers its CA does not verify, naming FLOTILLA_NATS_CA_FILE', async () => {
    await expect(startTestHub(nats, { db: t.db, env: { FLOTILLA_NATS_CA_FILE: foreign.ca.caCert } })).rejects.toThrow(
      /FLOTILLA_NATS_CA_FILE .*does not verify|does not verify against FLOTILLA_NATS_CA_FILE/,
    );
  });

  it('serves HTTPS with its certificate', async () => {
    expect(t.hub.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const res = await get(`${t.hub.url}/healthz`, { ca: readFileSync(hubCa, 'utf8') });
    expect(res.status).toBe(200);
  });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function flotilla(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), FLOTILLA_HUB_URL: t.hub.url!, ...env },
        timeout: 60_000,
      },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('the CLI', () => {
  it('verifies the hub with --ca-file or FLOTILLA_CA_FILE, refuses it otherwise, and --insecure skips the check', async () => {
    const token = { FLOTILLA_TOKEN: t.viewerToken };
    const verified = await flotilla(['clusters', 'list', '-o', 'json', '--ca-file', hubCa], token);
    expect(verified.code, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toEqual(expect.any(Array));
    const fromEnv = await flotilla(['clusters', 'list'], { ...token, FLOTILLA_CA_FILE: hubCa });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);

    const unverified = await flotilla(['clusters', 'list'], token);
    expect(unverified.code).not.toBe(0);
    expect(unverified.stderr).toMatch(/cannot reach the hub at https:\/\/127\.0\.0\.1:\d+: \S*(CERT|VERIFY)/);
    const wrongCa = await flotilla(['clusters', 'list', '--ca-file', foreign.ca.caCert], token);
    expect(wrongCa.stderr).toMatch(/cannot reach the hub .*(CERT|VERIFY)/);

    const insecure = await flotilla(['clusters', 'list', '--insecure'], token);
    expect(insecure.code, insecure.stderr).toBe(0);
  });
});

describe("the agent's link", () => {
  const join = (name: string, caPem: string) =>
    joinFleet({
      hubUrl: t.hub.url!,
      bootstrapToken: t.bootstrapToken,
      clusterName: name,
      labels: {},
      agentVersion: 'test',
      kubernetesVersion: 'v1.36.0',
      store: memoryCredentialStore(),
      logger: pino({ level: 'silent' }),
      fetch: hubFetch({ caPem, insecure: false }),
      pollIntervalMs: 100,
    });

  it('tells why a (re)connect fails: a certificate that does not verify, or the network', async () => {
    for (const url of nats.cluster.urls) {
      expect(await probeNatsTls(url, nats.cluster.caPem)).toBeUndefined();
      expect(isCertificateError(await probeNatsTls(url, foreign.ca.caPem))).toBe(true);
    }
    const closed = await probeNatsTls(`tls://127.0.0.1:${await freePort()}`, nats.cluster.caPem);
    expect(closed).toMatchObject({ code: 'ECONNREFUSED' });
    expect(isCertificateError(closed)).toBe(false);
  });

  it('registers and claims over HTTPS verified with the hub CA', async () => {
    const joined = join('tls-a', readFileSync(hubCa, 'utf8'));
    // An operator accepts once the registration is there.
    for (let i = 0; ; i++) {
      try {
        await rest(t, 'POST', '/api/v1/clusters/tls-a/accept', t.operatorToken);
        break;
      } catch (err) {
        if (i > 100) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const creds = await joined;
    expect(creds.nats.servers).toEqual(nats.cluster.urls);
  });

  it('with the wrong CA for the hub or NATS: refused, logged, counted and not ready, and ready again once it verifies', async () => {
    const registry = new Registry();
    const lines: { msg?: string; peer?: string }[] = [];
    const logger = pino(
      { level: 'error' },
      { write: (l: string) => void lines.push(JSON.parse(l) as { msg?: string }) },
    );
    const health = createLinkTlsHealth({ logger, metrics: createHubLinkMetrics(registry) });

    const hubErr = await join('tls-b', foreign.ca.caPem).catch((e: unknown) => e);
    expect(health.observe('hub', hubErr)).toBe(true);
    const natsErr = await natsConnector(foreign.ca.caPem)
      .connect({ servers: nats.cluster.urls, maxReconnectAttempts: 0 })
      .then((nc) => nc.close())
      .catch((e: unknown) => e);
    expect(health.observe('nats', natsErr)).toBe(true);
    expect(health.ready()).toBe(false);
    expect(lines.map((l) => [l.peer, l.msg])).toEqual([
      ['hub', expect.stringContaining('--hub-ca-file (FLOTILLA_HUB_CA_FILE)')],
      ['nats', expect.stringContaining('--nats-ca-file (FLOTILLA_NATS_CA_FILE)')],
    ]);
    const failures = await registry.getSingleMetric('flotilla_agent_hublink_tls_failures_total')!.get();
    expect(failures.values.map((v) => [v.labels['peer'], v.value]).sort()).toEqual([
      ['hub', 1],
      ['nats', 1],
    ]);

    const nc = await natsConnector(nats.cluster.caPem)
      .connect({ servers: nats.cluster.urls, maxReconnectAttempts: 0 })
      .catch((e: unknown) => e);
    // The right CA gets past TLS (the server may still want credentials: that is not a TLS failure).
    expect(isCertificateError(nc)).toBe(false);
    if (nc && typeof (nc as { close?: unknown }).close === 'function') await (nc as { close(): Promise<void> }).close();
    health.observe('hub', undefined);
    health.observe('nats', undefined);
    expect(health.ready()).toBe(true);
  });
});
