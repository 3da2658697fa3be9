/**
 * The agents' durable consumers on the DESIRED stream, which only the hub creates and deletes
 * (agents may only read their own: see agentPermissions). Every call is idempotent, so hub
 * replicas may run them at the same time: creating a durable that exists with the same config
 * succeeds, deleting one that is gone is not an error.
 */
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type ConsumerConfig,
  type ConsumerInfo,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { DESIRED_ACK_WAIT_MS, DESIRED_STREAM, agentConsumerName, desiredFilter } from '@flotilla/api';
import type { Logger } from 'pino';
import {
  AGENT_CONSUMER_PREFIX,
  consumerDrift,
  consumerTuning,
  type AgentDurableSetup,
  type ConsumerDrift,
  type ConsumerTuning,
  type ConsumerView,
} from '../domain/agent-consumer-plan.js';
import type { HubMetrics } from '../metrics.js';

const NANOS_PER_MS = 1_000_000;

/** What ensure() did. */
export type EnsureOutcome =
  | { action: 'unchanged' | 'created' }
  | { action: 'repaired'; drift: ConsumerDrift[] }
  | { action: 'updated'; tuning: ConsumerTuning[] };

export interface AgentConsumers {
  /** Creates the cluster's durable, or deletes and creates it again when its config drifted. */
  ensure(cluster: string): Promise<EnsureOutcome>;
  /** Deletes a durable by consumer name; true when it existed. */
  remove(name: string): Promise<boolean>;
  /** Every durable on DESIRED whose name starts with `agent-`. */
  list(): Promise<ConsumerView[]>;
}

/**
 * The durable of one cluster: its own subjects only, the latest value of each object first
 * (an agent that was away reads the current state, not the history), pull (no deliver_subject),
 * acknowledged one by one after the apply, its state kept as the setup says.
 */
export function agentConsumerConfig(
  cluster: string,
  setup: AgentDurableSetup,
): Partial<ConsumerConfig> & { durable_name: string } {
  return {
    durable_name: agentConsumerName(cluster),
    filter_subject: desiredFilter(cluster),
    deliver_policy: DeliverPolicy.LastPerSubject,
    ack_policy: AckPolicy.Explicit,
    ack_wait: DESIRED_ACK_WAIT_MS * NANOS_PER_MS,
    max_deliver: -1,
    max_ack_pending: 1000,
    mem_storage: setup.memory,
    num_replicas: setup.replicas,
  };
}

/** `streamReplicas`: what a durable naming no replicas has. */
export function consumerView(info: Pick<ConsumerInfo, 'name' | 'config'>, streamReplicas: number): ConsumerView {
  const c = info.config;
  const filters = c.filter_subjects?.length ? c.filter_subjects : c.filter_subject ? [c.filter_subject] : [];
  return {
    name: info.name,
    filterSubjects: filters,
    deliverSubject: c.deliver_subject,
    deliverPolicy: c.deliver_policy,
    ackPolicy: c.ack_policy,
    ackWaitMs: Math.round((c.ack_wait ?? 0) / NANOS_PER_MS),
    memory: c.mem_storage === true,
    replicas: c.num_replicas || streamReplicas,
  };
}

function isApiError(err: unknown, code: number): boolean {
  return err instanceof JetStreamApiError && err.code === code;
}

export interface AgentConsumersDeps {
  jsm: JetStreamManager;
  setup: AgentDurableSetup;
  /** The DESIRED stream's replicas. */
  streamReplicas: number;
  logger: Logger;
  metrics: HubMetrics;
}

/** `call`'s answer, or `absent` when the consumer does not exist. */
async function unlessNotFound<T, A>(call: Promise<T>, absent: A): Promise<T | A> {
  try {
    return await call;
  } catch (err) {
    if (isApiError(err, JetStreamApiCodes.ConsumerNotFound)) return absent;
    throw err;
  }
}

const info = (jsm: JetStreamManager, name: string): Promise<ConsumerInfo | undefined> =>
  unlessNotFound(jsm.consumers.info(DESIRED_STREAM, name), undefined);

const deleteConsumer = (jsm: JetStreamManager, name: string): Promise<boolean> =>
  unlessNotFound(jsm.consumers.delete(DESIRED_STREAM, name), false);

export function createAgentConsumers(deps: AgentConsumersDeps): AgentConsumers {
  const { jsm, logger, metrics, setup } = deps;
  const view = (ci: Pick<ConsumerInfo, 'name' | 'config'>): ConsumerView => consumerView(ci, deps.streamReplicas);

  /** Creates the durable; another replica creating the same one at the same time is fine. */
  async function create(cluster: string): Promise<void> {
    try {
      await jsm.consumers.add(DESIRED_STREAM, agentConsumerConfig(cluster, setup));
    } catch (err) {
      const existing = await info(jsm, agentConsumerName(cluster));
      if (!existing || consumerDrift(cluster, view(existing), setup).length > 0) throw err;
    }
  }

  return {
    async ensure(cluster) {
      const name = agentConsumerName(cluster);
      const existing = await info(jsm, name);
      if (!existing) {
        await create(cluster);
        metrics.agentConsumerChanges.inc({ action: 'created', reason: '' });
        logger.info({ consumer: name }, 'created the agent durable');
        return { action: 'created' };
      }
      const current = view(existing);
      const drift = consumerDrift(cluster, current, setup);
      if (drift.length === 0) {
        const tuning = consumerTuning(current);
        if (tuning.length === 0) return { action: 'unchanged' };
        await jsm.consumers.update(DESIRED_STREAM, name, { ack_wait: DESIRED_ACK_WAIT_MS * NANOS_PER_MS });
        metrics.agentConsumerChanges.inc({ action: 'updated', reason: tuning.join('+') });
        logger.info({ consumer: name, tuning }, 'updated the agent durable in place');
        return { action: 'updated', tuning };
      }
      // A durable's filter, push target, deliver policy and storage cannot all be updated in
      // place; a new one redelivers the latest value of every object, which the agent applies by
      // generation.
      await deleteConsumer(jsm, name);
      await create(cluster);
      metrics.agentConsumerChanges.inc({ action: 'repaired', reason: drift.join('+') });
      logger.warn({ consumer: name, drift }, "the agent durable differs from the hub's; created it again");
      return { action: 'repaired', drift };
    },

    async remove(name) {
      const existed = await deleteConsumer(jsm, name);
      if (existed) {
        metrics.agentConsumerChanges.inc({ action: 'deleted', reason: 'not_accepted' });
        logger.info({ consumer: name }, 'deleted the durable of a cluster that is not accepted');
      }
      return existed;
    },

    async list() {
      const views: ConsumerView[] = [];
      for await (const ci of jsm.consumers.list(DESIRED_STREAM)) {
        if (ci.name.startsWith(AGENT_CONSUMER_PREFIX)) views.push(view(ci));
      }
      return views;
    },
  };
}
