import type { KubeCredentials } from './runtime/kubeconfig/index.js';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { MANAGER_SETTINGS, type AgentConfig } from './config.js';
import { selectComponents, setupComponents, type Component } from './runtime/component.js';
import { EventRecorder, kubeEventSink } from './runtime/events.js';
import { HealthServer } from './runtime/health.js';
import { kubeListWatcher } from './runtime/kube-list-watch.js';
import { kubeLeaseClient } from './runtime/leader-election.js';
import { Manager, type ManagerLeaderElection } from './runtime/manager.js';
import { RuntimeMetrics } from './runtime/metrics.js';
import { createKubeRest, type KubeRest } from './runtime/rest.js';
import { settingName } from './settings/reader.js';

export type { AgentConfig } from './config.js';

/** A component of `agent manager` (runtime/component.ts), reading the agent's configuration. */
export type AgentComponent = Component<AgentConfig>;

export interface AgentManagerDeps {
  config: AgentConfig;
  kubeConfig: KubeCredentials;
  logger: Logger;
  registry: Registry;
  /** Every component that can run (components.ts); config.components selects among them. */
  components: readonly AgentComponent[];
}

/**
 * Wires the `agent manager` process: a raw JSON client, informers over list/watch, the health
 * server, Lease leader election, then the selected components (controllers, webhook, hub link),
 * each setting itself up on the manager. Nothing runs until start().
 */
export async function createAgentManager(deps: AgentManagerDeps): Promise<Manager> {
  const { config, logger, registry } = deps;
  // Configurations built by hand (tests) may leave these out: they get the settings' defaults.
  const { components, kubeApiHttp2 } = MANAGER_SETTINGS;
  const spec = config.components ?? components.default;
  const selected = selectComponents(deps.components, spec, settingName(components));
  const rest = createKubeRest(deps.kubeConfig, { http2: config.kubeApiHttp2 ?? kubeApiHttp2.default });
  const manager = createManager(deps, rest);
  await setupComponents(selected, {
    manager,
    rest,
    config,
    logger,
    registry,
    events: eventRecorders(rest, config.identity, logger),
  });
  return manager;
}

function createManager(deps: AgentManagerDeps, rest: KubeRest): Manager {
  const { config, kubeConfig, logger, registry } = deps;
  return new Manager({
    logger,
    metrics: new RuntimeMetrics(registry),
    listWatcherFor: (resource, options) => kubeListWatcher(kubeConfig, rest, resource, options),
    health: new HealthServer({ ...config.health, registry, logger }),
    leaderElection: leaderElection(config, rest),
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    cacheSyncTimeoutMs: config.cacheSyncTimeoutMs,
  });
}

/** The Lease settings; undefined (always leading) with --no-leader-elect. */
function leaderElection(config: AgentConfig, rest: KubeRest): ManagerLeaderElection | undefined {
  const le = config.leaderElection;
  if (!le.enabled) return undefined;
  return {
    namespace: le.namespace,
    name: le.leaseName,
    identity: config.identity,
    client: kubeLeaseClient(rest),
    leaseDurationMs: le.leaseDurationMs,
    renewDeadlineMs: le.renewDeadlineMs,
    retryPeriodMs: le.retryPeriodMs,
  };
}

/** Event recorders sharing one sink, each with the source `flotilla-agent/<source>`. */
function eventRecorders(rest: KubeRest, identity: string, logger: Logger): (source: string) => EventRecorder {
  const sink = kubeEventSink(rest);
  return (source) => new EventRecorder({ sink, component: `flotilla-agent/${source}`, instance: identity, logger });
}
