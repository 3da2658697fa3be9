/**
 * Wires `agent daemon --node NAME`: an informer on this node's NodeImage only (field selector
 * metadata.name=NAME, as kruise-daemon watches), the pull workers over the CRI ImageService, a
 * status writer and an event recorder; and the ContainerRecreateRequest worker over the CRI
 * RuntimeService (crr/), informed of this node's active CRRs only; all run by the runtime's Manager without leader election (one
 * daemon per node). Nothing runs until start().
 */
import type { KubeCredentials } from '../runtime/kubeconfig/index.js';
import { untilAborted, type NodeImage } from '@flotilla/api';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { systemClock, type Clock } from '../runtime/clock.js';
import type { Controller } from '../runtime/controller.js';
import { EventRecorder, kubeEventSink } from '../runtime/events.js';
import { HealthServer } from '../runtime/health.js';
import { kubeListWatcher } from '../runtime/kube-list-watch.js';
import { Manager } from '../runtime/manager.js';
import { RuntimeMetrics } from '../runtime/metrics.js';
import { Resources } from '../runtime/resource.js';
import { createKubeRest } from '../runtime/rest.js';
import type { DaemonConfig } from './config.js';
import { createGrpcImageService } from './cri/grpc-image-service.js';
import type { ImageService } from './cri/image-service.js';
import { createGrpcRuntimeService } from './cri/grpc-runtime-service.js';
import type { RuntimeService } from './cri/runtime-service.js';
import { kubeCrrStatusWriter, registerCrrDaemon } from './crr/index.js';
import { resolveRuntimeSocket } from './cri/socket.js';
import { Puller } from './puller.js';
import { daemonReconciler } from './reconciler.js';
import { kubeSecretReader } from './secrets.js';
import { createStatusWriter, kubeStatusPatcher, type StatusWriterOptions } from './status-writer.js';

export interface DaemonDeps {
  config: DaemonConfig;
  kubeConfig: KubeCredentials;
  logger: Logger;
  registry: Registry;
  /** Defaults to gRPC on the runtime socket the config names or probing finds. */
  images?: ImageService;
  /** The CRI RuntimeService for ContainerRecreateRequests; defaults like `images`. */
  runtime?: RuntimeService;
  clock?: Clock;
  statusWriter?: StatusWriterOptions;
  /** Republish the status this often without changes; default 20 min, as kruise-daemon. */
  resyncMs?: number;
}

export interface Daemon {
  manager: Manager;
  puller: Puller;
  /** Runs until stop(); rejects if startup fails. */
  start(): Promise<void>;
  stop(reason: string): Promise<void>;
}

export function createDaemon(deps: DaemonDeps): Daemon {
  const { config, kubeConfig, logger, registry } = deps;
  const clock = deps.clock ?? systemClock;
  const log = logger.child({ component: 'daemon', node: config.nodeName });
  const rest = createKubeRest(kubeConfig);
  const socketPath = (): string => resolveRuntimeSocket({ socketFile: config.socketFile, runDir: config.runDir });
  const images = deps.images ?? createGrpcImageService({ socketPath: socketPath() });
  const runtime = deps.runtime ?? createGrpcRuntimeService({ socketPath: socketPath() });
  const manager = new Manager({
    logger: log,
    metrics: new RuntimeMetrics(registry),
    listWatcherFor: (resource, options) => kubeListWatcher(kubeConfig, rest, resource, options),
    health: config.health ? new HealthServer({ ...config.health, registry, logger: log }) : undefined,
    clock,
  });
  const nodeImages = manager.informer<NodeImage>({
    resource: Resources.nodeImages,
    fieldSelector: `metadata.name=${config.nodeName}`,
  });
  const events = new EventRecorder({
    sink: kubeEventSink(rest),
    component: 'flotilla-daemon/imagepuller',
    instance: config.nodeName,
    logger: log,
  });
  // The controller is created below; workers only report after the manager started it.
  const holder: { controller?: Controller } = {};
  const puller = new Puller({
    images,
    secrets: kubeSecretReader(rest),
    events,
    clock,
    log,
    maxPulls: config.maxPullWorkers,
    onChange: () => holder.controller?.enqueue(config.nodeName),
  });
  holder.controller = manager.controller({
    name: 'imagepuller',
    reconcile: daemonReconciler({
      nodeName: config.nodeName,
      nodeImages,
      puller,
      writer: createStatusWriter(kubeStatusPatcher(rest), clock, deps.statusWriter),
      resyncMs: deps.resyncMs ?? 20 * 60_000,
    }),
  });
  holder.controller.watch(nodeImages);
  const crrEvents = new EventRecorder({
    sink: kubeEventSink(rest),
    component: 'flotilla-daemon/containerrecreate',
    instance: config.nodeName,
    logger: log,
  });
  registerCrrDaemon(manager, {
    nodeName: config.nodeName,
    runtime,
    writer: kubeCrrStatusWriter(rest),
    clock,
    events: crrEvents,
  });
  manager.addReadinessCheck('cri', async () => {
    await images.listImages({ timeoutMs: 5000 });
    return true;
  });
  manager.add({
    name: 'pull-workers',
    needLeaderElection: false,
    // Runs for the life of the manager; on shutdown stops every pull and closes the connection.
    start: async (signal) => {
      await untilAborted(signal);
      await puller.stop();
      await events.flush();
      await crrEvents.flush();
      images.close();
      runtime.close();
    },
  });
  return {
    manager,
    puller,
    start: () => manager.start(),
    stop: (reason) => manager.stop(reason),
  };
}
