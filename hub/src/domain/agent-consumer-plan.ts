/**
 * Decides what to do with the agents' durable consumers on the DESIRED stream. Pure: the caller
 * lists the consumers and the accepted clusters, and acts on the plan.
 *
 * An agent may only pull from its own durable; everything that makes the durable safe lives in
 * its config, and agents cannot set it (they have no create permission). A durable whose config
 * says otherwise was changed by someone else (an agent under the old permissions, an operator
 * by hand): it is deleted and created again, and the new one redelivers the latest value of
 * every object of the cluster (the agent applies by generation, so repeats are harmless).
 */
import { DESIRED_ACK_WAIT_MS, agentConsumerName, desiredFilter, isValidClusterName } from '@flotilla/api';

/** The consumer name prefix of agents' durables; the rest of the name is the cluster's. */
export const AGENT_CONSUMER_PREFIX = 'agent-';

/** JetStream's wire values of the settings that matter (ConsumerConfig's string enums). */
export const LAST_PER_SUBJECT = 'last_per_subject';
export const ACK_EXPLICIT = 'explicit';

/**
 * Where an agent durable keeps its state (delivered and acknowledged positions). In memory, a
 * durable whose server restarts starts again from the latest value of every object: the agent
 * applies them all again by generation, a resync, and no desired state is lost (that lives in
 * the stream). In a file, replicated, it keeps its position, at the cost of a replicated write
 * for every delivery and acknowledgement.
 */
export interface AgentDurableSetup {
  memory: boolean;
  replicas: number;
}

/** The parts of a consumer's config that decide what its reader gets and where it goes. */
export interface ConsumerView {
  name: string;
  /** filter_subject and filter_subjects together (empty: the whole stream). */
  filterSubjects: readonly string[];
  /** Set on push consumers: the server sends every message there, to anyone subscribed. */
  deliverSubject: string | undefined;
  deliverPolicy: string;
  ackPolicy: string;
  /** ack_wait in milliseconds: tuning, updated in place (the durable keeps its position). */
  ackWaitMs: number;
  /** mem_storage. */
  memory: boolean;
  /** Its replicas (the stream's when it names none). */
  replicas: number;
}

/**
 * Why a durable is not what the hub creates: changed behind the hub (the first four), or made
 * under another durable setup (storage, replicas; neither is updated in place).
 */
export type ConsumerDrift = 'filter' | 'push' | 'deliver_policy' | 'ack_policy' | 'storage' | 'replicas';

/** Differences between an agent's durable and the one the hub creates for that cluster. */
export function consumerDrift(cluster: string, view: ConsumerView, setup: AgentDurableSetup): ConsumerDrift[] {
  const drift: ConsumerDrift[] = [];
  if (view.filterSubjects.length !== 1 || view.filterSubjects[0] !== desiredFilter(cluster)) drift.push('filter');
  if (view.deliverSubject !== undefined && view.deliverSubject !== '') drift.push('push');
  if (view.deliverPolicy !== LAST_PER_SUBJECT) drift.push('deliver_policy');
  if (view.ackPolicy !== ACK_EXPLICIT) drift.push('ack_policy');
  if (view.memory !== setup.memory) drift.push('storage');
  if (view.replicas !== setup.replicas) drift.push('replicas');
  return drift;
}

/** Settings of a right durable that differ from the hub's and can be updated in place. */
export type ConsumerTuning = 'ack_wait';

export function consumerTuning(view: ConsumerView): ConsumerTuning[] {
  return view.ackWaitMs === DESIRED_ACK_WAIT_MS ? [] : ['ack_wait'];
}

/** The cluster an agent durable's name stands for (undefined: not an agent durable's name). */
export function clusterOfConsumer(name: string): string | undefined {
  if (!name.startsWith(AGENT_CONSUMER_PREFIX)) return undefined;
  const cluster = name.slice(AGENT_CONSUMER_PREFIX.length);
  return isValidClusterName(cluster) ? cluster : undefined;
}

export interface ConsumerPlan {
  /** Accepted clusters without a durable. */
  create: string[];
  /** Accepted clusters whose durable drifted: delete and create again. */
  repair: { cluster: string; drift: ConsumerDrift[] }[];
  /** Accepted clusters whose durable is right but tuned otherwise: updated in place. */
  update: string[];
  /** Agent durables (by consumer name) of clusters that are not accepted, or of no cluster. */
  remove: string[];
}

/**
 * Compares the agent durables on the stream with the accepted clusters. Consumers whose names do
 * not start with `agent-` are not the agents' and are left alone (the hub's own readers).
 */
export function planAgentConsumers(
  accepted: Iterable<string>,
  existing: readonly ConsumerView[],
  setup: AgentDurableSetup,
): ConsumerPlan {
  const plan: ConsumerPlan = { create: [], repair: [], update: [], remove: [] };
  const byName = new Map(existing.map((c) => [c.name, c]));
  const wanted = new Set(accepted);
  for (const cluster of [...wanted].sort()) {
    const view = byName.get(agentConsumerName(cluster));
    if (!view) {
      plan.create.push(cluster);
      continue;
    }
    const drift = consumerDrift(cluster, view, setup);
    if (drift.length > 0) plan.repair.push({ cluster, drift });
    else if (consumerTuning(view).length > 0) plan.update.push(cluster);
  }
  for (const c of existing) {
    if (!c.name.startsWith(AGENT_CONSUMER_PREFIX)) continue;
    const cluster = clusterOfConsumer(c.name);
    if (cluster === undefined || !wanted.has(cluster)) plan.remove.push(c.name);
  }
  plan.remove.sort();
  return plan;
}
