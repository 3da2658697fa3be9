/**
 * The admission webhook as a component of `agent manager`: served by every replica, not only the
 * leader, since the apiserver calls whichever replica its Service picks. Its settings are the
 * --webhook-* flags (webhook/config.ts).
 */
import { agentNamespace, type AgentConfig } from '../config.js';
import type { Component } from '../runtime/component.js';
import { defaultWebhookConfig } from './config.js';
import { setupWebhook } from './index.js';

export const webhookComponent: Component<AgentConfig> = {
  name: 'webhook',
  runsOn: 'every-replica',
  setup(ctx) {
    setupWebhook(ctx, ctx.config.webhook ?? defaultWebhookConfig(agentNamespace(ctx.config)));
  },
};
