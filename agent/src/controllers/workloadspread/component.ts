/**
 * The WorkloadSpread controller as a component of `agent manager`: leader only, needs its CRD, and
 * runs only with the WorkloadSpread gate on (a webhook setting, read whether or not the webhook
 * runs here), as OpenKruise starts it.
 */
import { agentNamespace, type AgentConfig } from '../../config.js';
import type { Component } from '../../runtime/component.js';
import { Resources } from '../../runtime/resource.js';
import { defaultWebhookConfig } from '../../webhook/config.js';
import { registerWorkloadSpreadController } from './index.js';

export const workloadSpreadComponent: Component<AgentConfig> = {
  name: 'workloadspread',
  runsOn: 'leader',
  requires: [Resources.workloadSpreads],
  setup(ctx) {
    const webhook = ctx.config.webhook ?? defaultWebhookConfig(agentNamespace(ctx.config));
    if (!webhook.workloadSpreadGate) {
      ctx.logger.info('WorkloadSpread gate off: its controller does not run');
      return;
    }
    registerWorkloadSpreadController(ctx.manager, { rest: ctx.rest, events: ctx.events('workloadspread') });
  },
};
