/**
 * A whole local fleet around existing clusters, shared by the README's demo and the rollout e2e
 * suite: a harness NATS cluster in operator mode (the hub pushes the clusters' accounts), a fresh Postgres database,
 * the hub as its own process (so it can be killed like a real one), and one real `agent manager`
 * process per cluster that registers itself with the bootstrap token; the fleet accepts each
 * cluster as an operator would.
 *
 *   const fleet = await startFleet({ dir, env: process.env, namespace: 'demo',
 *                                    members: [{ name: 'a', kubeconfigPath, labels: { ring: '0' } }] });
 *   await fleet.api('POST', '/workloads', { ... });  …  await fleet.stop();
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Rollout } from '@flotilla/api';
import {
  caFetch,
  createCa,
  createTestDatabase,
  freePort,
  issueServingCert,
  startBalancer,
  startProcess,
  waitFor,
  type ManagedProcess,
  type TestDatabase,
} from '@flotilla/test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import pg from 'pg';
import type { ClusterInfo } from '../integration/helpers/context.js';
import { installCrds } from '../integration/hub/crds.js';
import { startFleetNats, type FleetNats } from '../integration/hub/fleet.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Workspace sources run directly: no build step between an edit and the demo or the suite. */
const TSX = ['--conditions=@flotilla/source', '--import', 'tsx'];

export interface FleetMember {
  /** The cluster's name in the fleet (a DNS label). */
  name: string;
  cluster: ClusterInfo;
  labels: Record<string, string>;
}

export interface FleetOptions {
  /** Logs of the hub and agents go here. */
  dir: string;
  /** Base environment of the child processes (the caller's process.env: PATH, HOME...). */
  env: NodeJS.ProcessEnv;
  members: FleetMember[];
  /**
   * The agents' own namespace (their join Secret), created in every cluster if missing. With
   * `scopeControllers` the agents' controllers also watch this namespace only.
   */
  namespace: string;
  /**
   * Run the agents' controllers in `namespace` only, for clusters that other suites share
   * (`agent manager` itself watches every namespace; see agent/main.ts).
   */
  scopeControllers?: boolean;
  /**
   * With `scopeControllers`: the namespace the controllers watch (default `namespace`), created
   * in every cluster with the `scopeLabel` label. The webhook never intercepts the agents' own
   * namespace, so pods that should get sidecars live here.
   */
  workloadNamespace?: string;
  /**
   * With `scopeControllers`, `key=value`: narrow every other component as well (the whole agent on
   * a shared cluster; test/fleet/agent/scoped.ts): SidecarSets, ImagePullJobs and Nodes with this
   * label, the webhook to namespaces and cluster-scoped objects with it.
   */
  scopeLabel?: string;
  /**
   * The clusters have the Kruise CRDs already: leave them alone. On clusters the integration run
   * shares, its suites install them with the conversion pointed at the run's server, which a
   * process outside vitest cannot know.
   */
  crdsInstalled?: boolean;
  /** Components every agent runs (FLOTILLA_COMPONENTS); default the CloneSet controller and the hub link. */
  components?: string;
  /**
   * Every agent serves its admission webhook in URL mode (the apiserver calls
   * https://127.0.0.1:<port of its own>), for `components` that include `webhook`. Off by default:
   * its configurations cover the whole cluster with failurePolicy Fail, so suites sharing a
   * cluster would depend on this agent staying up.
   */
  webhook?: boolean;
  /** Scheduler tick (FLOTILLA_ROLLOUT_TICK_MS); short in tests. */
  rolloutTickMs?: number;
  heartbeatTimeoutSeconds?: number;
  /** Log level of the hub and agents. */
  logLevel?: string;
  /** Hub processes behind the one address agents and callers use (default 1). */
  hubReplicas?: number;
}

/** One hub process and its own address (behind the fleet's one hub address). */
export interface HubReplica {
  process: ManagedProcess;
  url: string;
}

export interface Agent {
  member: FleetMember;
  process: ManagedProcess;
}

export interface Fleet {
  /** https://127.0.0.1:PORT: the one address in front of the hub replicas (a TCP balancer). */
  hubUrl(): string;
  /** The CA (PEM file) that verifies the hub's HTTPS certificate (curl --cacert, FLOTILLA_CA_FILE). */
  hubCaFile: string;
  /** fetch towards the hub, verifying it with that CA (for what api() does not cover: SSE). */
  hubFetch: typeof fetch;
  adminToken: string;
  bootstrapToken: string;
  database: TestDatabase;
  /** A pool on the hub's database, for assertions on what the hub committed. */
  pool: pg.Pool;
  nats: FleetNats;
  /** The first hub replica still running. */
  hub(): ManagedProcess;
  /** The hub replicas still running, each with its own address. */
  hubs(): HubReplica[];
  agents: Map<string, Agent>;
  /** Calls /api/v1 as admin; throws FleetApiError on a status ≥ 300. */
  api<T>(method: string, apiPath: string, body?: unknown): Promise<T>;
  /** Like api() but returns the status and parsed body instead of throwing. */
  call(method: string, apiPath: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  rollout(id: string): Promise<Rollout>;
  /** SIGKILLs the first hub replica (no shutdown at all), as a crashed node would. */
  killHub(): Promise<void>;
  /** SIGKILLs the replica that leads the rollout scheduler (its /metrics says so) and returns it. */
  killLeadingHub(): Promise<HubReplica>;
  /** Starts one more hub process on the same database and NATS, behind the same address. */
  restartHub(): Promise<void>;
  stop(): Promise<void>;
}

export class FleetApiError extends Error {
  readonly code = 'FLEET_ERR_API';
  constructor(
    message: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    super(message);
    this.name = 'FleetApiError';
  }
}

const secret = (prefix: string): string => `${prefix}-${crypto.randomUUID().replaceAll('-', '')}`;

/** Starts the hub and one agent per member, and accepts every member into the fleet. */
export async function startFleet(o: FleetOptions): Promise<Fleet> {
  mkdirSync(o.dir, { recursive: true });
  const cleanup: (() => Promise<unknown>)[] = [];
  const stopAll = async (): Promise<void> => {
    for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
  };
  try {
    // The Kruise CRDs and the agents' namespace, in every cluster, while the rest starts.
    const prepared = Promise.all(o.members.map((m) => prepareCluster(m.cluster, o)));
    prepared.catch(() => undefined); // awaited below; no unhandled rejection meanwhile
    const database = await createTestDatabase('flotilla_fleet');
    cleanup.push(() => database.drop());
    const pool = new pg.Pool({ connectionString: database.url, max: 3 });
    cleanup.push(() => pool.end());
    const nats = await startFleetNats();
    cleanup.push(() => nats.stop());
    // The hub serves HTTPS; the agents and the fleet's own calls verify it with this CA.
    const hubCa = await createCa(path.join(o.dir, 'hub-pki'), 'flotilla-hub-ca');
    const hubCert = await issueServingCert(hubCa, 'hub', ['IP:127.0.0.1', 'DNS:localhost']);
    const hubGet = caFetch(hubCa.caPem);
    const tls = { hubCaFile: hubCa.caCert, natsCaFile: nats.cluster.caFile };

    const adminToken = secret('flt-admin');
    const bootstrapToken = secret('flt-bootstrap');
    // Agents read the token from a file only their user can read: a command line is world-readable
    // in /proc/<pid>/cmdline.
    const bootstrapTokenFile = path.join(o.dir, 'bootstrap-token');
    writeFileSync(bootstrapTokenFile, `${bootstrapToken}\n`, { mode: 0o600 });
    chmodSync(bootstrapTokenFile, 0o600);
    const balancer = await startBalancer();
    cleanup.push(() => balancer.close());
    const hubUrl = `https://127.0.0.1:${balancer.port}`;
    const replicas: HubReplica[] = [];
    const running = (): HubReplica[] => replicas.filter((r) => !r.process.hasExited());
    const routeToRunning = (): void =>
      balancer.setBackends(running().map((r) => ({ host: '127.0.0.1', port: Number(new URL(r.url).port) })));
    let hubStarts = 0;
    /** Starts a hub process at once; `ready` settles when it answers /readyz. */
    const launchHub = async (): Promise<{ ready: Promise<void> }> => {
      const port = await freePort();
      hubStarts += 1;
      const proc = startProcess({
        name: 'hub',
        command: process.execPath,
        args: [...TSX, 'hub/src/main.ts'],
        cwd: ROOT,
        logFile: path.join(o.dir, hubStarts === 1 ? 'hub.log' : `hub-${hubStarts}.log`),
        env: {
          ...o.env,
          DATABASE_URL: database.url,
          ...nats.hubEnv,
          FLOTILLA_TLS_CERT_FILE: hubCert.cert,
          FLOTILLA_TLS_KEY_FILE: hubCert.key,
          FLOTILLA_HUB_HOST: '127.0.0.1',
          FLOTILLA_HUB_PORT: String(port),
          FLOTILLA_ADMIN_TOKEN: adminToken,
          FLOTILLA_BOOTSTRAP_TOKEN: bootstrapToken,
          FLOTILLA_RELAY_INTERVAL_MS: '100',
          FLOTILLA_ROLLOUT_TICK_MS: String(o.rolloutTickMs ?? 1000),
          FLOTILLA_HEARTBEAT_TIMEOUT_SECONDS: String(o.heartbeatTimeoutSeconds ?? 30),
          LOG_LEVEL: o.logLevel ?? 'info',
        },
      });
      const replica = { process: proc, url: `https://127.0.0.1:${port}` };
      replicas.push(replica);
      cleanup.push(() => proc.stop());
      routeToRunning();
      const ready = waitFor('hub', async () => (await hubGet(`${replica.url}/readyz`)).status === 200, {
        timeoutMs: 120_000,
        process: proc,
      });
      return { ready };
    };
    const restartHub = async (): Promise<void> => {
      await (
        await launchHub()
      ).ready;
    };
    /** SIGKILL, then the balancer stops offering the dead replica. */
    const kill = async (replica: HubReplica): Promise<void> => {
      process.kill(replica.process.pid, 'SIGKILL');
      await replica.process.exited;
      routeToRunning();
    };
    const leads = async (replica: HubReplica): Promise<boolean> => {
      const res = await hubGet(`${replica.url}/metrics`);
      return /^flotilla_hub_scheduler_leader 1$/m.test(await res.text());
    };
    // Agents load while the hub starts (both take seconds of CPU); they retry joining until it answers.
    const launched = await Promise.all(Array.from({ length: o.hubReplicas ?? 1 }, () => launchHub()));
    const hubReady = Promise.all(launched.map((l) => l.ready));
    hubReady.catch(() => undefined); // awaited below

    const call = async (
      method: string,
      apiPath: string,
      body?: unknown,
    ): Promise<{ status: number; body: unknown }> => {
      const res = await hubGet(`${hubUrl}/api/v1${apiPath}`, {
        method,
        headers: {
          authorization: `Bearer ${adminToken}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
    };
    const api = async <T>(method: string, apiPath: string, body?: unknown): Promise<T> => {
      const res = await call(method, apiPath, body);
      if (res.status >= 300) {
        throw new FleetApiError(
          `${method} ${apiPath}: HTTP ${res.status} ${JSON.stringify(res.body)}`,
          res.status,
          res.body,
        );
      }
      return res.body as T;
    };

    // The controllers look for the CRDs when they start: clusters first, then agents.
    await prepared;
    const agents = new Map<string, Agent>();
    // All agents stop together (each may take its shutdown timeout).
    cleanup.push(() => Promise.all([...agents.values()].map((a) => a.process.stop())));
    for (const member of o.members) {
      const proc = await startAgent(o, member, { hubUrl, bootstrapTokenFile, ...tls });
      agents.set(member.name, { member, process: proc });
    }
    await hubReady;
    // Double opt-in: each agent registered itself with the bootstrap token; an operator accepts.
    await Promise.all(
      o.members.map((m) =>
        waitFor(`agent ${m.name}`, async () => (await call('POST', `/clusters/${m.name}/accept`)).status === 200, {
          timeoutMs: 90_000,
          intervalMs: 250,
          process: agents.get(m.name)!.process,
          what: 'never registered',
        }),
      ),
    );
    // Online = credentials claimed, NATS connected and a heartbeat stored.
    await Promise.all(
      o.members.map((m) =>
        waitFor(
          `agent ${m.name}`,
          async () => (await api<{ health: string }>('GET', `/clusters/${m.name}`)).health === 'Online',
          { timeoutMs: 90_000, intervalMs: 250, process: agents.get(m.name)!.process, what: 'never came online' },
        ),
      ),
    );

    return {
      hubUrl: () => hubUrl,
      hubCaFile: hubCa.caCert,
      hubFetch: hubGet,
      adminToken,
      bootstrapToken,
      database,
      pool,
      nats,
      hub: () => running()[0]!.process,
      hubs: running,
      agents,
      api,
      call,
      rollout: (id) => api<Rollout>('GET', `/rollouts/${id}`),
      killHub: () => kill(running()[0]!),
      async killLeadingHub() {
        let leader: HubReplica | undefined;
        const find = async (): Promise<boolean> => {
          for (const r of running()) if (await leads(r)) leader = r;
          return leader !== undefined;
        };
        await waitFor('hub', find, { timeoutMs: 30_000, what: 'no replica leads the rollout scheduler' });
        await kill(leader!);
        return leader!;
      },
      restartHub,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** Where an agent finds the hub, its bootstrap token, and the CAs of the hub and of NATS. */
interface AgentLink {
  hubUrl: string;
  bootstrapTokenFile: string;
  hubCaFile: string;
  natsCaFile: string;
}

async function startAgent(o: FleetOptions, m: FleetMember, link: AgentLink): Promise<ManagedProcess> {
  const labels = Object.entries(m.labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const entry = o.scopeControllers
    ? ['test/fleet/agent/main.ts', o.workloadNamespace ?? o.namespace]
    : ['agent/src/main.ts'];
  return startProcess({
    name: `agent ${m.name}`,
    command: process.execPath,
    args: [
      ...TSX,
      ...entry,
      'manager',
      `--kubeconfig=${m.cluster.kubeconfigPath}`,
      `--cluster-name=${m.name}`,
      `--hub-url=${link.hubUrl}`,
      `--hub-ca-file=${link.hubCaFile}`,
      `--nats-ca-file=${link.natsCaFile}`,
      `--bootstrap-token-file=${link.bootstrapTokenFile}`,
      `--cluster-labels=${labels}`,
      `--namespace=${o.namespace}`,
      // One agent per cluster: a Lease would only slow down restarts in the tests.
      '--no-leader-elect',
      '--shutdown-timeout=3s',
      '--health-host=127.0.0.1',
      `--health-port=${await freePort()}`,
      ...(o.webhook ? await webhookFlags() : []),
    ],
    cwd: ROOT,
    logFile: path.join(o.dir, `agent-${m.name}.log`),
    env: {
      ...o.env,
      // By default no webhook: it registers a cluster-wide pod webhook with failurePolicy Fail, and
      // other suites on the same clusters would depend on this agent staying up.
      FLOTILLA_COMPONENTS: o.components ?? 'cloneset,hublink',
      FLOTILLA_LOG_LEVEL: o.logLevel ?? 'info',
      ...(o.scopeControllers && o.scopeLabel ? { FLOTILLA_TEST_SCOPE_LABEL: o.scopeLabel } : {}),
    },
  });
}

/** URL mode on loopback: the cluster's apiserver runs on this machine and calls the agent there. */
async function webhookFlags(): Promise<string[]> {
  const port = await freePort();
  return ['--webhook-host=127.0.0.1', `--webhook-port=${port}`, `--webhook-url=https://127.0.0.1:${port}`];
}

async function prepareCluster(cluster: ClusterInfo, o: FleetOptions): Promise<void> {
  if (!o.crdsInstalled) await installCrds(cluster);
  const kc = new KubeConfig();
  kc.loadFromString(cluster.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const [key, value] = o.scopeLabel?.split('=') ?? [];
  const namespaces = [{ name: o.namespace, labels: {} }];
  if (o.workloadNamespace && o.workloadNamespace !== o.namespace) {
    namespaces.push({ name: o.workloadNamespace, labels: key && value ? { [key]: value } : {} });
  }
  for (const metadata of namespaces) {
    try {
      await core.createNamespace({ body: { metadata } });
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
    }
  }
}
