/** The CRR manager controller as a component of `agent manager`: leader only, needs the CRR CRD. */
import type { AgentConfig } from '../../config.js';
import type { Component } from '../../runtime/component.js';
import { Resources } from '../../runtime/resource.js';
import { registerCrrController } from './index.js';

export const containerRecreateRequestComponent: Component<AgentConfig> = {
  name: 'containerrecreaterequest',
  runsOn: 'leader',
  requires: [Resources.containerRecreateRequests],
  setup(ctx) {
    registerCrrController(ctx.manager, { rest: ctx.rest });
  },
};
