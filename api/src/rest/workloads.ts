/**
 * Workloads: a Kruise kind + spec template + placement + per-cluster overrides. The spec is
 * validated by the api package's Kruise validators, exactly as the cluster would validate it.
 */
import { Type, type Static } from 'typebox';
import { WorkloadKind } from '../protocol/messages.js';
import { LabelMap, LabelSelector, Page, PageQuery, Revision } from './common.js';

const KubeName = Type.String({ minLength: 1, maxLength: 253 });
const JsonObject = Type.Record(Type.String(), Type.Unknown());

export const WorkloadMetadata = Type.Object(
  { labels: Type.Optional(LabelMap), annotations: Type.Optional(Type.Record(Type.String(), Type.String())) },
  { additionalProperties: false },
);
export type WorkloadMetadata = Static<typeof WorkloadMetadata>;

/** Which clusters get the workload: those whose labels match `clusterSelector`. */
export const Placement = Type.Object({ clusterSelector: LabelSelector }, { additionalProperties: false });
export type Placement = Static<typeof Placement>;

/**
 * Another workload this one depends on: in each cluster, a rollout of this workload starts there
 * only once that one is healthy at the revision the hub sent it there. `namespace` defaults to the
 * dependent's own.
 */
export const WorkloadRef = Type.Object(
  { kind: WorkloadKind, name: KubeName, namespace: Type.Optional(Type.String({ maxLength: 63 })) },
  { additionalProperties: false },
);
export type WorkloadRef = Static<typeof WorkloadRef>;
/** At most this many dependencies per workload. */
export const MAX_DEPENDENCIES = 16;

/** Per cluster name, a JSON merge patch (RFC 7396) applied to the spec for that cluster only. */
export const Overrides = Type.Record(Type.String(), JsonObject);
export type Overrides = Static<typeof Overrides>;

/**
 * 'Immediate' (default): every spec change reaches all targeted clusters at once. 'Rollout': a
 * spec change only creates a revision; clusters move to it through a rollout.
 */
export const UpdatePolicy = Type.Union([Type.Literal('Immediate'), Type.Literal('Rollout')]);
export type UpdatePolicy = Static<typeof UpdatePolicy>;

const WorkloadTemplate = {
  /**
   * The version `metadata` and `spec` are written at: apps.kruise.io/v1alpha1 (default) or, for
   * the kinds OpenKruise v1.9 serves so (SidecarSet, ImagePullJob), v1beta1. The hub stores and
   * sends v1alpha1, converting on the way in.
   */
  apiVersion: Type.Optional(Type.String()),
  metadata: Type.Optional(WorkloadMetadata),
  spec: JsonObject,
  placement: Placement,
  overrides: Type.Optional(Overrides),
  updatePolicy: Type.Optional(UpdatePolicy),
  dependsOn: Type.Optional(Type.Array(WorkloadRef, { maxItems: MAX_DEPENDENCIES })),
};

export const CreateWorkloadRequest = Type.Object(
  {
    kind: WorkloadKind,
    name: KubeName,
    /** Required for CloneSet and ImagePullJob; must be absent or '' for SidecarSet. */
    namespace: Type.Optional(Type.String({ maxLength: 63 })),
    ...WorkloadTemplate,
  },
  { additionalProperties: false },
);
export type CreateWorkloadRequest = Static<typeof CreateWorkloadRequest>;

/** Full replacement of the template; kind, name and namespace are immutable. */
export const UpdateWorkloadRequest = Type.Object(WorkloadTemplate, { additionalProperties: false });
export type UpdateWorkloadRequest = Static<typeof UpdateWorkloadRequest>;

export const Workload = Type.Object({
  id: Type.String(),
  kind: WorkloadKind,
  name: Type.String(),
  namespace: Type.String(),
  metadata: WorkloadMetadata,
  spec: JsonObject,
  placement: Placement,
  overrides: Overrides,
  revision: Type.Integer(),
  updatePolicy: UpdatePolicy,
  /** The revision clusters get unless a rollout holds them elsewhere ('Rollout' policy). */
  stableRevision: Type.Integer(),
  /** The workloads this one waits for in each cluster of its rollouts (namespaces filled in). */
  dependsOn: Type.Array(WorkloadRef),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export type Workload = Static<typeof Workload>;

export const WorkloadList = Page(Workload);
export type WorkloadList = Static<typeof WorkloadList>;

export const WorkloadListQuery = Type.Object({
  ...PageQuery.properties,
  kind: Type.Optional(WorkloadKind),
  namespace: Type.Optional(Type.String({ maxLength: 63 })),
});
export type WorkloadListQuery = Static<typeof WorkloadListQuery>;

/** An immutable snapshot of everything that shapes the objects sent to clusters. */
export const WorkloadRevision = Type.Object({
  workloadId: Type.String(),
  revision: Type.Integer(),
  hash: Type.String(),
  metadata: WorkloadMetadata,
  spec: JsonObject,
  overrides: Overrides,
  createdAt: Type.String(),
  createdBy: Type.String(),
});
export type WorkloadRevision = Static<typeof WorkloadRevision>;

export const WorkloadRevisionList = Page(WorkloadRevision);
export type WorkloadRevisionList = Static<typeof WorkloadRevisionList>;

export const WorkloadIdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
export type WorkloadIdParams = Static<typeof WorkloadIdParams>;

export const WorkloadRevisionParams = Type.Object({ id: Type.String({ maxLength: 64 }), revision: Revision });
export type WorkloadRevisionParams = Static<typeof WorkloadRevisionParams>;
