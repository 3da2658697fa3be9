/**
 * The agents' node daemon on a local fleet, as the chart's DaemonSet runs it: one local registry
 * for the fleet's images, and per fake (kwok) node its own containerd and its own `agent daemon`
 * process, which pulls what the node's NodeImage asks for and reports it back. Needs
 * /usr/bin/containerd and /usr/bin/docker-registry (scripts/setup.sh installs both);
 * `missingNodeDaemonTools()` says which is absent so a caller can skip the daemons cleanly.
 *
 *   const d = await startNodeDaemons({ dir, clusters });
 *   await pushTinyImage(d.registry, { repository: 'web', tag: '1.1' });  …  await d.stop();
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  freePort,
  startContainerd,
  startProcess,
  startRegistry,
  waitFor,
  type Containerd,
  type ManagedProcess,
  type Registry,
} from '@flotilla/test';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TOOLS = ['/usr/bin/containerd', '/usr/bin/docker-registry'];

export interface DaemonCluster {
  name: string;
  kubeconfigPath: string;
  nodeNames: string[];
}

export interface NodeDaemons {
  /** The fleet's registry; image references start with `registry.host`. */
  registry: Registry;
  /** Nodes with a daemon, per cluster. */
  nodes: Map<string, string[]>;
  /** The containerd of one node, to see what it really pulled. */
  containerd(cluster: string, node: string): Containerd;
  stop(): Promise<void>;
}

/** The first tool the daemons need that this machine lacks, or undefined when all are there. */
export function missingNodeDaemonTools(): string | undefined {
  return TOOLS.find((t) => !existsSync(t));
}

interface NodeProcesses {
  containerd: Containerd;
  daemon?: ManagedProcess;
}

/** Starts the registry, then a containerd and a daemon per node; resolves once every daemon is ready. */
export async function startNodeDaemons(o: { dir: string; clusters: DaemonCluster[] }): Promise<NodeDaemons> {
  mkdirSync(o.dir, { recursive: true });
  const registry = await startRegistry({ dir: path.join(o.dir, 'registry'), name: 'fleet-registry' });
  const started: NodeProcesses[] = [];
  const byNode = new Map<string, Containerd>();
  const stop = async (): Promise<void> => {
    await Promise.all(started.map(async (n) => n.daemon?.stop().catch(() => undefined)));
    await Promise.all(started.map((n) => n.containerd.stop().catch(() => undefined)));
    await registry.stop();
  };
  try {
    const startNode = async (c: DaemonCluster, node: string): Promise<void> => {
      const containerd = await startContainerd({
        name: `containerd-${c.name}-${node}`,
        registries: [registry.host],
        logFile: path.join(o.dir, `${c.name}-${node}-containerd.log`),
      });
      const entry: NodeProcesses = { containerd };
      started.push(entry);
      byNode.set(`${c.name}/${node}`, containerd);
      entry.daemon = await startDaemon(o.dir, c, node, containerd.socket);
    };
    await Promise.all(o.clusters.flatMap((c) => c.nodeNames.map((n) => startNode(c, n))));
    const containerd = (cluster: string, node: string): Containerd => {
      const found = byNode.get(`${cluster}/${node}`);
      if (!found) throw new Error(`no node daemon on ${cluster}/${node}`);
      return found;
    };
    return { registry, nodes: new Map(o.clusters.map((c) => [c.name, c.nodeNames])), containerd, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** `agent daemon` for one node, as the DaemonSet's pod on that node would run it. */
async function startDaemon(dir: string, c: DaemonCluster, node: string, socket: string): Promise<ManagedProcess> {
  const port = await freePort();
  const proc = startProcess({
    name: `daemon ${c.name}/${node}`,
    command: process.execPath,
    args: [
      '--conditions=@flotilla/source',
      '--import',
      'tsx',
      'agent/src/main.ts',
      'daemon',
      `--node=${node}`,
      `--kubeconfig=${c.kubeconfigPath}`,
      `--socket-file=${socket}`,
      '--health-host=127.0.0.1',
      `--health-port=${port}`,
    ],
    cwd: ROOT,
    logFile: path.join(dir, `${c.name}-${node}-daemon.log`),
  });
  await waitFor(proc.name, async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, {
    timeoutMs: 120_000,
    process: proc,
    what: 'daemon not ready',
  });
  return proc;
}
