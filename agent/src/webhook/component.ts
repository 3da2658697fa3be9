/**
 * The webhook as an entry of the agent's registry: set up with the other components, but served
 * by every replica (its runnable does not need leadership). Disabled by FLOTILLA_WEBHOOK_ENABLED=false.
 */
import type { ControllerRegistration } from '../controllers/index.js';
import { setupWebhook } from './index.js';

export const webhookRegistration: ControllerRegistration = {
  name: 'webhook',
  setup(ctx) {
    if (ctx.config.webhook?.enabled) setupWebhook(ctx, ctx.config.webhook);
  },
};
