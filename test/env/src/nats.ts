/**
 * nats-server for tests: one node or a cluster of N, always TLS. The client listener requires TLS
 * (there is no plaintext listener), the monitor serves HTTPS, and routes between nodes are
 * mutual TLS, all from one harness CA (nats-pki.ts). Each node can be stopped, killed (SIGKILL),
 * frozen (SIGSTOP) and started again on the same ports and store, for chaos tests.
 *
 *   const nats = await startNatsCluster({ dir });          // 3 nodes, JetStream clustered
 *   const nc = await connect({ servers: nats.urls, tls: nats.tls });
 *   await nats.nodes[0]!.kill(); … await nats.nodes[0]!.start();
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { get } from './http.js';
import { createNatsPki, type NatsPki } from './nats-pki.js';
import { freePort } from './ports.js';
import { startProcess, waitFor, type ManagedProcess } from './process.js';
import { hasTool, toolPath } from './tools.js';

export interface NatsPermissions {
  publish?: { allow?: string[]; deny?: string[] };
  subscribe?: { allow?: string[]; deny?: string[] };
}

export interface NatsUser {
  user: string;
  password: string;
  permissions?: NatsPermissions;
}

/** Renders a node's authentication block (operator, resolver...), given the node's own folder. */
export type NatsAuthRenderer = (node: { name: string; dir: string }) => string;

export interface NatsOptions {
  dir: string;
  /** Static users (an `authorization` block); none means anyone with the CA may connect. */
  users?: NatsUser[];
  /** Replaces `users` with whatever it renders, per node (operator mode and its resolver). */
  renderAuth?: NatsAuthRenderer;
  name?: string;
  /** Fixed client port (single node only); a free one is picked when absent. */
  port?: number;
  /** nats-server's max_payload in bytes (default 2 MB). */
  maxPayload?: number;
  /** Certificates to use; created in `<dir>/pki` when absent. */
  pki?: NatsPki;
}

export interface NatsClusterOptions extends Omit<NatsOptions, 'port'> {
  /** How many nodes (default 3). */
  nodes?: number;
}

/** What a TLS client needs to trust the servers (nats.js `tls` option). */
export interface NatsClientTls {
  caFile: string;
}

export interface NatsNode {
  /** server_name, also the name stream leaders are reported by. */
  name: string;
  /** tls://127.0.0.1:<port> */
  url: string;
  port: number;
  clusterPort: number | undefined;
  /** https://127.0.0.1:<port> (the CA in the cluster's `caPem` verifies it). */
  monitorUrl: string;
  configFile: string;
  dir: string;
  /** The current process (replaced by start()). */
  process: ManagedProcess;
  /** SIGTERM (after SIGCONT, should it be frozen); waits for the exit. */
  stop(): Promise<void>;
  /** SIGKILL, as a crash; waits for the exit. */
  kill(): Promise<void>;
  /** Starts it again on the same ports and store; resolves once it answers its health check. */
  start(): Promise<void>;
  /** stop(), then start(). */
  restart(): Promise<void>;
  /** SIGSTOP: the process holds its sockets but answers nothing. */
  pause(): void;
  /** SIGCONT */
  resume(): void;
  /** GETs a monitor endpoint (e.g. `/jsz?streams=true`) and parses its JSON. */
  monitor<T = unknown>(pathAndQuery: string): Promise<T>;
}

interface NatsTlsSide {
  urls: string[];
  caFile: string;
  caPem: string;
  pki: NatsPki;
  tls: NatsClientTls;
}

/** A single nats-server: one node plus what a client needs. */
export type NatsServer = NatsNode & NatsTlsSide;

export interface NatsCluster extends NatsTlsSide {
  name: string;
  nodes: NatsNode[];
  /** Every node's URL joined by commas (NATS_URL for the hub). */
  url: string;
  stop(): Promise<void>;
  /** Stops every node, then starts them all again on the same ports and stores. */
  restart(): Promise<void>;
  /** Freezes (SIGSTOP) or thaws (SIGCONT) every node. */
  pause(): void;
  resume(): void;
  /** The node a running node names as the leader of a stream's raft group (in `account`, else any). */
  streamLeader(stream: string, account?: string): Promise<NatsNode>;
  /** Waits until every running node reports a healthy JetStream (meta leader, streams current). */
  waitHealthy(timeoutMs?: number): Promise<void>;
}

// NATS config strings are JSON-compatible, so JSON.stringify quotes them safely.
const q = (s: string): string => JSON.stringify(s);

function renderPermissions(p: NatsPermissions): string {
  const side = (s?: { allow?: string[]; deny?: string[] }): string =>
    `{ allow: [${(s?.allow ?? []).map(q).join(', ')}], deny: [${(s?.deny ?? []).map(q).join(', ')}] }`;
  return `{ publish: ${side(p.publish)}, subscribe: ${side(p.subscribe)} }`;
}

function renderUsers(users: NatsUser[]): string[] {
  if (users.length === 0) return [];
  const rows = users.map(
    (u) =>
      `    { user: ${q(u.user)}, password: ${q(u.password)}${u.permissions ? `, permissions: ${renderPermissions(u.permissions)}` : ''} }`,
  );
  return ['authorization {', '  users: [', rows.join(',\n'), '  ]', '}'];
}

function tlsBlock(cert: { cert: string; key: string }, caFile: string, verify: boolean): string {
  return `tls { cert_file: ${q(cert.cert)}, key_file: ${q(cert.key)}, ca_file: ${q(caFile)}, verify: ${verify}, timeout: 5 }`;
}

/** One node's place in a cluster: its route port and the other nodes' route ports. */
export interface NatsRouteConfig {
  clusterName: string;
  port: number;
  peers: number[];
}

export interface NatsNodeConfig {
  serverName: string;
  port: number;
  monitorPort: number;
  storeDir: string;
  pki: NatsPki;
  users: NatsUser[];
  /** The rendered authentication block; replaces `users` when given. */
  auth?: string;
  cluster?: NatsRouteConfig;
  maxPayload?: number;
}

/**
 * Renders a node's config: TLS-only client listener and HTTPS monitor on loopback, JetStream,
 * routes (mutual TLS) when in a cluster, and the authentication block.
 */
export function renderNatsConfig(o: NatsNodeConfig): string {
  const lines = [
    `server_name: ${q(o.serverName)}`,
    `listen: "127.0.0.1:${o.port}"`,
    `https: "127.0.0.1:${o.monitorPort}"`,
    tlsBlock(o.pki.server, o.pki.ca.caCert, false),
    `jetstream { store_dir: ${q(o.storeDir)}, max_memory_store: 256MB, max_file_store: 2GB }`,
    // Room for the hub's largest desired message (its 1 MiB body limit plus the envelope); the
    // server's default of 1 MB is below it.
    `max_payload: ${o.maxPayload ?? '2MB'}`,
  ];
  if (o.cluster) {
    const routes = o.cluster.peers.map((p) => q(`nats-route://127.0.0.1:${p}`)).join(', ');
    lines.push(
      'cluster {',
      `  name: ${q(o.cluster.clusterName)}`,
      `  listen: "127.0.0.1:${o.cluster.port}"`,
      `  routes: [${routes}]`,
      `  ${tlsBlock(o.pki.route, o.pki.ca.caCert, true)}`,
      '}',
    );
  }
  lines.push(...(o.auth !== undefined ? [o.auth] : renderUsers(o.users)));
  return lines.join('\n') + '\n';
}

const natsCommand = (): string => (hasTool('nats-server') ? toolPath('nats-server') : '/usr/sbin/nats-server');

interface NodePlan {
  name: string;
  dir: string;
  port: number;
  monitorPort: number;
  clusterPort: number | undefined;
  config: string;
}

/** Writes the node's config and returns the node, not yet started. */
function createNode(plan: NodePlan, caPem: string): NatsNode {
  mkdirSync(plan.dir, { recursive: true });
  const configFile = path.join(plan.dir, 'nats.conf');
  writeFileSync(configFile, plan.config, { mode: 0o600 });
  const monitorUrl = `https://127.0.0.1:${plan.monitorPort}`;
  let paused = false;
  const launch = async (): Promise<ManagedProcess> => {
    const proc = startProcess({
      name: plan.name,
      command: natsCommand(),
      args: ['-c', configFile],
      logFile: path.join(plan.dir, 'nats.log'),
    });
    const healthy = async (): Promise<boolean> =>
      (await get(`${monitorUrl}/healthz?js-enabled-only=true`, { ca: caPem })).status === 200;
    await waitFor(plan.name, healthy, { timeoutMs: 30_000, process: proc });
    return proc;
  };
  const node: NatsNode = {
    name: plan.name,
    url: `tls://127.0.0.1:${plan.port}`,
    port: plan.port,
    clusterPort: plan.clusterPort,
    monitorUrl,
    configFile,
    dir: plan.dir,
    process: undefined as unknown as ManagedProcess,
    async stop() {
      if (paused) node.resume();
      await node.process.stop();
    },
    async kill() {
      if (!node.process.hasExited()) process.kill(node.process.pid, 'SIGKILL');
      paused = false;
      await node.process.exited;
    },
    async start() {
      node.process = await launch();
    },
    async restart() {
      await node.stop();
      await node.start();
    },
    pause() {
      process.kill(node.process.pid, 'SIGSTOP');
      paused = true;
    },
    resume() {
      process.kill(node.process.pid, 'SIGCONT');
      paused = false;
    },
    async monitor<T>(pathAndQuery: string): Promise<T> {
      const res = await get(`${monitorUrl}${pathAndQuery}`, { ca: caPem });
      if (res.status !== 200) throw new Error(`${plan.name} ${pathAndQuery}: HTTP ${res.status}`);
      return JSON.parse(res.body) as T;
    },
  };
  return node;
}

function tlsSide(pki: NatsPki, urls: string[]): NatsTlsSide {
  return { urls, caFile: pki.ca.caCert, caPem: pki.ca.caPem, pki, tls: { caFile: pki.ca.caCert } };
}

/** Starts a JetStream-enabled nats-server with TLS on free loopback ports. */
export async function startNats(opts: NatsOptions): Promise<NatsServer> {
  const name = opts.name ?? 'nats-server';
  mkdirSync(opts.dir, { recursive: true });
  const pki = opts.pki ?? (await createNatsPki(path.join(opts.dir, 'pki')));
  const [port, monitorPort] = [opts.port ?? (await freePort()), await freePort()];
  const config = renderNatsConfig({
    serverName: name,
    port,
    monitorPort,
    storeDir: path.join(opts.dir, 'js'),
    pki,
    users: opts.users ?? [],
    ...(opts.renderAuth ? { auth: opts.renderAuth({ name, dir: opts.dir }) } : {}),
    ...(opts.maxPayload !== undefined ? { maxPayload: opts.maxPayload } : {}),
  });
  const node = createNode({ name, dir: opts.dir, port, monitorPort, clusterPort: undefined, config }, pki.ca.caPem);
  await node.start();
  return Object.assign(node, tlsSide(pki, [node.url]));
}

interface JszStreams {
  account_details?: {
    name: string;
    stream_detail?: { name: string; cluster?: { leader?: string } }[];
  }[];
}

/** Plans N nodes: free ports for clients, monitors and routes, and each node's config. */
async function planCluster(opts: NatsClusterOptions, pki: NatsPki, clusterName: string): Promise<NodePlan[]> {
  const count = opts.nodes ?? 3;
  const ports: { port: number; monitorPort: number; clusterPort: number }[] = [];
  for (let i = 0; i < count; i++) {
    ports.push({ port: await freePort(), monitorPort: await freePort(), clusterPort: await freePort() });
  }
  return ports.map((p, i) => {
    const name = `${clusterName}-${i + 1}`;
    const dir = path.join(opts.dir, name);
    const config = renderNatsConfig({
      serverName: name,
      port: p.port,
      monitorPort: p.monitorPort,
      storeDir: path.join(dir, 'js'),
      pki,
      users: opts.users ?? [],
      // One node is a plain server: JetStream refuses to cluster without routes.
      ...(count > 1
        ? {
            cluster: {
              clusterName,
              port: p.clusterPort,
              peers: ports.filter((_, j) => j !== i).map((o) => o.clusterPort),
            },
          }
        : {}),
      ...(opts.renderAuth ? { auth: opts.renderAuth({ name, dir }) } : {}),
      ...(opts.maxPayload !== undefined ? { maxPayload: opts.maxPayload } : {}),
    });
    return { name, dir, ...p, config };
  });
}

/**
 * Starts N nats-server nodes (default 3) as one cluster: routes on loopback over mutual TLS,
 * JetStream clustered. Resolves once every node is up and JetStream has a meta leader.
 */
export async function startNatsCluster(opts: NatsClusterOptions): Promise<NatsCluster> {
  const clusterName = opts.name ?? 'nats';
  mkdirSync(opts.dir, { recursive: true });
  const pki = opts.pki ?? (await createNatsPki(path.join(opts.dir, 'pki')));
  const nodes = (await planCluster(opts, pki, clusterName)).map((plan) => createNode(plan, pki.ca.caPem));
  const urls = nodes.map((n) => n.url);
  const running = (): NatsNode[] => nodes.filter((n) => !n.process.hasExited());
  const cluster: NatsCluster = {
    name: clusterName,
    nodes,
    url: urls.join(','),
    ...tlsSide(pki, urls),
    async stop() {
      await Promise.all(nodes.map((n) => n.stop()));
    },
    async restart() {
      await cluster.stop();
      await Promise.all(nodes.map((n) => n.start()));
      await cluster.waitHealthy();
    },
    pause: () => running().forEach((n) => n.pause()),
    resume: () => running().forEach((n) => n.resume()),
    async streamLeader(stream, account) {
      for (const n of running()) {
        const jsz = await n.monitor<JszStreams>('/jsz?accounts=true&streams=true');
        const accounts = (jsz.account_details ?? []).filter((a) => account === undefined || a.name === account);
        const streams = accounts.flatMap((a) => a.stream_detail ?? []);
        const leader = streams.find((s) => s.name === stream)?.cluster?.leader;
        const node = nodes.find((x) => x.name === leader);
        if (node) return node;
      }
      throw new Error(`no running node reports a leader for stream ${stream}`);
    },
    async waitHealthy(timeoutMs = 30_000) {
      for (const n of running()) {
        const healthy = async (): Promise<boolean> =>
          (await get(`${n.monitorUrl}/healthz`, { ca: pki.ca.caPem })).status === 200;
        await waitFor(n.name, healthy, { timeoutMs, process: n.process, what: 'JetStream not healthy' });
      }
    },
  };
  try {
    // Together: a clustered JetStream waits for its peers before it reports itself enabled.
    await Promise.all(nodes.map((n) => n.start()));
    await cluster.waitHealthy();
  } catch (err) {
    await Promise.all(nodes.filter((n) => n.process !== undefined).map((n) => n.stop()));
    throw err;
  }
  return cluster;
}
