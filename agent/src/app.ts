import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { AgentConfig } from './config.js';
import type { ControllerContext, ControllerRegistration } from './controllers/index.js';
import { selectControllers } from './controllers/select.js';
import { EventRecorder, kubeEventSink } from './runtime/events.js';
import { HealthServer } from './runtime/health.js';
import { kubeListWatcher } from './runtime/kube-list-watch.js';
import { kubeLeaseClient } from './runtime/leader-election.js';
import { Manager } from './runtime/manager.js';
import { RuntimeMetrics } from './runtime/metrics.js';
import { createKubeRest } from './runtime/rest.js';
import { createHubLinkMetrics } from './hublink/metrics.js';
import { hubLinkRunnable } from './hublink/runnable.js';
import { AGENT_VERSION } from './version.js';

export type { AgentConfig } from './config.js';
export type { ControllerContext, ControllerRegistration } from './controllers/index.js';

export interface AgentManagerDeps {
  config: AgentConfig;
  kubeConfig: KubeConfig;
  logger: Logger;
  registry: Registry;
  controllers: readonly ControllerRegistration[];
}

/**
 * Wires the `agent manager` process: a raw JSON client, informers over list/watch, the health
 * server, Lease leader election, every registered controller, and the hub link when a hub URL
 * is configured. Nothing runs until start().
 */
export async function createAgentManager(deps: AgentManagerDeps): Promise<Manager> {
  const { config, kubeConfig, logger, registry } = deps;
  const rest = createKubeRest(kubeConfig, { http2: config.kubeApiHttp2 ?? true });
  const le = config.leaderElection;
  const manager = new Manager({
    logger,
    metrics: new RuntimeMetrics(registry),
    listWatcherFor: (resource, options) => kubeListWatcher(kubeConfig, rest, resource, options),
    health: new HealthServer({ ...config.health, registry, logger }),
    leaderElection: le.enabled
      ? {
          namespace: le.namespace,
          name: le.leaseName,
          identity: config.identity,
          client: kubeLeaseClient(rest),
          leaseDurationMs: le.leaseDurationMs,
          renewDeadlineMs: le.renewDeadlineMs,
          retryPeriodMs: le.retryPeriodMs,
        }
      : undefined,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    cacheSyncTimeoutMs: config.cacheSyncTimeoutMs,
  });
  const sink = kubeEventSink(rest);
  const ctx: ControllerContext = {
    manager,
    rest,
    kubeConfig,
    config,
    logger,
    registry,
    events: (component) =>
      new EventRecorder({ sink, component: `flotilla-agent/${component}`, instance: config.identity, logger }),
  };
  for (const registration of selectControllers(deps.controllers, config.controllers ?? ['*'])) {
    logger.info({ controller: registration.name }, 'setting up controller');
    await registration.setup(ctx);
  }
  if (config.hub) {
    // Leader only (see hublink/runnable.ts); without --hub-url the agent is standalone.
    manager.add(
      hubLinkRunnable({
        hub: config.hub,
        clusterName: config.clusterName,
        namespace: config.namespace ?? config.leaderElection.namespace,
        rest,
        logger,
        metrics: createHubLinkMetrics(registry),
        agentVersion: AGENT_VERSION,
      }),
    );
  }
  return manager;
}
