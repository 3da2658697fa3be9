/**
 * The NATS accounts of the hub ↔ agent link (docs/adr/0012-nats-decentralized-auth.md): what the
 * hub's account exports, what each cluster's account imports, and the permissions of a cluster's
 * agent inside its account. Each is derived from subjects.ts, so the hub's JWTs, the agent's
 * client and the tests agree on one list.
 *
 * A cluster account reaches the hub's JetStream API under the local prefix
 * AGENT_JS_API_PREFIX: nats-server answers `$JS.API.>` in every account from that account's own
 * JetStream (disabled in cluster accounts), ahead of an import of the same subject.
 */
import {
  DESIRED_PREFIX,
  DESIRED_STREAM,
  HEARTBEAT_PREFIX,
  STATUS_PREFIX,
  agentConsumerName,
  agentInboxPrefix,
  heartbeatSubject,
} from './subjects.js';

/** The JetStream API as the hub's account serves it. */
export const JS_API_PREFIX = '$JS.API';
/** The JetStream API prefix an agent's client uses (`jetstream(nc, { apiPrefix })`). */
export const AGENT_JS_API_PREFIX = 'flotilla.js';
const ACK_PREFIX = `$JS.ACK.${DESIRED_STREAM}`;

/** One service the hub's account exports to cluster accounts. */
export interface HubServiceExport {
  name: string;
  subject: string;
  /** `Stream`: the service answers a request with many messages (a pull). */
  responseType?: 'Stream';
}

/** One service a cluster account imports from the hub's account. */
export interface ClusterServiceImport {
  name: string;
  /** The subject in the hub's account. */
  subject: string;
  /** The subject the agent publishes to in its own account. */
  localSubject: string;
}

const consumerApi = (op: string, consumer: string): string => `CONSUMER.${op}.${DESIRED_STREAM}.${consumer}`;

/** What the hub's account exports: agents' consumer reads and acks, status and heartbeats. */
export function hubServiceExports(): HubServiceExport[] {
  return [
    { name: 'desired-consumer-info', subject: `${JS_API_PREFIX}.${consumerApi('INFO', '*')}` },
    {
      name: 'desired-consumer-next',
      subject: `${JS_API_PREFIX}.${consumerApi('MSG.NEXT', '*')}`,
      responseType: 'Stream',
    },
    { name: 'desired-ack', subject: `${ACK_PREFIX}.>` },
    { name: 'status', subject: `${STATUS_PREFIX}.>` },
    { name: 'heartbeat', subject: `${HEARTBEAT_PREFIX}.>` },
  ];
}

/** What cluster `cluster`'s account imports: exactly its own durable, status and heartbeat. */
export function clusterServiceImports(cluster: string): ClusterServiceImport[] {
  const consumer = agentConsumerName(cluster);
  const api = (op: string): ClusterServiceImport => ({
    name: `desired-consumer-${op === 'INFO' ? 'info' : 'next'}`,
    subject: `${JS_API_PREFIX}.${consumerApi(op, consumer)}`,
    localSubject: `${AGENT_JS_API_PREFIX}.${consumerApi(op, consumer)}`,
  });
  const same = (name: string, subject: string): ClusterServiceImport => ({ name, subject, localSubject: subject });
  return [
    api('INFO'),
    api('MSG.NEXT'),
    same('desired-ack', `${ACK_PREFIX}.${consumer}.>`),
    same('status', `${STATUS_PREFIX}.${cluster}.>`),
    same('heartbeat', heartbeatSubject(cluster)),
  ];
}

/**
 * The permissions of a cluster's agent in its account: publish only to its imports (its own
 * durable's INFO, MSG.NEXT and ACK, its own status and heartbeat), subscribe only to its inbox.
 * No consumer create permission in any form: the hub owns every durable (ADR 0008).
 */
export function agentPermissions(cluster: string): { publish: { allow: string[] }; subscribe: { allow: string[] } } {
  return {
    publish: { allow: clusterServiceImports(cluster).map((i) => i.localSubject) },
    subscribe: { allow: [`${agentInboxPrefix(cluster)}.>`] },
  };
}

/** The hub's own subjects an agent must never reach (for tests and documentation). */
export const HUB_ONLY_SUBJECTS = [`${DESIRED_PREFIX}.>`, `${JS_API_PREFIX}.>`] as const;
