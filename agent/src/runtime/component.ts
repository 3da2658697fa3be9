/**
 * The contract of the agent's components: each controller, the admission webhook and the hub
 * link is one Component, and `agent manager` runs those its component selection names.
 *
 * A component sets itself up on the manager before the manager starts: setup() registers the
 * informers it reads (every replica keeps them synced), its controllers (they run only while
 * this replica leads) and its runnables through ctx.run(), which places them where the
 * component's `runsOn` says. A component whose `requires` are not all served is skipped with a
 * warning, as OpenKruise skips a controller whose CRD is not installed: an informer on an
 * unknown resource would never sync and keep the whole manager from becoming ready.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { AgentError } from '../errors.js';
import { isServed } from './discovery.js';
import type { EventRecorder } from './events.js';
import type { Manager, Runnable } from './manager.js';
import { apiVersionOf, type ResourceRef } from './resource.js';
import type { KubeRest } from './rest.js';

/** Where a component's runnables run: only on the leader, or on every replica (servers). */
export type Placement = 'leader' | 'every-replica';

/** What a component registers with: shared informers, leader-only controllers, readiness checks. */
export type ComponentRegistrar = Pick<Manager, 'informer' | 'controller' | 'addReadinessCheck'>;

/** A runnable whose placement its component decides. */
export type ComponentRunnable = Omit<Runnable, 'needLeaderElection'>;

/** What a component gets to set itself up. `Config` is the agent's validated configuration. */
export interface ComponentContext<Config> {
  manager: ComponentRegistrar;
  /** Raw JSON access to the apiserver (plain objects, no Date conversion). */
  rest: KubeRest;
  config: Config;
  logger: Logger;
  /** For component-specific metrics; never prom-client's global registry. */
  registry: Registry;
  /** An event recorder whose source is `flotilla-agent/<source>`. */
  events: (source: string) => EventRecorder;
  /** Runs `runnable` from the manager's start until it stops, placed as the component's `runsOn`. */
  run: (runnable: ComponentRunnable) => void;
}

/** One component of `agent manager`; see the file comment. */
export interface Component<Config> {
  /** How the component selection names it. */
  readonly name: string;
  /** Where its runnables run. Its controllers always run on the leader only. */
  readonly runsOn: Placement;
  /** Resources it cannot work without; it is skipped when one is not served. */
  readonly requires?: readonly ResourceRef[];
  setup(ctx: ComponentContext<Config>): void | Promise<void>;
}

/**
 * Picks components from a kube-controller-manager style list: `*` selects all, a name selects
 * one, `-name` leaves one out; an empty list selects none. Unknown names fail the start naming
 * them and `setting` (where the list came from), so a typo never silently drops a component.
 */
export function selectComponents<T extends { name: string }>(
  all: readonly T[],
  spec: readonly string[],
  setting: string,
): T[] {
  const known = new Set(all.map((c) => c.name));
  const unknown = spec.map((s) => s.replace(/^-/, '')).filter((n) => n !== '*' && !known.has(n));
  if (unknown.length > 0) {
    throw new AgentError(
      'AGENT_ERR_CONFIG',
      `${setting}: unknown component(s) ${unknown.join(', ')}; known: ${[...known].join(', ')}`,
    );
  }
  const everything = spec.includes('*');
  return all.filter((c) => !spec.includes(`-${c.name}`) && (everything || spec.includes(c.name)));
}

/** The context every component shares; run() is added per component. */
export type ComponentBase<Config> = Omit<ComponentContext<Config>, 'manager' | 'run'> & {
  manager: ComponentRegistrar & Pick<Manager, 'add'>;
};

/** Sets the components up in order: each one whose required resources are served. */
export async function setupComponents<Config>(
  components: readonly Component<Config>[],
  base: ComponentBase<Config>,
): Promise<void> {
  for (const component of components) {
    const missing = await unserved(base.rest, component.requires ?? []);
    if (missing.length > 0) {
      const what = missing.map((r) => `${r.kind} (${apiVersionOf(r)})`).join(', ');
      base.logger.warn(
        { component: component.name },
        `${what} not served (CRD not installed); ${component.name} disabled`,
      );
      continue;
    }
    base.logger.info({ component: component.name }, 'setting up component');
    const needLeaderElection = component.runsOn === 'leader';
    await component.setup({ ...base, run: (runnable) => base.manager.add({ ...runnable, needLeaderElection }) });
  }
}

async function unserved(rest: KubeRest, refs: readonly ResourceRef[]): Promise<ResourceRef[]> {
  const served = await Promise.all(refs.map((ref) => isServed(rest, ref)));
  return refs.filter((_, i) => !served[i]);
}
