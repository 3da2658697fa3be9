/**
 * The WorkloadSpread controller as a component of `agent manager`: leader only, needs its CRD, and
 * runs only with the WorkloadSpread gate on (a webhook setting, read whether or not the webhook
 * runs here), as OpenKruise starts it.
 */
import { agentNamespace, type AgentConfig } from '../../config.js';
import type { Component, ComponentContext } from '../../runtime/component.js';
import { Resources } from '../../runtime/resource.js';
import { defaultWebhookConfig } from '../../webhook/config.js';
import { registerWorkloadSpreadController } from './index.js';

/**
 * Registers the controller when the gate is on; `namespace` narrows it to one namespace (agents on
 * clusters other suites share).
 */
export function setupWorkloadSpreadController(
  ctx: Pick<ComponentContext<AgentConfig>, 'manager' | 'rest' | 'config' | 'events' | 'logger'>,
  scope: { namespace?: string } = {},
): void {
  const webhook = ctx.config.webhook ?? defaultWebhookConfig(agentNamespace(ctx.config));
  if (!webhook.workloadSpreadGate) {
    ctx.logger.info('WorkloadSpread gate off: its controller does not run');
    return;
  }
  registerWorkloadSpreadController(ctx.manager, {
    rest: ctx.rest,
    events: ctx.events('workloadspread'),
    namespace: scope.namespace,
  });
}

export const workloadSpreadComponent: Component<AgentConfig> = {
  name: 'workloadspread',
  runsOn: 'leader',
  requires: [Resources.workloadSpreads],
  setup(ctx) {
    setupWorkloadSpreadController(ctx);
  },
};
