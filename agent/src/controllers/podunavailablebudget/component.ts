/** The PodUnavailableBudget controller as a component of `agent manager`: leader only, needs its CRD. */
import type { AgentConfig } from '../../config.js';
import type { Component } from '../../runtime/component.js';
import { Resources } from '../../runtime/resource.js';
import { registerPubController } from './index.js';

export const podUnavailableBudgetComponent: Component<AgentConfig> = {
  name: 'podunavailablebudget',
  runsOn: 'leader',
  requires: [Resources.podUnavailableBudgets],
  setup(ctx) {
    registerPubController(ctx.manager, { rest: ctx.rest, events: ctx.events('podunavailablebudget') });
  },
};
