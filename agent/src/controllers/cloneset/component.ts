/** The CloneSet controller as a component of `agent manager`: leader only, needs the CloneSet CRD. */
import { agentNamespace, type AgentConfig } from '../../config.js';
import { defaultWebhookConfig } from '../../webhook/config.js';
import { controllerPubGuard } from '../podunavailablebudget/guard-store.js';
import type { Component, ComponentContext } from '../../runtime/component.js';
import type { Controller } from '../../runtime/controller.js';
import { Resources } from '../../runtime/resource.js';
import { registerCloneSetController } from './index.js';

/**
 * Registers the CloneSet controller with its settings from the agent's configuration: vertical
 * scaling, and the PodUnavailableBudget guard it asks before an in-place update when the update
 * gate is on. `namespace` narrows it to one namespace (agents on clusters other suites share).
 */
export function setupCloneSetController(
  ctx: Pick<ComponentContext<AgentConfig>, 'manager' | 'rest' | 'config' | 'events'>,
  scope: { namespace?: string } = {},
): Controller {
  // The PodUnavailableBudget gates are the webhook's settings, read whether or not it runs here.
  const webhook = ctx.config.webhook ?? defaultWebhookConfig(agentNamespace(ctx.config));
  return registerCloneSetController(ctx.manager, {
    rest: ctx.rest,
    events: ctx.events('cloneset'),
    namespace: scope.namespace,
    options: { inPlaceVerticalScaling: ctx.config.inPlaceWorkloadVerticalScaling ?? false },
    ...(webhook.pubUpdateGate ? { pubGuard: controllerPubGuard(ctx.rest, webhook.inPlacePodVerticalScaling) } : {}),
  });
}

export const cloneSetComponent: Component<AgentConfig> = {
  name: 'cloneset',
  runsOn: 'leader',
  requires: [Resources.cloneSets],
  setup(ctx) {
    setupCloneSetController(ctx);
  },
};
