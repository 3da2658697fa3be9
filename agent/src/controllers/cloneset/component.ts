/** The CloneSet controller as a component of `agent manager`: leader only, needs the CloneSet CRD. */
import { agentNamespace, type AgentConfig } from '../../config.js';
import { defaultWebhookConfig } from '../../webhook/config.js';
import { controllerPubGuard } from '../podunavailablebudget/guard-store.js';
import type { Component } from '../../runtime/component.js';
import { Resources } from '../../runtime/resource.js';
import { registerCloneSetController } from './index.js';

export const cloneSetComponent: Component<AgentConfig> = {
  name: 'cloneset',
  runsOn: 'leader',
  requires: [Resources.cloneSets],
  setup(ctx) {
    // The PodUnavailableBudget gates are the webhook's settings, read whether or not it runs here.
    const webhook = ctx.config.webhook ?? defaultWebhookConfig(agentNamespace(ctx.config));
    registerCloneSetController(ctx.manager, {
      rest: ctx.rest,
      events: ctx.events('cloneset'),
      options: { inPlaceVerticalScaling: ctx.config.inPlaceWorkloadVerticalScaling ?? false },
      ...(webhook.pubUpdateGate ? { pubGuard: controllerPubGuard(ctx.rest, webhook.inPlacePodVerticalScaling) } : {}),
    });
  },
};
