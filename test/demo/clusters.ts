/**
 * Where the demo's clusters come from. By default it starts its own (the harness's control planes
 * with kwok nodes). With FLOTILLA_DEMO_KUBECONFIGS=name=path,... it joins existing clusters that
 * other suites share (the integration run's, test/integration/demo): then FLOTILLA_DEMO_SCOPE=id
 * names everything of this run (namespaces `demo-<id>` and `demo-<id>-system`, the label
 * `flotilla.test/demo=<id>` the agents are scoped to, one fake Node per cluster for the node
 * daemon), and stop() removes what it made.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fakeNode, startEnvironment } from '@flotilla/test';
import { AdmissionregistrationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { KruiseResources } from '@flotilla/api';
import type { ClusterInfo } from '../integration/helpers/context.js';

export const SCOPE_KEY = 'flotilla.test/demo';

export interface DemoClusters {
  clusters: ClusterInfo[];
  /** Logs go below this. */
  dir: string;
  /** Namespace of the CloneSet and the ImagePullJob. */
  namespace: string;
  /** The agents' own namespace. */
  agentNamespace: string;
  /** Set on shared clusters: the run's id and its label (`key=value`). */
  shared?: { id: string; label: string };
  stop(): Promise<void>;
}

/** Starts `count` clusters, or joins the ones FLOTILLA_DEMO_KUBECONFIGS names. */
export async function demoClusters(count: number, dir: string, env: NodeJS.ProcessEnv): Promise<DemoClusters> {
  const given = env.FLOTILLA_DEMO_KUBECONFIGS;
  if (!given) {
    const names = Array.from({ length: count }, (_, i) => `cluster-${String.fromCharCode(97 + i)}`);
    const e = await startEnvironment({ clusters: names.map((name) => ({ name, nodes: 2 })), dir, keep: true });
    return {
      clusters: e.clusters,
      dir: e.dir,
      namespace: 'default',
      agentNamespace: 'flotilla-system',
      stop: () => e.stop(),
    };
  }
  const id = env.FLOTILLA_DEMO_SCOPE;
  if (!id || !/^[a-z0-9]{1,12}$/.test(id)) {
    throw new Error('FLOTILLA_DEMO_SCOPE must be 1-12 lowercase letters or digits with FLOTILLA_DEMO_KUBECONFIGS');
  }
  const clusters = given.split(',').map((entry) => joinCluster(entry, id));
  const label = `${SCOPE_KEY}=${id}`;
  await Promise.all(clusters.map((c) => createNode(c, c.nodeNames[0]!, id)));
  return {
    clusters,
    dir,
    namespace: `demo-${id}`,
    agentNamespace: `demo-${id}-system`,
    shared: { id, label },
    stop: () => Promise.all(clusters.map((c) => cleanUp(c, id))).then(() => undefined),
  };
}

function joinCluster(entry: string, id: string): ClusterInfo {
  const [name, file] = entry.split('=');
  if (!name || !file) throw new Error(`FLOTILLA_DEMO_KUBECONFIGS: "${entry}" is not name=path`);
  const kubeconfig = readFileSync(path.resolve(file), 'utf8');
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  return {
    name,
    server: kc.getCurrentCluster()?.server ?? '',
    kubeconfig,
    kubeconfigPath: path.resolve(file),
    nodeNames: [`demo-${id}-${name}`],
  };
}

function api(c: ClusterInfo): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(c.kubeconfig);
  return kc;
}

/** A kwok node of this run, carrying its label so only its agent's NodeImage controller sees it. */
async function createNode(c: ClusterInfo, name: string, id: string): Promise<void> {
  const node = fakeNode(name, 0);
  node.metadata!.labels = { ...node.metadata!.labels, [SCOPE_KEY]: id };
  await api(c).makeApiClient(CoreV1Api).createNode({ body: node });
}

/** Removes what the run left in a shared cluster: its webhook configurations, SidecarSet, Node, namespaces. */
async function cleanUp(c: ClusterInfo, id: string): Promise<void> {
  const kc = api(c);
  const core = kc.makeApiClient(CoreV1Api);
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const ignore = (): undefined => undefined;
  await admission.deleteMutatingWebhookConfiguration({ name: `flotilla-test-m-${id}` }).catch(ignore);
  await admission.deleteValidatingWebhookConfiguration({ name: `flotilla-test-v-${id}` }).catch(ignore);
  const { group, version, plural } = KruiseResources.SidecarSet;
  await custom.deleteClusterCustomObject({ group, version, plural, name: `log-agent-${id}` }).catch(ignore);
  for (const name of c.nodeNames) {
    await core.deleteNode({ name }).catch(ignore);
    const ni = KruiseResources.NodeImage;
    await custom.deleteClusterCustomObject({ ...ni, name }).catch(ignore);
  }
  await core.deleteNamespace({ name: `demo-${id}` }).catch(ignore);
  await core.deleteNamespace({ name: `demo-${id}-system` }).catch(ignore);
}
