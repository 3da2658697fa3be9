/**
 * The agent's components narrowed to one namespace and one label (`key=value`), for a whole agent
 * on a cluster other suites share (test/fleet/agent/main.ts, FLOTILLA_TEST_SCOPE_LABEL).
 */
import { agentNamespace, type AgentConfig } from '../../../agent/src/config.js';
import { registerBroadcastJobController } from '../../../agent/src/controllers/broadcastjob/index.js';
import { registerImagePullJobController } from '../../../agent/src/controllers/imagepulljob/index.js';
import { registerNodeImageController } from '../../../agent/src/controllers/nodeimage/index.js';
import { setupPodReadinessController } from '../../../agent/src/controllers/podreadiness/index.js';
import { setupSidecarSetController } from '../../../agent/src/controllers/sidecarset/index.js';
import type { Component } from '../../../agent/src/runtime/component.js';

/** Components whose stock form would act on the whole cluster, by name, and what replaces them. */
function replacements(namespace: string, label: string): Record<string, Partial<Component<AgentConfig>> | null> {
  const scope = { nodeSelector: label, jobSelector: label };
  return {
    podreadiness: {
      setup: (ctx) => setupPodReadinessController(ctx, { namespace }),
    },
    sidecarset: {
      setup: (ctx) => setupSidecarSetController(ctx, agentNamespace(ctx.config), label),
    },
    imagepulljob: {
      setup: (ctx) =>
        void registerImagePullJobController(ctx.manager, {
          rest: ctx.rest,
          events: ctx.events('imagepulljob'),
          options: { scope },
        }),
    },
    // Nodes made for the test get their NodeImage at once (OpenKruise waits 30 s for new nodes).
    nodeimage: {
      setup: (ctx) =>
        void registerNodeImageController(ctx.manager, {
          rest: ctx.rest,
          events: ctx.events('nodeimage'),
          options: { scope, creationDelayMs: 0 },
        }),
    },
    // Jobs and their pods in the namespace only; the pods' nodes are the job template's business.
    broadcastjob: {
      setup: (ctx) =>
        void registerBroadcastJobController(ctx.manager, {
          rest: ctx.rest,
          events: ctx.events('broadcastjob'),
          namespace,
          options: { assignPodsByScheduler: ctx.config.assignBcjPodsByScheduler ?? true },
        }),
    },
    storagemigration: null,
  };
}

/** `list` with every cluster-wide component narrowed to `namespace` and `label`, or left out. */
export function labelScoped(
  list: Component<AgentConfig>[],
  namespace: string,
  label: string,
): Component<AgentConfig>[] {
  const byName = replacements(namespace, label);
  return list.flatMap((c) => {
    const r = byName[c.name];
    if (r === null) return [];
    return r === undefined ? [c] : [{ ...c, ...r }];
  });
}

/** The webhook narrowed to what carries `label`, under configuration names of its own. */
export function scopeWebhook(config: AgentConfig, label: string): AgentConfig {
  if (!config.webhook) return config;
  const [key, value] = label.split('=') as [string, string];
  const selector = { matchLabels: { [key]: value } };
  return {
    ...config,
    webhook: {
      ...config.webhook,
      mutatingConfigurationName: `flotilla-test-m-${value}`,
      validatingConfigurationName: `flotilla-test-v-${value}`,
      namespaceSelector: selector,
      clusterScopedObjectSelector: selector,
      publishConversion: false,
    },
  };
}
