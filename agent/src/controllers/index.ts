/**
 * The registry of controllers `agent manager` runs. Each controller lives in its own folder
 * (controllers/<kind>/) and exports a ControllerRegistration; add it to `controllers` below.
 *
 *   export const cloneSetController: ControllerRegistration = {
 *     name: 'cloneset',
 *     setup({ manager, rest, events }) {
 *       const cloneSets = manager.informer({ resource: Resources.cloneSets });
 *       const pods = manager.informer({ resource: Resources.pods });
 *       const c = manager.controller({ name: 'cloneset', workers: 3, reconcile: (key, ctx) => ... });
 *       c.watch(cloneSets);
 *       c.watch(pods, enqueueOwner({ group: 'apps.kruise.io', kind: 'CloneSet' }));
 *     },
 *   };
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { AgentConfig } from '../config.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Manager } from '../runtime/manager.js';
import type { KubeRest } from '../runtime/rest.js';
import { cloneSetController } from './cloneset/index.js';
import { imagePullJobController } from './imagepulljob/index.js';
import { nodeImageController } from './nodeimage/index.js';
import { webhookRegistration } from '../webhook/component.js';
import { sidecarSetController } from './sidecarset/index.js';
import { podReadinessController } from './podreadiness/index.js';

/** What a controller gets to set itself up. */
export interface ControllerContext {
  /** Shared informers (manager.informer), controllers (manager.controller), runnables (manager.add). */
  manager: Manager;
  /** Raw JSON access to the apiserver (plain objects, no Date conversion). */
  rest: KubeRest;
  /** For the typed clients of @kubernetes/client-node where they are more convenient. */
  kubeConfig: KubeConfig;
  config: AgentConfig;
  logger: Logger;
  /** For controller-specific metrics; never prom-client's global registry. */
  registry: Registry;
  /** An event recorder whose source is `flotilla-agent/<component>`. */
  events: (component: string) => EventRecorder;
}

/** One controller of the agent. setup() registers informers, the controller and its watches. */
export interface ControllerRegistration {
  name: string;
  setup(ctx: ControllerContext): void | Promise<void>;
}

/** Controllers started by `agent manager`, in order. */
export const controllers: readonly ControllerRegistration[] = [
  nodeImageController,
  imagePullJobController,
  cloneSetController,
  sidecarSetController,
  podReadinessController,
  webhookRegistration,
];
