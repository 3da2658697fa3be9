/** Fleet status: per workload one row per cluster plus an aggregate; per cluster every workload. */
import { Type, type Static } from 'typebox';
import { ObjectHealth, StatusCounts, WorkloadKind } from '../protocol/messages.js';
import { PageQuery } from './common.js';

/** `Pending` means the cluster has not reported on the object yet. */
export const StatusHealth = Type.Union([ObjectHealth, Type.Literal('Pending')]);
export type StatusHealth = Static<typeof StatusHealth>;

export const StatusQuery = Type.Object({
  ...PageQuery.properties,
  labelSelector: Type.Optional(Type.String({ maxLength: 2048 })),
  health: Type.Optional(StatusHealth),
});
export type StatusQuery = Static<typeof StatusQuery>;

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/** One object in one cluster: what the hub wants and what the agent last reported. */
export const ObjectStatusRow = Type.Object({
  cluster: Type.String(),
  workloadId: Type.String(),
  workloadName: Type.String(),
  kind: WorkloadKind,
  namespace: Type.String(),
  name: Type.String(),
  /** Revision the hub wants in this cluster. */
  desiredRevision: Type.Integer(),
  desiredGeneration: Type.Integer(),
  /** Revision and generation the latest report refers to. */
  reportedRevision: Nullable(Type.Integer()),
  reportedGeneration: Nullable(Type.Integer()),
  observedGeneration: Nullable(Type.Integer()),
  /** True when the latest report is about the current desired generation. */
  upToDate: Type.Boolean(),
  counts: Nullable(StatusCounts),
  health: StatusHealth,
  message: Type.String(),
  reportedAt: Nullable(Type.String()),
  ageSeconds: Nullable(Type.Number()),
});
export type ObjectStatusRow = Static<typeof ObjectStatusRow>;

export const StatusAggregate = Type.Object({
  clusters: Type.Integer(),
  upToDate: Type.Integer(),
  byHealth: Type.Record(Type.String(), Type.Integer()),
  replicas: Type.Integer(),
  readyReplicas: Type.Integer(),
  updatedReplicas: Type.Integer(),
  availableReplicas: Type.Integer(),
});
export type StatusAggregate = Static<typeof StatusAggregate>;

export const WorkloadStatus = Type.Object({
  workloadId: Type.String(),
  revision: Type.Integer(),
  aggregate: StatusAggregate,
  items: Type.Array(ObjectStatusRow),
  continue: Type.Optional(Type.String()),
});
export type WorkloadStatus = Static<typeof WorkloadStatus>;

export const ClusterWorkloadStatus = Type.Object({
  cluster: Type.String(),
  items: Type.Array(ObjectStatusRow),
  continue: Type.Optional(Type.String()),
});
export type ClusterWorkloadStatus = Static<typeof ClusterWorkloadStatus>;
