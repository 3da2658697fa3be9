/**
 * The SidecarSet controller as a component of `agent manager`: leader only, needs the SidecarSet
 * CRD. Injection is the webhook component's, on every replica.
 */
import { agentNamespace, type AgentConfig } from '../../config.js';
import type { Component } from '../../runtime/component.js';
import { Resources } from '../../runtime/resource.js';
import { setupSidecarSetController } from './index.js';

export const sidecarSetComponent: Component<AgentConfig> = {
  name: 'sidecarset',
  runsOn: 'leader',
  requires: [Resources.sidecarSets, Resources.sidecarSetsStored],
  setup(ctx) {
    // Revisions live in the agent's namespace, as OpenKruise keeps them in its own.
    setupSidecarSetController(ctx, agentNamespace(ctx.config));
  },
};
