/**
 * The NodeImage controller as a component of `agent manager`, with OpenKruise's timings: leader
 * only, needs the NodeImage CRD.
 */
import type { AgentConfig } from '../../config.js';
import type { Component } from '../../runtime/component.js';
import { Resources } from '../../runtime/resource.js';
import { registerNodeImageController } from './index.js';

export const nodeImageComponent: Component<AgentConfig> = {
  name: 'nodeimage',
  runsOn: 'leader',
  requires: [Resources.nodeImages],
  setup(ctx) {
    registerNodeImageController(ctx.manager, { rest: ctx.rest, events: ctx.events('nodeimage') });
  },
};
