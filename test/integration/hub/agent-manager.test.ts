/**
 * Real `agent manager` processes against a real hub: the agent registers with its bootstrap
 * token, waits for an operator, claims its NATS credentials into the join Secret and applies what
 * the hub places on its cluster. Two replicas share the Lease: only the leader talks to the hub,
 * and on a handover the new leader resumes from the join Secret (the hub never hands out
 * credentials twice). Objects the hub manages that are changed or deleted behind its back are
 * put back.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstream } from '@nats-io/jetstream';
import { desiredSubject } from '@flotilla/api';
import { freePort } from '@flotilla/test';
import type { ClusterInfo } from '../helpers/context.js';
import { cluster } from '../helpers/context.js';
import { customResource, eventually, kube, mergePatch, testNamespace, type Kube } from '../helpers/kube.js';
import { startAgentProcess, type AgentProcess } from './agent-process.js';
import { installCrds } from './crds.js';
import { cloneSetSpec } from './fixtures.js';
import { rest, startFleetNats, startTestHub, type FleetNats, type TestHub } from './fleet.js';

const GROUP = customResource('CloneSet');

interface CloneSetLike {
  spec: { replicas: number };
  metadata: { uid: string; labels: Record<string, string>; annotations: Record<string, string> };
}

let nats: FleetNats;
let t: TestHub;
let info: ClusterInfo;
let k: Kube;
let ns = '';
const suffix = Math.random().toString(36).slice(2, 6);
const clusterName = `proc-${suffix}`;
const agents: AgentProcess[] = [];
const healthPorts = new Map<AgentProcess, number>();
let cloneSetController: ChildProcess | undefined;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * The CloneSet controller, scoped to the suite's namespace (the cloneset suite's fixture): the
 * agent processes run no controllers, since those act cluster-wide on a shared cluster.
 */
function startCloneSetController(): ChildProcess {
  const fixture = path.join(root, 'test/integration/cloneset/fixtures/controller-process.ts');
  return spawn(
    process.execPath,
    ['--conditions=@flotilla/source', '--import', 'tsx', fixture, info.kubeconfigPath, ns, `hubproc-${suffix}`],
    { cwd: root, stdio: ['ignore', 'ignore', 'ignore'] },
  );
}

async function metric(proc: AgentProcess, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${healthPorts.get(proc)}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(name))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
}

function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 180_000): Promise<T> {
  return eventually(what, fn, timeoutMs, 250);
}

async function getCloneSet(name: string): Promise<CloneSetLike | undefined> {
  try {
    return (await k.custom.getNamespacedCustomObject({ ...GROUP, namespace: ns, name })) as CloneSetLike;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

async function startReplica(identity: string, extraArgs: string[] = []): Promise<AgentProcess> {
  const port = await freePort();
  const proc = startAgentProcess(
    [
      `--kubeconfig=${info.kubeconfigPath}`,
      `--cluster-name=${clusterName}`,
      `--identity=${identity}`,
      '--health-host=127.0.0.1',
      `--health-port=${port}`,
      `--namespace=${ns}`,
      '--lease-duration=3s',
      '--renew-deadline=2s',
      '--retry-period=500ms',
      '--shutdown-timeout=10s',
      `--hub-url=${t.hub.url}`,
      // The suite's hub serves plain HTTP on loopback; NATS is TLS from the harness CA.
      '--insecure=true',
      `--nats-ca-file=${nats.cluster.caFile}`,
      `--cluster-labels=suite=${clusterName},tier=web`,
      ...extraArgs,
    ],
    // The token comes through the environment, as the chart passes it from a Secret.
    { FLOTILLA_BOOTSTRAP_TOKEN: t.bootstrapToken, FLOTILLA_LOG_LEVEL: 'debug' },
  );
  agents.push(proc);
  healthPorts.set(proc, port);
  return proc;
}

beforeAll(async () => {
  info = cluster(0);
  k = kube(info);
  await installCrds(info);
  nats = await startFleetNats();
  t = await startTestHub(nats);
  ns = await testNamespace(k, 'hubproc');
  cloneSetController = startCloneSetController();
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  // Each agent's output, for a failed run.
  agents.forEach((a, i) => writeFileSync(path.join(os.tmpdir(), `flotilla-hubproc-${suffix}-${i}.log`), a.output()));
  cloneSetController?.kill('SIGTERM');
  await k?.core.deleteNamespace({ name: ns }).catch(() => undefined);
  await t?.hub.close();
  await t?.db.close();
  await nats?.stop();
});

// Agent processes start slowly on a loaded machine (tsx compiles the sources in each).
describe('agent manager with --hub-url', { timeout: 360_000 }, () => {
  let workloadId = '';
  let leader: AgentProcess;
  let standby: AgentProcess;

  it('joins the fleet once accepted and applies the CloneSet placed on its cluster', async () => {
    const a = await startReplica('proc-a');
    const b = await startReplica('proc-b');
    const registered = await until('the cluster registers', async () => {
      const res = await t.hub.app.inject({
        method: 'GET',
        url: `/api/v1/clusters/${clusterName}`,
        headers: { authorization: `Bearer ${t.viewerToken}` },
      });
      return res.statusCode === 200 && res.json<{ state: string; labels: Record<string, string> }>();
    });
    expect(registered).toMatchObject({ state: 'pending', labels: { suite: clusterName, tier: 'web' } });
    await rest(t, 'POST', `/api/v1/clusters/${clusterName}/accept`, t.operatorToken);

    const created = await rest<{ id: string }>(t, 'POST', '/api/v1/workloads', t.operatorToken, {
      kind: 'CloneSet',
      name: 'web',
      namespace: ns,
      spec: cloneSetSpec(2),
      placement: { clusterSelector: { matchLabels: { suite: clusterName } } },
    });
    workloadId = created.id;
    const cs = await until('CloneSet applied by the agent', () => getCloneSet('web'));
    expect(cs.spec.replicas).toBe(2);
    expect(cs.metadata.labels['flotilla.io/managed-by']).toBe('hub');
    expect(cs.metadata.annotations['flotilla.io/workload']).toBe(workloadId);

    // Only the Lease holder runs the hub link.
    const holder = await until('one replica started the hub link', () =>
      Promise.resolve([a, b].find((p) => p.messages().includes('hub link started'))),
    );
    leader = holder;
    standby = holder === a ? b : a;
    expect(standby.messages()).not.toContain('joining the fleet');

    const status = await until('status reported to the hub', async () => {
      const s = await rest<{ items: { cluster: string; reportedRevision: number | null }[] }>(
        t,
        'GET',
        `/api/v1/workloads/${workloadId}/status`,
        t.viewerToken,
      );
      return s.items.find((r) => r.cluster === clusterName && r.reportedRevision === 1);
    });
    expect(status.cluster).toBe(clusterName);
    // Pods run in the cluster, and the hub sees the CloneSet's counts.
    const ready = await until('both pods ready, as the hub reports', async () => {
      const st = await rest<{ items: { cluster: string; counts: { readyReplicas: number } | null }[] }>(
        t,
        'GET',
        `/api/v1/workloads/${workloadId}/status`,
        t.viewerToken,
      );
      const row = st.items.find((r) => r.cluster === clusterName);
      return row?.counts?.readyReplicas === 2 && row;
    });
    expect(ready.counts?.readyReplicas).toBe(2);
    const pods = await k.core.listNamespacedPod({ namespace: ns });
    expect(
      pods.items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')),
    ).toHaveLength(2);
    const c = await until('heartbeat', async () => {
      const row = await rest<{ health: string; agentVersion: string | null }>(
        t,
        'GET',
        `/api/v1/clusters/${clusterName}`,
        t.viewerToken,
      );
      return row.health === 'Online' && row.agentVersion ? row : undefined;
    });
    expect(c.agentVersion).toBe('0.1.0');

    const secret = await k.core.readNamespacedSecret({ name: 'flotilla-agent-join', namespace: ns });
    expect(Object.keys(secret.data ?? {}).sort()).toEqual(['credentials', 'registrationSecret', 'seed']);
  });

  it('puts back a managed object changed or deleted behind the hub', async () => {
    const before = (await getCloneSet('web'))!;
    await k.custom.patchNamespacedCustomObject(
      { ...GROUP, namespace: ns, name: 'web', body: { spec: { replicas: 7 } } },
      mergePatch,
    );
    await until('replicas restored', async () => (await getCloneSet('web'))?.spec.replicas === 2);
    await k.custom.deleteNamespacedCustomObject({ ...GROUP, namespace: ns, name: 'web' });
    const recreated = await until('CloneSet re-created', async () => {
      const cs = await getCloneSet('web');
      return cs && cs.metadata.uid !== before.metadata.uid ? cs : undefined;
    });
    expect(recreated.spec.replicas).toBe(2);
    expect(recreated.metadata.labels['flotilla.io/managed-by']).toBe('hub');
  });

  it('drops a malformed desired message, counts it, and keeps applying', async () => {
    const nc = await nats.connectAsHub();
    try {
      const js = jetstream(nc, { checkAPI: false });
      const subject = desiredSubject(clusterName, { kind: 'CloneSet', namespace: ns, name: 'junk' });
      await js.publish(subject, new TextEncoder().encode('{not json'));
      await js.publish(subject.replace('junk', 'junk2'), new TextEncoder().encode('{"v":1,"cluster":"x"}'));
    } finally {
      await nc.close();
    }
    await until('both dropped and counted', async () => {
      const json = await metric(leader, 'flotilla_agent_hublink_messages_dropped_total{reason="json"}');
      const schema = await metric(leader, 'flotilla_agent_hublink_messages_dropped_total{reason="schema"}');
      return json >= 1 && schema >= 1;
    });
    expect(await getCloneSet('junk')).toBeUndefined();
    expect(leader.child.exitCode).toBeNull();
  });

  it('hands over to the standby, which resumes from the join Secret', async () => {
    expect(await leader.stop()).toBe(0);
    expect(leader.messages()).toEqual(expect.arrayContaining(['hub link stopped', 'agent manager stopped']));
    await until('the standby runs the hub link', () =>
      Promise.resolve(standby.messages().includes('hub link started')),
    );
    // The new leader knows what to guard although it applied nothing yet: the hub republished the
    // cluster's desired objects when the new link's first heartbeat came in.
    const before = (await getCloneSet('web'))!;
    await k.custom.deleteNamespacedCustomObject({ ...GROUP, namespace: ns, name: 'web' });
    await until('the new leader re-creates the deleted CloneSet', async () => {
      const cs = await getCloneSet('web');
      return cs && cs.metadata.uid !== before.metadata.uid;
    });
    await rest(t, 'PUT', `/api/v1/workloads/${workloadId}`, t.operatorToken, {
      spec: cloneSetSpec(4),
      placement: { clusterSelector: { matchLabels: { suite: clusterName } } },
    });
    await until('the new leader applies the update', async () => (await getCloneSet('web'))?.spec.replicas === 4);
    // The standby never registered: it read the claimed credentials from the Secret.
    expect(standby.messages()).not.toContain('registered with the hub; waiting for an operator to accept');
  });

  it('keeps the bootstrap token, its NATS key and JWT out of its logs, and the key out of the hub', async () => {
    const secret = await k.core.readNamespacedSecret({ name: 'flotilla-agent-join', namespace: ns });
    const creds = JSON.parse(Buffer.from(secret.data!['credentials']!, 'base64').toString()) as {
      nats: { jwt: string };
    };
    const seed = Buffer.from(secret.data!['seed']!, 'base64').toString();
    expect(seed).toMatch(/^SU/);
    for (const a of agents) {
      expect(a.output()).not.toContain(t.bootstrapToken);
      expect(a.output()).not.toContain(seed);
      expect(a.output()).not.toContain(creds.nats.jwt);
    }
    const row = await t.db.pool.query('select * from clusters where name = $1', [clusterName]);
    expect(JSON.stringify(row.rows)).not.toContain(seed);
  });

  it('a restarted agent without a token reconnects with the stored credentials', async () => {
    await standby.stop();
    const again = startAgentProcess(
      [
        `--kubeconfig=${info.kubeconfigPath}`,
        `--cluster-name=${clusterName}`,
        '--identity=proc-c',
        '--health-host=127.0.0.1',
        `--health-port=${await freePort()}`,
        `--namespace=${ns}`,
        '--no-leader-elect',
        `--hub-url=${t.hub.url}`,
        '--insecure=true',
        `--nats-ca-file=${nats.cluster.caFile}`,
      ],
      { FLOTILLA_LOG_LEVEL: 'info' },
    );
    agents.push(again);
    await until('hub link started without a token', () =>
      Promise.resolve(again.messages().includes('hub link started')),
    );
    await rest(t, 'DELETE', `/api/v1/workloads/${workloadId}`, t.operatorToken);
    await until('the CloneSet is pruned', async () => (await getCloneSet('web')) === undefined);
    expect(await again.stop()).toBe(0);
  });

  it('exits 2 naming a bad hub option', async () => {
    const proc = startAgentProcess([
      `--kubeconfig=${info.kubeconfigPath}`,
      '--cluster-name=x',
      '--hub-url=ftp://nowhere',
      '--cluster-labels=a b',
    ]);
    expect(await proc.exit).toBe(2);
    expect(proc.output()).toContain('--hub-url (FLOTILLA_HUB_URL): must be an http(s) URL');
    expect(proc.output()).toContain('--cluster-labels (FLOTILLA_CLUSTER_LABELS): "a b" is not a label key=value');
  });
});
