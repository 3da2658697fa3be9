/**
 * The agent's link rides out credential and certificate faults (issue 21, item 5), with real
 * `agent manager` processes against a real hub and 3-node NATS cluster: a short credential TTL
 * (FLOTILLA_AGENT_CREDENTIAL_TTL_SECONDS) makes the agent renew its JWT several times while it
 * keeps applying desired state; an agent down longer than the TTL renews its expired JWT and
 * resumes; a key an operator revoked makes it not ready with the reason, counted, while the
 * process stays up; a NATS CA that does not verify the servers does the same with a TLS reason,
 * at the first connect and on a reconnect that meets a server the CA does not verify.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createNatsPki,
  freePort,
  hasTool,
  renderNatsConfig,
  startProcess,
  toolPath,
  type NatsPki,
} from '@flotilla/test';
import { cluster, type ClusterInfo } from '../helpers/context.js';
import { customResource, eventually, kube, testNamespace, type Kube } from '../helpers/kube.js';
import type { AgentProcess } from './agent-process.js';
import { installCrds } from './crds.js';
import { cloneSetSpec } from './fixtures.js';
import { rest, startFleetNats, startTestHub, type FleetNats, type TestHub } from './fleet.js';
import { acceptWhenRegistered, startLinkedAgent } from './linked-agent.js';

const GROUP = customResource('CloneSet');
/**
 * Renewal at 2/3: every 20 s; the servers cut a connection when its JWT expires (the hub's
 * minimum: faster reconnects would leave a dead pull request ahead of the live one all the time).
 */
const TTL_SECONDS = 30;

let nats: FleetNats;
let t: TestHub;
let info: ClusterInfo;
let k: Kube;
let ns = '';
let dir = '';
let foreign: NatsPki;
const suffix = Math.random().toString(36).slice(2, 6);
const agents: AgentProcess[] = [];
const healthPorts = new Map<AgentProcess, number>();

function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> {
  return eventually(what, fn, timeoutMs, 250);
}

async function metric(proc: AgentProcess, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${healthPorts.get(proc)}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(name))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
}

async function probe(proc: AgentProcess, what: '/readyz' | '/healthz'): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${healthPorts.get(proc)}${what}`);
  return { status: res.status, body: await res.text() };
}

async function startAgent(name: string, extraArgs: string[] = []): Promise<AgentProcess> {
  const { proc, healthPort } = await startLinkedAgent({ hub: t, cluster: info, namespace: ns, name, extraArgs });
  agents.push(proc);
  healthPorts.set(proc, healthPort);
  return proc;
}

const accept = (name: string): Promise<void> => acceptWhenRegistered(t, name);

async function replicasOf(name: string): Promise<number | undefined> {
  try {
    const cs = (await k.custom.getNamespacedCustomObject({ ...GROUP, namespace: ns, name })) as {
      spec: { replicas: number };
    };
    return cs.spec.replicas;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

beforeAll(async () => {
  info = cluster(0);
  k = kube(info);
  await installCrds(info);
  dir = mkdtempSync(path.join(os.tmpdir(), 'flotilla-link-faults-'));
  foreign = await createNatsPki(path.join(dir, 'foreign'), 'foreign-ca');
  nats = await startFleetNats();
  t = await startTestHub(nats, { env: { FLOTILLA_AGENT_CREDENTIAL_TTL_SECONDS: String(TTL_SECONDS) } });
  ns = await testNamespace(k, 'linkfault');
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  agents.forEach((a, i) => writeFileSync(path.join(os.tmpdir(), `flotilla-linkfault-${suffix}-${i}.log`), a.output()));
  await k?.core.deleteNamespace({ name: ns }).catch(() => undefined);
  await t?.hub.close();
  await t?.db.close();
  await nats?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the agent link with short-lived credentials', { timeout: 360_000 }, () => {
  const name = `ttl-${suffix}`;
  let agent: AgentProcess;
  let workloadId = '';
  const place = (replicas: number) => ({
    spec: cloneSetSpec(replicas),
    placement: { clusterSelector: { matchLabels: { suite: name } } },
  });

  it('renews its JWT several times and keeps receiving desired state', async () => {
    agent = await startAgent(name, [`--nats-ca-file=${nats.cluster.caFile}`]);
    await accept(name);
    const created = await rest<{ id: string }>(t, 'POST', '/api/v1/workloads', t.operatorToken, {
      kind: 'CloneSet',
      name: 'web',
      namespace: ns,
      ...place(2),
    });
    workloadId = created.id;
    await until('the CloneSet is applied', async () => (await replicasOf('web')) === 2);

    const renewed = 'flotilla_agent_hublink_credential_renewals_total{result="renewed"}';
    await until('three renewals', async () => (await metric(agent, renewed)) >= 3, 180_000);
    // The servers cut the connection whose JWT ran out; the agent came back with the renewed one.
    expect(agent.messages()).toContain('NATS connection');
    await rest(t, 'PUT', `/api/v1/workloads/${workloadId}`, t.operatorToken, place(3));
    await until('the update is applied after the renewals', async () => (await replicasOf('web')) === 3);
    expect(await probe(agent, '/readyz')).toEqual({ status: 200, body: 'ok\n' });
    expect(await metric(agent, 'flotilla_agent_hublink_credential_renewals_total{result="refused"}')).toBe(0);
    expect(await metric(agent, 'flotilla_agent_hublink_tls_failures_total')).toBe(0);
  });

  it('an agent down longer than the TTL renews its expired JWT and resumes', async () => {
    expect(await agent.stop()).toBe(0);
    const secret = await k.core.readNamespacedSecret({ name: `join-${name}`, namespace: ns });
    const stored = JSON.parse(Buffer.from(secret.data!['credentials']!, 'base64').toString()) as {
      nats: { expiresAt: string };
    };
    await until(
      'the stored JWT expired',
      () => Promise.resolve(Date.now() > Date.parse(stored.nats.expiresAt) + 1000),
      2 * TTL_SECONDS * 1000,
    );
    await rest(t, 'PUT', `/api/v1/workloads/${workloadId}`, t.operatorToken, place(4));
    agent = await startAgent(name, [`--nats-ca-file=${nats.cluster.caFile}`]);
    await until('the update made while it was down is applied', async () => (await replicasOf('web')) === 4);
    expect(await metric(agent, 'flotilla_agent_hublink_credential_renewals_total{result="renewed"}')).toBeGreaterThan(
      0,
    );
    expect(agent.messages()).toContain('hub link started');
  });

  it('a key revoked by an operator: not ready with the reason, counted, and the process keeps running', async () => {
    await rest(t, 'POST', `/api/v1/clusters/${name}/credentials/revoke`, t.adminToken);
    const refused = 'flotilla_agent_hublink_credential_renewals_total{result="refused"}';
    await until('the agent reports the refusal', async () => (await metric(agent, refused)) >= 1, 60_000);
    const ready = await probe(agent, '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toContain("[-]hublink-credentials failed: the hub refused this cluster's key");
    expect(agent.messages().filter((m) => m.includes("the hub refused this cluster's key"))).toHaveLength(1);
    // Still up a while later: retrying with backoff, alive, never a crash loop.
    await new Promise((r) => setTimeout(r, 10_000));
    expect(agent.child.exitCode).toBeNull();
    expect((await probe(agent, '/healthz')).status).toBe(200);
    expect((await probe(agent, '/readyz')).status).toBe(503);
    // And it shuts down cleanly although its connection can never come back.
    expect(await agent.stop()).toBe(0);
  });
});

describe('the agent link with a NATS CA that does not verify the servers', { timeout: 240_000 }, () => {
  it('is not ready with a TLS reason, counts each attempt and keeps running', async () => {
    const name = `ca-${suffix}`;
    const agent = await startAgent(name, [`--nats-ca-file=${foreign.ca.caCert}`]);
    await accept(name);
    await until(
      'two refused TLS handshakes counted',
      async () => (await metric(agent, 'flotilla_agent_hublink_tls_failures_total{peer="nats"}')) >= 2,
    );
    const ready = await probe(agent, '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toContain("[-]hublink-tls failed: the NATS servers' certificate does not verify");
    expect(ready.body).toContain('--nats-ca-file');
    expect(agent.messages()).toContain(
      "the NATS servers' certificate does not verify: check --nats-ca-file (FLOTILLA_NATS_CA_FILE) and the servers' certificates",
    );
    expect(agent.messages()).not.toContain('hub link started');
    expect(agent.child.exitCode).toBeNull();
    expect((await probe(agent, '/healthz')).status).toBe(200);
    expect(await agent.stop()).toBe(0);
  });
});

describe('the agent link reconnecting to a server its CA does not verify', { timeout: 300_000 }, () => {
  it('is not ready with a TLS reason while it lasts, and ready again once the servers verify', async () => {
    const name = `rot-${suffix}`;
    const agent = await startAgent(name, [`--nats-ca-file=${nats.cluster.caFile}`]);
    await accept(name);
    await until('the link is up', () => Promise.resolve(agent.messages().includes('hub link started')));
    expect((await probe(agent, '/readyz')).status).toBe(200);

    // Every node goes away; an impostor with another CA's certificate answers on the first one's port.
    const first = nats.cluster.nodes[0]!;
    await Promise.all(nats.cluster.nodes.map((n) => n.stop()));
    const configFile = path.join(dir, 'impostor.conf');
    writeFileSync(
      configFile,
      renderNatsConfig({
        serverName: 'impostor',
        port: first.port,
        monitorPort: await freePort(),
        storeDir: path.join(dir, 'impostor', 'js'),
        pki: foreign,
        users: [],
      }),
    );
    const impostor = startProcess({
      name: 'impostor',
      command: hasTool('nats-server') ? toolPath('nats-server') : '/usr/sbin/nats-server',
      args: ['-c', configFile],
      logFile: path.join(dir, 'impostor', 'nats.log'),
    });
    try {
      const ready = await until('not ready: the reconnect meets a certificate that does not verify', async () => {
        const r = await probe(agent, '/readyz');
        return r.status === 503 && r.body.includes('[-]hublink-tls failed') && r;
      });
      expect(ready.body).toContain("the NATS servers' certificate does not verify: check --nats-ca-file");
      expect(await metric(agent, 'flotilla_agent_hublink_tls_failures_total{peer="nats"}')).toBeGreaterThanOrEqual(1);
      expect(agent.child.exitCode).toBeNull();
    } finally {
      await impostor.stop();
    }
    await Promise.all(nats.cluster.nodes.map((n) => n.start()));
    await until('ready again once the servers verify', async () => (await probe(agent, '/readyz')).status === 200);
    expect(await agent.stop()).toBe(0);
  });
});
