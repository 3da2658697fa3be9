/**
 * NATS subject names and JetStream object names of the hub ↔ agent protocol. Every subject is
 * built and parsed here, so the hub, the agent and the per-cluster permissions agree on one
 * grammar:
 *
 *   flotilla.desired.<cluster>.<kind>.<namespace>.<name>   hub → agent, last value per object
 *   flotilla.status.<cluster>.<kind>.<namespace>.<name>    agent → hub
 *   flotilla.heartbeat.<cluster>                           agent → hub
 *
 * Kubernetes names may contain dots, which NATS reads as token separators, so dots are encoded
 * as `_` (never valid in a Kubernetes name, hence reversible). Cluster-scoped objects (SidecarSet)
 * use `_` as their namespace token.
 */

/** Stream that holds the last desired value of every object of every cluster. */
export const DESIRED_STREAM = 'DESIRED';
/** Stream that buffers status reports and heartbeats until the hub has stored them. */
export const STATUS_STREAM = 'STATUS';
/** The hub's durable consumer on the status stream (shared by all hub replicas). */
export const HUB_STATUS_CONSUMER = 'hub-status';
/**
 * How long an agent's durable waits for the ack of a desired message before redelivering it. A
 * message the server handed to a pull request of a link that just went away (an agent restart)
 * reaches the new link only after this, so it is short; an agent still working on a message
 * says so every DESIRED_WORKING_INTERVAL_MS and keeps it.
 */
export const DESIRED_ACK_WAIT_MS = 10_000;
export const DESIRED_WORKING_INTERVAL_MS = 3_000;

export const DESIRED_PREFIX = 'flotilla.desired';
export const STATUS_PREFIX = 'flotilla.status';
export const HEARTBEAT_PREFIX = 'flotilla.heartbeat';

/** A cluster name is a DNS-1123 label: it becomes one subject token and part of a consumer name. */
const CLUSTER_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** Kubernetes object names and namespaces (DNS-1123 subdomain characters). */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const KIND = /^[A-Za-z][A-Za-z0-9]*$/;

export function isValidClusterName(name: string): boolean {
  return CLUSTER_NAME.test(name);
}

/** Identifies one object in one cluster; `namespace` is '' for cluster-scoped kinds. */
export interface ObjectKey {
  kind: string;
  namespace: string;
  name: string;
}

function encodeToken(value: string): string {
  return value === '' ? '_' : value.replaceAll('.', '_');
}

function decodeToken(token: string): string {
  return token === '_' ? '' : token.replaceAll('_', '.');
}

function assertCluster(cluster: string): void {
  if (!isValidClusterName(cluster)) throw new Error(`invalid cluster name ${JSON.stringify(cluster)}`);
}

function objectTokens(key: ObjectKey): string {
  if (!KIND.test(key.kind)) throw new Error(`invalid kind ${JSON.stringify(key.kind)}`);
  if (key.namespace !== '' && !OBJECT_NAME.test(key.namespace)) {
    throw new Error(`invalid namespace ${JSON.stringify(key.namespace)}`);
  }
  if (!OBJECT_NAME.test(key.name)) throw new Error(`invalid name ${JSON.stringify(key.name)}`);
  return `${key.kind}.${encodeToken(key.namespace)}.${encodeToken(key.name)}`;
}

export function desiredSubject(cluster: string, key: ObjectKey): string {
  assertCluster(cluster);
  return `${DESIRED_PREFIX}.${cluster}.${objectTokens(key)}`;
}

export function statusSubject(cluster: string, key: ObjectKey): string {
  assertCluster(cluster);
  return `${STATUS_PREFIX}.${cluster}.${objectTokens(key)}`;
}

export function heartbeatSubject(cluster: string): string {
  assertCluster(cluster);
  return `${HEARTBEAT_PREFIX}.${cluster}`;
}

/** The filter an agent's consumer uses: every desired object of its own cluster. */
export function desiredFilter(cluster: string): string {
  assertCluster(cluster);
  return `${DESIRED_PREFIX}.${cluster}.>`;
}

/** Durable consumer name of a cluster's agent; permissions are granted on exactly this name. */
export function agentConsumerName(cluster: string): string {
  assertCluster(cluster);
  return `agent-${cluster}`;
}

/** NATS user of a cluster's agent. */
export function agentNatsUser(cluster: string): string {
  assertCluster(cluster);
  return `agent-${cluster}`;
}

/** Inbox prefix of a cluster's agent, so it may subscribe only to its own replies. */
export function agentInboxPrefix(cluster: string): string {
  assertCluster(cluster);
  return `_INBOX_${cluster}`;
}

export interface ParsedObjectSubject extends ObjectKey {
  cluster: string;
}

function parseObjectSubject(prefix: string, subject: string): ParsedObjectSubject | undefined {
  if (!subject.startsWith(`${prefix}.`)) return undefined;
  const tokens = subject.slice(prefix.length + 1).split('.');
  if (tokens.length !== 4) return undefined;
  const [cluster, kind, ns, name] = tokens as [string, string, string, string];
  // The empty namespace is written `_`: an empty token would be a second subject for the object.
  if (ns === '' || !isValidClusterName(cluster) || !KIND.test(kind)) return undefined;
  const key = { cluster, kind, namespace: decodeToken(ns), name: decodeToken(name) };
  if (key.namespace !== '' && !OBJECT_NAME.test(key.namespace)) return undefined;
  if (!OBJECT_NAME.test(key.name)) return undefined;
  return key;
}

/** Parses a desired-state subject; undefined when it is not one. */
export function parseDesiredSubject(subject: string): ParsedObjectSubject | undefined {
  return parseObjectSubject(DESIRED_PREFIX, subject);
}

/** Parses a status subject; undefined when it is not one. */
export function parseStatusSubject(subject: string): ParsedObjectSubject | undefined {
  return parseObjectSubject(STATUS_PREFIX, subject);
}

/** Parses a heartbeat subject into its cluster name; undefined when it is not one. */
export function parseHeartbeatSubject(subject: string): string | undefined {
  if (!subject.startsWith(`${HEARTBEAT_PREFIX}.`)) return undefined;
  const cluster = subject.slice(HEARTBEAT_PREFIX.length + 1);
  return isValidClusterName(cluster) ? cluster : undefined;
}
