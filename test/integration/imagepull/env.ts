/**
 * The image-pull suite's world, in cluster #0: two local registries (one behind htpasswd), fake
 * kwok Nodes named for this suite, each with its own containerd and its own `agent daemon`
 * process, and the NodeImage and ImagePullJob controllers running in-process, scoped by label to
 * this suite's Nodes and jobs so that other suites sharing the cluster are never touched.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1Node } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import { Registry as MetricsRegistry } from 'prom-client';
// One module graph for everything of the agent the suite uses: the controllers below are imported
// from their sources, and errors are matched with instanceof, so the runtime must be the same copy.
import {
  createKubeRest,
  EventRecorder,
  kubeEventSink,
  kubeListWatcher,
  Manager,
  RuntimeMetrics,
  type KubeRest,
} from '../../../agent/src/runtime/index.js';
import {
  fakeNode,
  freePort,
  startContainerd,
  startProcess,
  startRegistry,
  waitFor,
  type Containerd,
  type ManagedProcess,
  type Registry,
  type RegistryAuth,
} from '@flotilla/test';
// Not (yet) exported by @flotilla/agent: resolved to the referenced project's declarations by tsc.
import { registerImagePullJobController } from '../../../agent/src/controllers/imagepulljob/index.js';
import { registerNodeImageController } from '../../../agent/src/controllers/nodeimage/index.js';
import type { ClusterInfo } from '../helpers/context.js';
import { installCrds } from '../helpers/crds.js';
import { eventually, kube, type Kube } from '../helpers/kube.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export const NODE_LABEL = 'flotilla.test/imagepull-node';
export const JOB_LABEL = 'flotilla.test/imagepull-job';

export interface SuiteNode {
  name: string;
  containerd: Containerd;
  daemon: ManagedProcess;
}

export interface ImagePullEnv {
  k: Kube;
  rest: KubeRest;
  /** Short id of this run; in node names and labels. */
  suite: string;
  /** Labels a job needs so the suite's controllers see it. */
  jobLabels: Record<string, string>;
  /** Selector matching exactly the suite's nodes. */
  nodeLabels: Record<string, string>;
  registry: Registry;
  authRegistry: Registry;
  auth: RegistryAuth;
  /** The Nodes in the cluster, sorted by name (a, b). */
  nodes: SuiteNode[];
  /**
   * A node whose containerd and daemon run but whose Node object does not exist yet: the daemon
   * waits for its NodeImage, as a DaemonSet pod on a joining node would. Started up front because
   * a daemon takes seconds to start under tsx.
   */
  spare: SuiteNode;
  /** Creates the spare's Node object (the node joins) and waits for its NodeImage. */
  joinNode(node: SuiteNode): Promise<void>;
  /** Stops a node's daemon and containerd and deletes the Node. */
  removeNode(node: SuiteNode): Promise<void>;
  stop(): Promise<void>;
}

export interface ImagePullEnvOptions {
  cluster: ClusterInfo;
  /** Logs of the registries, containerds, daemons and controllers go below this. */
  dir: string;
  /** Log level of the in-process controllers; default info. */
  logLevel?: string;
  /** More `agent daemon` flags for every node's daemon. */
  daemonArgs?: string[];
}

export async function startImagePullEnv(opts: ImagePullEnvOptions): Promise<ImagePullEnv> {
  const c = opts.cluster;
  const k = kube(c);
  const rest = createKubeRest(k.kc);
  const suite = Math.random().toString(36).slice(2, 7);
  const dir = path.join(opts.dir, `imagepull-${suite}`);
  mkdirSync(dir, { recursive: true });
  const nodeLabels = { [NODE_LABEL]: suite };
  const jobLabels = { [JOB_LABEL]: suite };
  await installCrds(k);

  const auth = { username: 'puller', password: `pw-${suite}` };
  const registry = await startRegistry({ dir: path.join(dir, 'registry'), name: `registry-${suite}` });
  const authRegistry = await startRegistry({
    dir: path.join(dir, 'registry-auth'),
    name: `registry-auth-${suite}`,
    auth,
  });
  const logger = pino({ level: opts.logLevel ?? 'info' }, pino.destination(path.join(dir, 'manager.log')));
  const manager = startControllers(k, rest, logger, `${NODE_LABEL}=${suite}`, `${JOB_LABEL}=${suite}`);

  const nodes: SuiteNode[] = [];
  const prepareNode = async (suffix: string): Promise<SuiteNode> => {
    const name = `ip-${suite}-${suffix}`;
    const containerd = await startContainerd({
      name: `containerd-${name}`,
      registries: [registry.host, authRegistry.host],
      logFile: path.join(dir, `${name}-containerd.log`),
    });
    const daemon = await startDaemon(name, containerd.socket, c.kubeconfigPath, dir, opts.daemonArgs ?? []);
    return { name, containerd, daemon };
  };
  const joinNode = async (node: SuiteNode): Promise<void> => {
    await k.core.createNode({ body: suiteNode(node.name, nodeLabels) });
    await eventually(`NodeImage ${node.name}`, async () => Boolean(await getNodeImage(rest, node.name)), 30_000);
    nodes.push(node);
    nodes.sort((x, y) => x.name.localeCompare(y.name));
  };
  const removeNode = async (node: SuiteNode): Promise<void> => {
    if (nodes.includes(node)) nodes.splice(nodes.indexOf(node), 1);
    await node.daemon.stop();
    await k.core.deleteNode({ name: node.name }).catch(() => undefined);
    await node.containerd.stop();
  };
  const [a, b, spare] = await Promise.all([prepareNode('a'), prepareNode('b'), prepareNode('late')]);
  await Promise.all([joinNode(a), joinNode(b)]);
  let spareStopped = false;

  return {
    k,
    rest,
    suite,
    jobLabels,
    nodeLabels,
    registry,
    authRegistry,
    auth,
    nodes,
    spare: spare,
    joinNode,
    async removeNode(node) {
      if (node === spare) spareStopped = true;
      await removeNode(node);
    },
    async stop() {
      for (const node of [...nodes]) await removeNode(node);
      if (!spareStopped) await removeNode(spare);
      await manager.stop('suite over');
      for (const n of await k.core.listNode({ labelSelector: `${NODE_LABEL}=${suite}` }).then((l) => l.items)) {
        await k.core.deleteNode({ name: n.metadata!.name! }).catch(() => undefined);
      }
      await registry.stop();
      await authRegistry.stop();
    },
  };
}

/** The suite's controllers, with no NodeImage creation delay so new Nodes are usable at once. */
function startControllers(k: Kube, rest: KubeRest, logger: Logger, nodeSelector: string, jobSelector: string): Manager {
  const manager = new Manager({
    logger,
    metrics: new RuntimeMetrics(new MetricsRegistry()),
    listWatcherFor: (resource, options) => kubeListWatcher(k.kc, rest, resource, options),
    shutdownTimeoutMs: 5000,
  });
  const events = (component: string): EventRecorder =>
    new EventRecorder({
      sink: kubeEventSink(rest),
      component: `flotilla-agent/${component}`,
      instance: 'test',
      logger,
    });
  const scope = { nodeSelector, jobSelector };
  registerNodeImageController(manager, { rest, events: events('nodeimage'), options: { creationDelayMs: 0, scope } });
  registerImagePullJobController(manager, { rest, events: events('imagepulljob'), options: { scope } });
  manager.start().catch((err: unknown) => logger.error({ err }, 'suite manager failed'));
  return manager;
}

function suiteNode(name: string, labels: Record<string, string>): V1Node {
  const node = fakeNode(name, 0);
  node.metadata!.labels = { ...node.metadata!.labels, ...labels };
  return node;
}

/** `agent daemon` as a separate process per node, as the DaemonSet would run it. */
async function startDaemon(
  node: string,
  socket: string,
  kubeconfig: string,
  dir: string,
  extraArgs: string[],
): Promise<ManagedProcess> {
  const port = await freePort();
  const proc = startProcess({
    name: `daemon-${node}`,
    command: process.execPath,
    args: [
      '--conditions=@flotilla/source',
      '--import',
      'tsx',
      'agent/src/main.ts',
      'daemon',
      `--node=${node}`,
      `--kubeconfig=${kubeconfig}`,
      `--socket-file=${socket}`,
      '--health-host=127.0.0.1',
      `--health-port=${port}`,
      '--log-level=debug',
      ...extraArgs,
    ],
    cwd: root,
    logFile: path.join(dir, `${node}-daemon.log`),
  });
  await waitFor(proc.name, async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, {
    timeoutMs: 60_000,
    process: proc,
    what: 'daemon not ready',
  });
  return proc;
}

export async function getNodeImage(rest: KubeRest, name: string): Promise<NodeImageJson | undefined> {
  try {
    return await rest.request<NodeImageJson>({
      method: 'GET',
      path: `/apis/apps.kruise.io/v1alpha1/nodeimages/${name}`,
    });
  } catch (err) {
    if ((err as { status?: number }).status === 404) return undefined;
    throw err;
  }
}

/** NodeImage as the tests read it. */
export interface NodeImageJson {
  metadata: { name: string; labels?: Record<string, string>; resourceVersion?: string };
  spec: { images?: Record<string, { pullSecrets?: { namespace: string; name: string }[]; tags: TagSpecJson[] }> };
  status?: {
    desired: number;
    succeeded?: number;
    failed?: number;
    pulling?: number;
    waiting?: number;
    imageStatuses?: Record<string, { tags: TagStatusJson[] }>;
  };
}

export interface TagSpecJson {
  tag: string;
  version?: number;
  createdAt?: string;
  ownerReferences?: { name?: string; uid?: string }[];
  pullPolicy?: Record<string, number>;
  imagePullPolicy?: string;
}

export interface TagStatusJson {
  tag: string;
  phase: string;
  version?: number;
  progress?: number;
  imageID?: string;
  message?: string;
  startTime?: string;
  completionTime?: string;
}
