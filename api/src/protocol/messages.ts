/**
 * Message envelopes of the hub ↔ agent protocol. Each message carries a schema version `v`;
 * receivers validate every message against these schemas and drop (and count) anything that
 * does not match, so a malformed or foreign message can never crash them.
 *
 * Ordering and idempotency: `generation` is the hub's per-(cluster, object) sequence of desired
 * changes. An agent never applies a desired message older than what it already applied, and the
 * hub never lets a status report for an older generation (or one JetStream stored earlier for the
 * same generation) overwrite a newer one (status-order.ts).
 */
import { Type, type Static } from 'typebox';

export const PROTOCOL_VERSION = 1;

/** Kinds the hub distributes. */
export const WorkloadKind = Type.Union([
  Type.Literal('CloneSet'),
  Type.Literal('SidecarSet'),
  Type.Literal('ImagePullJob'),
  Type.Literal('BroadcastJob'),
  Type.Literal('DaemonSet'),
  Type.Literal('StatefulSet'),
  Type.Literal('PodUnavailableBudget'),
  Type.Literal('WorkloadSpread'),
]);
export type WorkloadKind = Static<typeof WorkloadKind>;

/** Health of one object in one cluster, as the agent judges it. */
export const ObjectHealth = Type.Union([
  Type.Literal('Healthy'),
  Type.Literal('Progressing'),
  Type.Literal('Degraded'),
  Type.Literal('Missing'),
  Type.Literal('Deleted'),
  Type.Literal('Unknown'),
]);
export type ObjectHealth = Static<typeof ObjectHealth>;

const Name = Type.String({ minLength: 1, maxLength: 253 });
/**
 * Bounded to what the hub stores (bigint and int columns) and a JSON number holds exactly: one
 * report with an out-of-range number would otherwise fail its whole batch's write, again on
 * every redelivery.
 */
const Generation = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
const Int32 = Type.Integer({ minimum: 0, maximum: 2_147_483_647 });

/** Labels and annotations the hub stamps on every object it distributes. */
export const MANAGED_BY_LABEL = 'flotilla.io/managed-by';
export const MANAGED_BY_HUB = 'hub';
export const WORKLOAD_ANNOTATION = 'flotilla.io/workload';
export const REVISION_ANNOTATION = 'flotilla.io/revision';
export const GENERATION_ANNOTATION = 'flotilla.io/generation';
export const CLUSTER_ANNOTATION = 'flotilla.io/cluster';

/** hub → agent: the desired state of one object, or its tombstone. */
export const DesiredMessage = Type.Object(
  {
    v: Type.Literal(PROTOCOL_VERSION),
    cluster: Name,
    kind: WorkloadKind,
    namespace: Type.String({ maxLength: 253 }),
    name: Name,
    workloadId: Type.String({ minLength: 1, maxLength: 64 }),
    revision: Int32,
    generation: Generation,
    deleted: Type.Boolean(),
    /** The full object to apply (absent on tombstones). */
    manifest: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    publishedAt: Type.String(),
  },
  { additionalProperties: false },
);
export type DesiredMessage = Static<typeof DesiredMessage>;

/** Replica counts an agent reports (CloneSet-like; other kinds report what applies). */
export const StatusCounts = Type.Object(
  {
    replicas: Int32,
    readyReplicas: Int32,
    updatedReplicas: Int32,
    updatedReadyReplicas: Int32,
    availableReplicas: Int32,
  },
  { additionalProperties: false },
);
export type StatusCounts = Static<typeof StatusCounts>;

/** agent → hub: the latest observed state of one object. */
export const StatusMessage = Type.Object(
  {
    v: Type.Literal(PROTOCOL_VERSION),
    cluster: Name,
    kind: WorkloadKind,
    namespace: Type.String({ maxLength: 253 }),
    name: Name,
    workloadId: Type.String({ maxLength: 64 }),
    /** Workload revision of the applied manifest. */
    revision: Int32,
    /** Hub generation of the applied desired message. */
    generation: Generation,
    /** metadata.generation the in-cluster controller has observed (status.observedGeneration). */
    observedGeneration: Generation,
    counts: StatusCounts,
    health: ObjectHealth,
    message: Type.String({ maxLength: 1024 }),
    reportedAt: Type.String({ minLength: 1, maxLength: 64 }),
  },
  { additionalProperties: false },
);
export type StatusMessage = Static<typeof StatusMessage>;

/** agent → hub: liveness and versions. */
export const HeartbeatMessage = Type.Object(
  {
    v: Type.Literal(PROTOCOL_VERSION),
    cluster: Name,
    agentVersion: Type.String({ maxLength: 64 }),
    kubernetesVersion: Type.String({ maxLength: 64 }),
    managedObjects: Type.Integer({ minimum: 0 }),
    sentAt: Type.String({ minLength: 1, maxLength: 64 }),
    /**
     * Random per start of the agent's hub link. A new value tells the hub that the link
     * (re)started with an empty memory of what it applied; the hub then republishes the cluster's
     * live desired objects, so the agent can guard all of them against drift again.
     */
    linkId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);
export type HeartbeatMessage = Static<typeof HeartbeatMessage>;
