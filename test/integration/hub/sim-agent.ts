/**
 * A cluster's agent played by a plain NATS client with the cluster's real credentials: it reads
 * its durable on the DESIRED stream (the one the hub created for it), and every `intervalMs`
 * publishes a heartbeat and a status report for every live object it was sent, at the revision
 * and generation it was sent. Publishes that fail (NATS frozen, down) are simply tried again on
 * the next beat, as the real agent's passes do.
 */
import { randomUUID } from 'node:crypto';
import { jetstream, type ConsumerMessages, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  DESIRED_STREAM,
  PROTOCOL_VERSION,
  decodeDesired,
  encodeMessage,
  heartbeatSubject,
  statusSubject,
  type AgentCredentials,
  type DesiredMessage,
  type ObjectHealth,
  type StatusMessage,
} from '@flotilla/api';
import { eventually } from '../helpers/kube.js';

export interface SimAgent {
  /** The newest desired message per object (kind/namespace/name). */
  readonly desired: Map<string, DesiredMessage>;
  /** Heartbeats and reports stop (the agent goes silent) or start again. */
  silent: boolean;
  /** Sends one beat now (heartbeat and reports). */
  beat(): Promise<void>;
  stop(): Promise<void>;
}

export interface SimAgentOptions {
  intervalMs: number;
  health?: (d: DesiredMessage) => ObjectHealth;
  /** The link id its heartbeats carry (a new one per start, as the real agent does). */
  linkId?: string;
}

function report(d: DesiredMessage, health: ObjectHealth): StatusMessage {
  const replicas = Number((d.manifest as { spec?: { replicas?: number } } | undefined)?.spec?.replicas ?? 1);
  return {
    v: PROTOCOL_VERSION,
    cluster: d.cluster,
    kind: d.kind,
    namespace: d.namespace,
    name: d.name,
    workloadId: d.workloadId,
    revision: d.revision,
    generation: d.generation,
    observedGeneration: d.generation,
    counts: {
      replicas,
      readyReplicas: replicas,
      updatedReplicas: replicas,
      updatedReadyReplicas: replicas,
      availableReplicas: replicas,
    },
    health: d.deleted ? 'Deleted' : health,
    message: '',
    reportedAt: new Date().toISOString(),
  };
}

async function publishAll(js: JetStreamClient, agent: SimAgent, creds: AgentCredentials, o: SimAgentOptions) {
  const linkId = o.linkId ?? 'sim-link';
  await js.publish(
    heartbeatSubject(creds.cluster),
    encodeMessage({
      v: PROTOCOL_VERSION,
      cluster: creds.cluster,
      agentVersion: 'sim',
      kubernetesVersion: 'v1.36.3',
      managedObjects: agent.desired.size,
      sentAt: new Date().toISOString(),
      linkId,
    }),
    { timeout: 1000 },
  );
  for (const d of agent.desired.values()) {
    await js.publish(statusSubject(creds.cluster, d), encodeMessage(report(d, o.health?.(d) ?? 'Healthy')), {
      timeout: 1000,
    });
  }
}

export async function startSimAgent(
  nc: NatsConnection,
  creds: AgentCredentials,
  o: SimAgentOptions,
): Promise<SimAgent> {
  const js = jetstream(nc, { checkAPI: false, apiPrefix: creds.nats.apiPrefix });
  const consumer = await eventually(
    `the hub created ${creds.nats.consumer}`,
    () => js.consumers.get(DESIRED_STREAM, creds.nats.consumer).catch(() => undefined),
    30_000,
  );
  const key = (d: DesiredMessage): string => `${d.kind}/${d.namespace}/${d.name}`;
  const options = { linkId: o.linkId ?? `sim-${randomUUID()}`, ...o };
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const agent: SimAgent = {
    desired: new Map(),
    silent: false,
    beat: () => publishAll(js, agent, creds, options),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await messages.close();
    },
  };
  const messages: ConsumerMessages = await consumer.consume({
    callback: (m) => {
      const d = decodeDesired(m.data);
      if (d.ok && (agent.desired.get(key(d.value))?.generation ?? -1) <= d.value.generation) {
        agent.desired.set(key(d.value), d.value);
      }
      m.ack();
    },
  });
  const loop = (): void => {
    if (stopped) return;
    const beat = agent.silent ? Promise.resolve() : agent.beat();
    void beat
      .catch(() => undefined)
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, o.intervalMs);
      });
  };
  loop();
  return agent;
}
