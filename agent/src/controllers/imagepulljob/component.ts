/**
 * The ImagePullJob controller as a component of `agent manager`: leader only, needs the
 * ImagePullJob and NodeImage CRDs (it writes the jobs' tags into NodeImages).
 */
import type { AgentConfig } from '../../config.js';
import type { Component } from '../../runtime/component.js';
import { Resources } from '../../runtime/resource.js';
import { registerImagePullJobController } from './index.js';
import { DEFAULT_TTL_MARGIN } from './sync-plan.js';

export const imagePullJobComponent: Component<AgentConfig> = {
  name: 'imagepulljob',
  runsOn: 'leader',
  requires: [Resources.imagePullJobs, Resources.nodeImages],
  setup(ctx) {
    const { pullSecretNamespaces, alwaysNodeImageTtlSeconds } = ctx.config;
    registerImagePullJobController(ctx.manager, {
      rest: ctx.rest,
      events: ctx.events('imagepulljob'),
      options: {
        ...(pullSecretNamespaces ? { pullSecretNamespaces } : {}),
        ...(alwaysNodeImageTtlSeconds === undefined
          ? {}
          : { ttlMargin: { ...DEFAULT_TTL_MARGIN, baseSeconds: alwaysNodeImageTtlSeconds } }),
      },
    });
  },
};
