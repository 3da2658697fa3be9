/** The Advanced DaemonSet controller as a component of `agent manager`: leader only, needs its CRD at v1beta1. */
import type { AgentConfig } from '../../config.js';
import type { Component } from '../../runtime/component.js';
import { Resources } from '../../runtime/resource.js';
import { registerDaemonSetController } from './index.js';

export const daemonSetComponent: Component<AgentConfig> = {
  name: 'daemonset',
  runsOn: 'leader',
  requires: [Resources.daemonSets],
  setup(ctx) {
    registerDaemonSetController(ctx.manager, { rest: ctx.rest, events: ctx.events('daemonset') });
  },
};
