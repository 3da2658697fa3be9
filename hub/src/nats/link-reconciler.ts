/**
 * Keeps the NATS side of every agent's link in line with Postgres: the identities nats-server
 * accepts (the accounts in its resolver) and the agents' durables (created for accepted clusters, repaired
 * when their config drifted, deleted for clusters that are not accepted). Runs at hub start,
 * every `intervalMs`, and soon after a kick (accept, removal). It covers what a single change
 * could not do: NATS down during a removal, a durable deleted or widened behind the hub, a hub
 * that was down while a cluster was removed, durables agents created under older versions.
 *
 * Every step is idempotent, so replicas may run passes at the same time; one pass at a time runs
 * in each process.
 */
import type { Logger } from 'pino';
import { planAgentConsumers, type AgentDurableSetup, type ConsumerPlan } from '../domain/agent-consumer-plan.js';
import type { AgentConsumers } from './agent-consumers.js';

export interface LinkReconcilerDeps {
  consumers: AgentConsumers;
  /** How agent durables keep their state (the config's). */
  durableSetup: AgentDurableSetup;
  /** Names of the accepted clusters, read after the durables were listed. */
  acceptedClusters: () => Promise<string[]>;
  /** Brings the NATS resolver's accounts in line with Postgres (services/account-sync.ts). */
  syncAccounts: () => Promise<unknown>;
  logger: Logger;
  intervalMs: number;
}

export interface LinkReconciler {
  start(): void;
  /** Runs a pass soon. */
  kick(): void;
  /** Runs one pass now (after any running one); resolves with what it planned for the durables. */
  pass(): Promise<ConsumerPlan>;
  stop(): Promise<void>;
}

/** Runs `step`, logging a failure instead of ending the pass (the next pass retries). */
async function attempt(logger: Logger, what: string, step: () => Promise<unknown>): Promise<void> {
  try {
    await step();
  } catch (err) {
    logger.warn({ err, step: what }, 'NATS link reconcile step failed; retrying on the next pass');
  }
}

/** Creates missing durables, repairs drifted ones, tunes others and deletes those of clusters not accepted. */
async function reconcileConsumers(deps: LinkReconcilerDeps): Promise<ConsumerPlan> {
  // Listed before the clusters are read: a durable created for a cluster accepted in between
  // is then never taken for a stale one.
  const existing = await deps.consumers.list();
  const plan = planAgentConsumers(await deps.acceptedClusters(), existing, deps.durableSetup);
  for (const cluster of [...plan.create, ...plan.repair.map((r) => r.cluster), ...plan.update]) {
    await attempt(deps.logger, `ensure ${cluster}`, () => deps.consumers.ensure(cluster));
  }
  for (const name of plan.remove) await attempt(deps.logger, `remove ${name}`, () => deps.consumers.remove(name));
  return plan;
}

export function createLinkReconciler(deps: LinkReconcilerDeps): LinkReconciler {
  const { logger } = deps;
  let chain: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let stopped = true;

  const runPass = async (): Promise<ConsumerPlan> => {
    await attempt(logger, 'accounts', deps.syncAccounts);
    return reconcileConsumers(deps);
  };

  const pass = (): Promise<ConsumerPlan> => {
    const next = chain.then(runPass);
    chain = next.catch(() => undefined);
    return next;
  };

  const schedule = (ms: number): void => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      pass()
        .catch((err: unknown) => logger.warn({ err }, 'NATS link reconcile pass failed; retrying'))
        .finally(() => {
          if (!stopped && !timer) schedule(deps.intervalMs);
        });
    }, ms);
  };

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      schedule(deps.intervalMs);
    },
    kick() {
      schedule(0);
    },
    pass,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await chain;
    },
  };
}
