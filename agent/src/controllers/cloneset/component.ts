/** The CloneSet controller as a component of `agent manager`: leader only, needs the CloneSet CRD. */
import type { AgentConfig } from '../../config.js';
import type { Component } from '../../runtime/component.js';
import { Resources } from '../../runtime/resource.js';
import { registerCloneSetController } from './index.js';

export const cloneSetComponent: Component<AgentConfig> = {
  name: 'cloneset',
  runsOn: 'leader',
  requires: [Resources.cloneSets],
  setup(ctx) {
    registerCloneSetController(ctx.manager, {
      rest: ctx.rest,
      events: ctx.events('cloneset'),
      options: { inPlaceVerticalScaling: ctx.config.inPlaceWorkloadVerticalScaling ?? false },
    });
  },
};
