import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig, type V1Node } from '@kubernetes/client-node';
import { startEtcd, type Etcd } from './etcd.js';
import { get } from './http.js';
import { renderKubeconfig } from './kubeconfig.js';
import { createPki, type Pki } from './pki.js';
import { freePort } from './ports.js';
import { readRssBytes } from './memory.js';
import { startProcess, waitFor, type ManagedProcess } from './process.js';
import { toolPath } from './tools.js';

/** The stages live beside the sources; the compiled harness (test/dist/...) finds them too. */
function findStagesFile(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    for (const candidate of [path.join(dir, 'kwok', 'stages.yaml'), path.join(dir, 'env', 'kwok', 'stages.yaml')]) {
      if (existsSync(candidate)) return candidate;
    }
    dir = path.dirname(dir);
  }
  throw new Error('test/env/kwok/stages.yaml not found');
}

/** The annotation kwok selects its nodes by; pods are played only on such nodes. */
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

export interface ClusterOptions {
  name: string;
  /** Number of kwok nodes, spread over zones zone-a, zone-b, zone-c. */
  nodes: number;
  /** Shared run state; when absent the cluster brings its own CA and etcd and stops them too. */
  shared?: { pki: Pki; etcd: Etcd; dir: string };
  /** Extra kube-apiserver flags, e.g. feature gates. */
  apiserverArgs?: string[];
  /** Extra environment of the kube-apiserver, e.g. Go runtime settings (GOGC, GOMAXPROCS) a bench varies. */
  apiserverEnv?: Record<string, string>;
}

export interface Cluster {
  name: string;
  /** https://127.0.0.1:PORT */
  server: string;
  /** Admin kubeconfig YAML (system:masters token, CA inline). */
  kubeconfig: string;
  kubeconfigPath: string;
  token: string;
  caPem: string;
  dir: string;
  nodeNames: string[];
  processes: ManagedProcess[];
  kubeConfig(): KubeConfig;
  /** Resident memory of this cluster's processes (apiserver, KCM, scheduler, kwok). */
  memoryBytes(): number;
  stop(): Promise<void>;
}

function apiserverArgs(o: {
  name: string;
  port: number;
  etcd: string;
  pki: Pki;
  dir: string;
  extra: string[];
}): string[] {
  const { pki } = o;
  return [
    `--etcd-servers=${o.etcd}`,
    `--etcd-prefix=/${o.name}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${o.port}`,
    `--cert-dir=${path.join(o.dir, 'certs')}`,
    `--tls-cert-file=${pki.serverCert}`,
    `--tls-private-key-file=${pki.serverKey}`,
    `--client-ca-file=${pki.caCert}`,
    `--token-auth-file=${pki.tokensCsv}`,
    '--authorization-mode=Node,RBAC',
    '--service-account-issuer=https://kubernetes.default.svc',
    `--service-account-key-file=${pki.saPub}`,
    `--service-account-signing-key-file=${pki.saKey}`,
    '--service-cluster-ip-range=10.0.0.0/24',
    '--allow-privileged=true',
    '--profiling=false',
    // Every apiserver compacts the shared etcd; once per run is enough.
    '--etcd-compaction-interval=0',
    ...o.extra,
  ];
}

function controllerManagerArgs(kubeconfigPath: string, port: number, pki: Pki): string[] {
  return [
    `--kubeconfig=${kubeconfigPath}`,
    `--authentication-kubeconfig=${kubeconfigPath}`,
    `--authorization-kubeconfig=${kubeconfigPath}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    '--leader-elect=false',
    `--service-account-private-key-file=${pki.saKey}`,
    `--root-ca-file=${pki.caCert}`,
    '--use-service-account-credentials=true',
    '--profiling=false',
  ];
}

function schedulerArgs(kubeconfigPath: string, port: number): string[] {
  return [
    `--kubeconfig=${kubeconfigPath}`,
    `--authentication-kubeconfig=${kubeconfigPath}`,
    `--authorization-kubeconfig=${kubeconfigPath}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    '--leader-elect=false',
    '--profiling=false',
  ];
}

function kwokConfig(): string {
  // Standalone kwok leaves these at 0 when a config file is given; 0 refuses to start.
  const head = [
    'apiVersion: config.kwok.x-k8s.io/v1alpha1',
    'kind: KwokConfiguration',
    'options:',
    '  podPlayStageParallelism: 16',
    '  nodePlayStageParallelism: 4',
    '  nodeLeaseParallelism: 4',
    '  podsOnNodeSyncParallelism: 2',
    '  enablePodsOnNodeSyncListPager: true',
    '  enablePodsOnNodeSyncStreamWatch: false',
  ].join('\n');
  return `${head}\n---\n${readFileSync(findStagesFile(), 'utf8')}`;
}

/** A fake node kwok manages; zones rotate so topology spread has something to spread over. */
export function fakeNode(name: string, index: number): V1Node {
  const zone = `zone-${'abc'[index % 3]}`;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { [KWOK_NODE_ANNOTATION]: 'fake' },
      labels: {
        type: 'kwok',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'topology.kubernetes.io/zone': zone,
      },
    },
    status: {
      allocatable: { cpu: '32', memory: '256Gi', pods: '110' },
      capacity: { cpu: '32', memory: '256Gi', pods: '110' },
    },
  };
}

async function waitNodesReady(name: string, core: CoreV1Api, nodeNames: string[], kwok: ManagedProcess): Promise<void> {
  await waitFor(
    `${name}/kwok`,
    async () => {
      const nodes = await core.listNode();
      const ready = nodes.items.filter((n) =>
        n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      return nodeNames.every((n) => ready.some((r) => r.metadata?.name === n));
    },
    { timeoutMs: 60_000, process: kwok, what: `nodes ${nodeNames.join(',')} not Ready` },
  );
}

/**
 * Starts an isolated Kubernetes control plane: kube-apiserver (TLS, token auth, RBAC) on its own
 * etcd prefix, kube-controller-manager, kube-scheduler and kwok managing `nodes` fake nodes.
 * On any failure everything started so far is stopped and the error names the component.
 */
export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const ownDir = opts.shared ? undefined : mkdtempDir(`flotilla-${opts.name}-`);
  const started: ManagedProcess[] = [];
  let ownEtcd: Etcd | undefined;
  const cleanup = async (): Promise<void> => {
    for (const p of [...started].reverse()) await p.stop();
    if (ownEtcd) await ownEtcd.stop();
    if (ownDir) rmSync(ownDir, { recursive: true, force: true });
  };
  try {
    const baseDir = opts.shared?.dir ?? ownDir!;
    const pki = opts.shared?.pki ?? (await createPki(path.join(baseDir, 'pki')));
    if (!opts.shared) ownEtcd = await startEtcd({ dataDir: path.join(baseDir, 'etcd'), logDir: baseDir });
    const etcd = opts.shared?.etcd ?? ownEtcd!;
    const dir = path.join(baseDir, opts.name);
    mkdirSync(dir, { recursive: true });
    const port = await freePort();
    const server = `https://127.0.0.1:${port}`;

    const apiserver = startProcess({
      name: `${opts.name}/kube-apiserver`,
      command: toolPath('kube-apiserver'),
      args: apiserverArgs({ name: opts.name, port, etcd: etcd.endpoint, pki, dir, extra: opts.apiserverArgs ?? [] }),
      ...(opts.apiserverEnv ? { env: { ...process.env, ...opts.apiserverEnv } } : {}),
      logFile: path.join(dir, 'kube-apiserver.log'),
    });
    started.push(apiserver);
    await waitFor(
      apiserver.name,
      async () => (await get(`${server}/readyz`, { ca: pki.caPem, token: pki.adminToken })).status === 200,
      { timeoutMs: 90_000, process: apiserver, what: '/readyz not 200' },
    );

    const kubeconfig = renderKubeconfig({ name: opts.name, server, caPem: pki.caPem, token: pki.adminToken });
    const kubeconfigPath = path.join(dir, 'admin.kubeconfig');
    writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });

    const kcm = startProcess({
      name: `${opts.name}/kube-controller-manager`,
      command: toolPath('kube-controller-manager'),
      args: controllerManagerArgs(kubeconfigPath, await freePort(), pki),
      logFile: path.join(dir, 'kube-controller-manager.log'),
    });
    started.push(kcm);
    const scheduler = startProcess({
      name: `${opts.name}/kube-scheduler`,
      command: toolPath('kube-scheduler'),
      args: schedulerArgs(kubeconfigPath, await freePort()),
      logFile: path.join(dir, 'kube-scheduler.log'),
    });
    started.push(scheduler);
    const kwokConfigPath = path.join(dir, 'kwok.yaml');
    writeFileSync(kwokConfigPath, kwokConfig());
    const kwok = startProcess({
      name: `${opts.name}/kwok`,
      command: toolPath('kwok'),
      args: [
        `--kubeconfig=${kubeconfigPath}`,
        `--config=${kwokConfigPath}`,
        '--manage-all-nodes=false',
        `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
        '--node-lease-duration-seconds=40',
        '--cidr=10.244.0.0/16',
        '--node-ip=10.244.255.1',
      ],
      logFile: path.join(dir, 'kwok.log'),
    });
    started.push(kwok);

    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig);
    const core = kc.makeApiClient(CoreV1Api);
    const nodeNames = Array.from({ length: opts.nodes }, (_, i) => `${opts.name}-node-${i}`);
    for (const [i, n] of nodeNames.entries()) await core.createNode({ body: fakeNode(n, i) });
    await waitNodesReady(opts.name, core, nodeNames, kwok);
    // The controller-manager is working once it has created the default ServiceAccount, which
    // every pod needs before it can be admitted.
    await waitFor(
      kcm.name,
      async () => {
        await core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' });
        return true;
      },
      { timeoutMs: 60_000, process: kcm, what: 'default ServiceAccount not created' },
    );
    if (scheduler.hasExited()) {
      await waitFor(scheduler.name, () => Promise.resolve(true), { timeoutMs: 0, process: scheduler });
    }

    return {
      name: opts.name,
      server,
      kubeconfig,
      kubeconfigPath,
      token: pki.adminToken,
      caPem: pki.caPem,
      dir,
      nodeNames,
      processes: [...started],
      kubeConfig(): KubeConfig {
        const k = new KubeConfig();
        k.loadFromString(kubeconfig);
        return k;
      },
      memoryBytes: () => started.reduce((sum, p) => sum + readRssBytes(p.pid), 0),
      stop: cleanup,
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

function mkdtempDir(prefix: string): string {
  const dir = path.join(os.tmpdir(), `${prefix}${process.pid}-${Date.now().toString(36)}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}
