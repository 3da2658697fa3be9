/** The BroadcastJob controller as a component of `agent manager`: leader only, needs the BroadcastJob CRD. */
import type { AgentConfig } from '../../config.js';
import type { Component } from '../../runtime/component.js';
import { Resources } from '../../runtime/resource.js';
import { registerBroadcastJobController } from './index.js';

export const broadcastJobComponent: Component<AgentConfig> = {
  name: 'broadcastjob',
  runsOn: 'leader',
  requires: [Resources.broadcastJobs],
  setup(ctx) {
    registerBroadcastJobController(ctx.manager, {
      rest: ctx.rest,
      events: ctx.events('broadcastjob'),
      options: { assignPodsByScheduler: ctx.config.assignBcjPodsByScheduler ?? true },
    });
  },
};
