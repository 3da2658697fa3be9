/** The Advanced StatefulSet controller as a component of `agent manager`: leader only, needs the StatefulSet CRD. */
import type { AgentConfig } from '../../config.js';
import type { Component } from '../../runtime/component.js';
import { Resources } from '../../runtime/resource.js';
import { registerStatefulSetController } from './index.js';

export const statefulSetComponent: Component<AgentConfig> = {
  name: 'statefulset',
  runsOn: 'leader',
  requires: [Resources.statefulSets],
  setup(ctx) {
    registerStatefulSetController(ctx.manager, { rest: ctx.rest, events: ctx.events('statefulset') });
  },
};
