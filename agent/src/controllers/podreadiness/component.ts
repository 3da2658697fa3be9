/** The pod readiness controller as a component of `agent manager`: leader only, core pods only. */
import type { AgentConfig } from '../../config.js';
import type { Component } from '../../runtime/component.js';
import { setupPodReadinessController } from './index.js';

export const podReadinessComponent: Component<AgentConfig> = {
  name: 'podreadiness',
  runsOn: 'leader',
  setup(ctx) {
    setupPodReadinessController(ctx);
  },
};
