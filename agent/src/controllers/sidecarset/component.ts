/**
 * The SidecarSet controller as a component of `agent manager`: leader only, needs the SidecarSet
 * CRD. Injection is the webhook component's, on every replica.
 */
import { defaultWebhookConfig } from '../../webhook/config.js';
import { controllerPubGuard } from '../podunavailablebudget/guard-store.js';
import { agentNamespace, type AgentConfig } from '../../config.js';
import type { Component } from '../../runtime/component.js';
import { Resources } from '../../runtime/resource.js';
import { setupSidecarSetController } from './index.js';

export const sidecarSetComponent: Component<AgentConfig> = {
  name: 'sidecarset',
  runsOn: 'leader',
  requires: [Resources.sidecarSets, Resources.sidecarSetsStored],
  setup(ctx) {
    // Revisions live in the agent's namespace, as OpenKruise keeps them in its own.
    // The PodUnavailableBudget gates are the webhook's settings, read whether or not it runs here.
    const webhook = ctx.config.webhook ?? defaultWebhookConfig(agentNamespace(ctx.config));
    const pubGuard = webhook.pubUpdateGate
      ? controllerPubGuard(ctx.rest, webhook.inPlacePodVerticalScaling)
      : undefined;
    setupSidecarSetController(ctx, agentNamespace(ctx.config), undefined, pubGuard);
  },
};
