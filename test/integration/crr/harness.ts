/**
 * The CRR suite's world, in the run's last cluster: one tainted kwok Node of its own with a real
 * containerd, the CRR manager and the node daemon's CRR worker running in-process against them,
 * and a kubelet stand-in. kwok runs the pods' lifecycle but has no containers, so the stand-in
 * does the kubelet's part for the suite's pods: it runs their containers in the containerd, and
 * when one exits (the daemon stopped it) starts it again and reports the new container id and
 * restart count in the pod status, as the kubelet would.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import { Registry } from 'prom-client';
import { fakeNode, startContainerd, type Containerd } from '@flotilla/test';
import {
  containerRecreateRequestFromPod,
  defaultContainerRecreateRequest,
  KRUISE_API_VERSION,
  type ContainerRecreateRequest,
  type CrrSourcePod,
} from '@flotilla/api';
import { EventRecorder, kubeEventSink } from '../../../agent/src/runtime/events.js';
import { kubeListWatcher } from '../../../agent/src/runtime/kube-list-watch.js';
import { Manager } from '../../../agent/src/runtime/manager.js';
import { RuntimeMetrics } from '../../../agent/src/runtime/metrics.js';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { createKubeRest, type KubeRest } from '../../../agent/src/runtime/rest.js';
import { systemClock } from '../../../agent/src/runtime/clock.js';
import { registerCrrController } from '../../../agent/src/controllers/containerrecreaterequest/index.js';
import { createGrpcRuntimeService } from '../../../agent/src/daemon/cri/grpc-runtime-service.js';
import { kubeCrrStatusWriter, registerCrrDaemon } from '../../../agent/src/daemon/crr/index.js';
import { clusters } from '../helpers/context.js';
import { installCrds } from '../helpers/crds.js';
import { eventually, kube, testNamespace, type Kube } from '../helpers/kube.js';
import { importTestImage, KubeletStandIn } from './containerd-pod.js';

const TAINT = { key: 'flotilla.test/crr-node', value: 'yes', effect: 'NoSchedule' };

interface TrackedPod {
  namespace: string;
  name: string;
  uid: string;
  sandboxId: string;
  /** The current container id and attempt per name. */
  containers: Map<string, { id: string; attempt: number }>;
}

export interface CrrEnv {
  k: Kube;
  rest: KubeRest;
  node: string;
  ns: string;
  containerd: Containerd;
  kubelet: KubeletStandIn;
  /** Container names in the order the stand-in saw them stopped. */
  stopped: string[];
  /** A Running pod on the suite's node with real containers `names`; its status carries their ids. */
  runPod(name: string, names: string[], extra?: Partial<V1Pod['spec']>): Promise<V1Pod>;
  /** Creates the CRR as the webhook would admit it (defaults and the pod's context applied). */
  createCrr(name: string, pod: V1Pod, spec: Partial<ContainerRecreateRequest['spec']>): Promise<void>;
  getCrr(name: string): Promise<ContainerRecreateRequest | undefined>;
  realState(pod: string, container: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startCrrEnv(): Promise<CrrEnv> {
  const all = clusters();
  const k = kube(all[all.length - 1]!);
  const rest = createKubeRest(k.kc);
  const logger: Logger = pino({ level: process.env.FLOTILLA_TEST_LOG ?? 'silent' }, pino.destination(2));
  await installCrds(k);
  const ns = await testNamespace(k, 'crr');
  const node = `crr-${ns.slice(-6)}`;
  const body: V1Node = fakeNode(node, 0);
  body.spec = { taints: [TAINT] };
  await k.core.createNode({ body });
  const containerd = await startContainerd({
    name: `containerd-${node}`,
    dir: mkdtempSync(path.join(tmpdir(), 'crr-')),
  });
  importTestImage(containerd);
  const kubelet = new KubeletStandIn(containerd.socket);
  const runtime = createGrpcRuntimeService({ socketPath: containerd.socket });

  const manager = new Manager({
    logger,
    metrics: new RuntimeMetrics(new Registry()),
    listWatcherFor: (resource, options) => kubeListWatcher(k.kc, rest, resource, options),
    shutdownTimeoutMs: 5000,
  });
  registerCrrController(manager, { rest, namespace: ns });
  registerCrrDaemon(manager, {
    nodeName: node,
    runtime,
    writer: kubeCrrStatusWriter(rest),
    clock: systemClock,
    events: new EventRecorder({
      sink: kubeEventSink(rest),
      component: 'flotilla-daemon/containerrecreate',
      instance: node,
      logger,
    }),
    resyncMs: 1000,
  });
  const done = manager.start();
  await eventually('CRR caches synced', () => Promise.resolve(manager.hasSynced()), 30_000, 50);

  const pods = new Map<string, TrackedPod>();
  const stopped: string[] = [];
  let running = true;
  const restartLoop = (async () => {
    while (running) {
      for (const pod of pods.values()) await restartExited(k, kubelet, pod, stopped).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 150));
    }
  })();

  return {
    k,
    rest,
    node,
    ns,
    containerd,
    kubelet,
    stopped,
    async runPod(name, names, extra = {}) {
      await k.core.createNamespacedPod({
        namespace: ns,
        body: {
          metadata: { name },
          spec: {
            nodeName: node,
            tolerations: [{ ...TAINT, operator: 'Equal' }],
            containers: names.map((n) => ({ name: n, image: 'flotilla.test/pause:1' })),
            ...extra,
          },
        },
      });
      const pod = await eventually(`pod ${name} running`, async () => {
        const p = await k.core.readNamespacedPod({ namespace: ns, name });
        return p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).length === names.length && p;
      });
      const uid = pod.metadata!.uid!;
      const real = await kubelet.runPod({ name, namespace: ns, uid }, names);
      const tracked: TrackedPod = {
        namespace: ns,
        name,
        uid,
        sandboxId: real.sandboxId,
        containers: new Map(names.map((n) => [n, { id: real.containers[n]!, attempt: 0 }])),
      };
      await reportContainers(k, tracked, []);
      pods.set(name, tracked);
      return k.core.readNamespacedPod({ namespace: ns, name });
    },
    async createCrr(name, pod, spec) {
      const crr: ContainerRecreateRequest = {
        apiVersion: KRUISE_API_VERSION,
        kind: 'ContainerRecreateRequest',
        metadata: { name, namespace: ns },
        spec: { podName: pod.metadata!.name!, containers: [], ...spec },
      };
      const admitted = containerRecreateRequestFromPod(
        defaultContainerRecreateRequest(crr),
        pod as unknown as CrrSourcePod,
        true,
      );
      if (!admitted.ok) throw new Error(JSON.stringify(admitted.errors));
      await rest.request({
        method: 'POST',
        path: resourcePath(Resources.containerRecreateRequests, ns),
        body: admitted.crr,
      });
    },
    async getCrr(name) {
      return rest
        .request<ContainerRecreateRequest>({
          method: 'GET',
          path: resourcePath(Resources.containerRecreateRequests, ns, name),
        })
        .catch(() => undefined);
    },
    async realState(podName, container) {
      const id = pods.get(podName)?.containers.get(container)?.id ?? '';
      return kubelet.state(id);
    },
    async stop() {
      running = false;
      await restartLoop;
      await manager.stop('suite over');
      await done.catch(() => undefined);
      for (const pod of pods.values()) await kubelet.removePod(pod.sandboxId);
      kubelet.close();
      runtime.close();
      await containerd.stop();
      await k.core.deleteNode({ name: node }).catch(() => undefined);
      await k.core.deleteNamespace({ name: ns }).catch(() => undefined);
    },
  };
}

/** The kubelet's restart: a new container for every exited one, then the pod status reports it. */
async function restartExited(k: Kube, kubelet: KubeletStandIn, pod: TrackedPod, stopped: string[]): Promise<void> {
  const restarted: string[] = [];
  for (const [name, current] of pod.containers) {
    if ((await kubelet.state(current.id)) !== 'CONTAINER_EXITED') continue;
    stopped.push(name);
    const attempt = current.attempt + 1;
    const id = await kubelet.startContainer(pod.sandboxId, pod, name, attempt);
    pod.containers.set(name, { id, attempt });
    restarted.push(name);
  }
  if (restarted.length > 0) await reportContainers(k, pod, restarted);
}

/** Writes the real container ids into the pod status; `restarted` ones get restartCount + 1. */
async function reportContainers(k: Kube, pod: TrackedPod, restarted: string[]): Promise<void> {
  await eventually(
    `status of ${pod.name} written`,
    async () => {
      const current = await k.core.readNamespacedPodStatus({ namespace: pod.namespace, name: pod.name });
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      current.status!.containerStatuses = (current.status?.containerStatuses ?? []).map((s) => {
        const real = pod.containers.get(s.name);
        if (!real) return s;
        const again = restarted.includes(s.name);
        return {
          ...s,
          containerID: `containerd://${real.id}`,
          ready: true,
          restartCount: (s.restartCount ?? 0) + (again ? 1 : 0),
          ...(again ? { state: { running: { startedAt: new Date(now) } } } : {}),
        };
      });
      await k.core.replaceNamespacedPodStatus({ namespace: pod.namespace, name: pod.name, body: current });
      return true;
    },
    10_000,
    100,
  );
}
