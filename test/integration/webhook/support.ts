/**
 * Runs the agent's webhook in-process for a test, as one agent replica would: a Manager (no leader
 * election) with real informers, setupWebhook, and the apiserver calling it over TLS on 127.0.0.1
 * through `clientConfig.url`. Configurations are named after the test and narrowed to namespaces
 * (and cluster-scoped objects) carrying the test's own label, so parallel suites are unaffected.
 */
import net from 'node:net';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import {
  createKubeRest,
  EventRecorder,
  kubeEventSink,
  kubeListWatcher,
  Manager,
  RuntimeMetrics,
  type ComponentRunnable,
  type KubeRest,
} from '../../../agent/src/runtime/index.js';
import { setupSidecarSetController } from '../../../agent/src/controllers/sidecarset/index.js';
import {
  defaultWebhookConfig,
  setupWebhook,
  type WebhookConfig,
  type WebhookHandle,
} from '../../../agent/src/webhook/index.js';
import type { Kube } from '../helpers/kube.js';

export const SUITE_LABEL = 'flotilla.test/webhook-suite';

/** A free TCP port on 127.0.0.1 (closed again before returning). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface AgentReplica {
  manager: Manager;
  /** The replica's metrics (the webhook server's among them). */
  registry: Registry;
  webhook: WebhookHandle;
  rest: KubeRest;
  stop(): Promise<void>;
}

/** Webhook settings for a test: URL mode on 127.0.0.1, short sync, narrowed to the suite label. */
export function testWebhookConfig(
  suite: string,
  agentNamespace: string,
  port: number,
  url = `https://127.0.0.1:${port}`,
): WebhookConfig {
  return {
    ...defaultWebhookConfig(agentNamespace),
    host: '127.0.0.1',
    port,
    url,
    secretName: `webhook-certs-${suite}`,
    mutatingConfigurationName: `flotilla-test-m-${suite}`,
    validatingConfigurationName: `flotilla-test-v-${suite}`,
    timeoutSeconds: 10,
    syncIntervalMs: 2_000,
    propagationMs: 2_000,
    namespaceSelector: { matchLabels: { [SUITE_LABEL]: suite } },
    clusterScopedObjectSelector: { matchLabels: { [SUITE_LABEL]: suite } },
    // The shared CRDs call the run's conversion server (helpers/conversion-server.ts).
    publishConversion: false,
  };
}

/** What a replica's components are set up with. */
export type ReplicaContext = Parameters<typeof setupWebhook>[0];

/** Starts one replica; resolves once it is ready (serving, bundle published, caches synced). */
export async function startReplica(
  k: Kube,
  config: WebhookConfig,
  identity = 'replica-a',
  withSidecarSetController = false,
  /** Registers more of the agent with the replica's manager before it starts (a controller, say). */
  setup?: (ctx: ReplicaContext) => void,
): Promise<AgentReplica> {
  const rest = createKubeRest(k.kc);
  const logger = pino({ level: process.env.FLOTILLA_TEST_LOG ?? 'silent' }, pino.destination(2));
  const registry = new Registry();
  const manager = new Manager({
    logger,
    metrics: new RuntimeMetrics(registry),
    listWatcherFor: (resource, options) => kubeListWatcher(k.kc, rest, resource, options),
    shutdownTimeoutMs: 5_000,
  });
  const sink = kubeEventSink(rest);
  const ctx = {
    manager,
    rest,
    logger,
    registry,
    events: (component: string) =>
      new EventRecorder({ sink, component: `flotilla-agent/${component}`, instance: identity, logger }),
    // On every replica, as the webhook component places its runnable.
    run: (runnable: ComponentRunnable) => manager.add({ ...runnable, needLeaderElection: false }),
  };
  const webhook = setupWebhook(ctx, config);
  // The controller owns only the suite's SidecarSets: suites running side by side on one cluster
  // each run their own controller.
  const suite = config.namespaceSelector?.matchLabels?.[SUITE_LABEL];
  if (withSidecarSetController) {
    setupSidecarSetController(ctx, config.namespace, suite ? `${SUITE_LABEL}=${suite}` : undefined);
  }
  setup?.(ctx);
  const running = manager.start();
  const deadline = Date.now() + 60_000;
  while (!webhook.isReady()) {
    if (Date.now() > deadline) throw new Error('webhook replica not ready after 60 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    manager,
    registry,
    webhook,
    rest,
    stop: async () => {
      await manager.stop('test done');
      await running.catch(() => undefined);
    },
  };
}

/** Deletes the suite's webhook configurations (ignoring absent ones). */
export async function deleteConfigurations(k: Kube, config: WebhookConfig): Promise<void> {
  await k.admission
    .deleteMutatingWebhookConfiguration({ name: config.mutatingConfigurationName })
    .catch(() => undefined);
  await k.admission
    .deleteValidatingWebhookConfiguration({ name: config.validatingConfigurationName })
    .catch(() => undefined);
}
