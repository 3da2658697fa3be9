/** The PodUnavailableBudget controller as a component of `agent manager`: leader only, needs its CRD. */
import type { AgentConfig } from '../../config.js';
import type { Component, ComponentContext } from '../../runtime/component.js';
import type { Controller } from '../../runtime/controller.js';
import { Resources } from '../../runtime/resource.js';
import { registerPubController } from './index.js';

/** Registers the controller; `namespace` narrows it to one namespace (agents on clusters other suites share). */
export function setupPubController(
  ctx: Pick<ComponentContext<AgentConfig>, 'manager' | 'rest' | 'events'>,
  scope: { namespace?: string } = {},
): Controller {
  return registerPubController(ctx.manager, {
    rest: ctx.rest,
    events: ctx.events('podunavailablebudget'),
    namespace: scope.namespace,
  });
}

export const podUnavailableBudgetComponent: Component<AgentConfig> = {
  name: 'podunavailablebudget',
  runsOn: 'leader',
  requires: [Resources.podUnavailableBudgets],
  setup(ctx) {
    setupPubController(ctx);
  },
};
