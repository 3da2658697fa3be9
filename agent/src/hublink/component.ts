/**
 * The hub link as a component of `agent manager`: it runs only on the leader (runnable.ts says
 * why). Without a hub URL (--hub-url) there is no fleet to join: the agent runs standalone.
 */
import { agentNamespace, type AgentConfig } from '../config.js';
import type { Component } from '../runtime/component.js';
import { AGENT_VERSION } from '../version.js';
import { createHubLinkMetrics } from './metrics.js';
import { hubLinkRunnable } from './runnable.js';
import { createCredentialHealth } from './credential-renewal.js';
import { createLinkTlsHealth } from './tls.js';

export const hubLinkComponent: Component<AgentConfig> = {
  name: 'hublink',
  runsOn: 'leader',
  setup(ctx) {
    const { config } = ctx;
    if (!config.hub) {
      ctx.logger.info('no hub URL (--hub-url): the agent runs standalone');
      return;
    }
    const metrics = createHubLinkMetrics(ctx.registry);
    const tls = createLinkTlsHealth({ logger: ctx.logger.child({ component: 'hublink' }), metrics });
    // Not ready while the hub's or the NATS servers' certificate does not verify (a wrong CA).
    ctx.manager.addReadinessCheck('hublink-tls', () => tls.check());
    // Not ready while the hub refuses to renew the cluster's credentials (its key was revoked).
    const credentials = createCredentialHealth();
    ctx.manager.addReadinessCheck('hublink-credentials', () => credentials.check());
    ctx.run(
      hubLinkRunnable({
        hub: config.hub,
        clusterName: config.clusterName,
        namespace: agentNamespace(config),
        rest: ctx.rest,
        logger: ctx.logger,
        metrics,
        tls,
        credentials,
        agentVersion: AGENT_VERSION,
      }),
    );
  },
};
