/** The WorkloadSpread controller as a component of `agent manager`: leader only, needs its CRD. */
import type { AgentConfig } from '../../config.js';
import type { Component } from '../../runtime/component.js';
import { Resources } from '../../runtime/resource.js';
import { registerWorkloadSpreadController } from './index.js';

export const workloadSpreadComponent: Component<AgentConfig> = {
  name: 'workloadspread',
  runsOn: 'leader',
  requires: [Resources.workloadSpreads],
  setup(ctx) {
    registerWorkloadSpreadController(ctx.manager, { rest: ctx.rest, events: ctx.events('workloadspread') });
  },
};
