/**
 * The workload admission policy: Pod Security Standards baseline for every pod template the hub
 * distributes, no workloads in the clusters' system namespaces, and admin-managed exceptions
 * that lift named controls for one namespace or one workload (docs/workload-policy.md).
 */
import { Type, type Static } from 'typebox';
import { WorkloadKind } from '../protocol/messages.js';

/** The controls the policy enforces; an exception's `allow` lists some of them. */
export const WORKLOAD_POLICY_CONTROLS = [
  'hostProcess',
  'hostNamespaces',
  'privileged',
  'capabilities',
  'hostPathVolumes',
  'hostPorts',
  'appArmor',
  'seLinux',
  'procMount',
  'seccomp',
  'sysctls',
  'systemNamespaces',
] as const;
export type WorkloadPolicyControl = (typeof WORKLOAD_POLICY_CONTROLS)[number];

export const WorkloadPolicyControlSchema = Type.Unsafe<WorkloadPolicyControl>({
  type: 'string',
  enum: [...WORKLOAD_POLICY_CONTROLS],
});

/** What the hub enforces when no exception applies. */
export const WorkloadPolicy = Type.Object({
  level: Type.Literal('baseline'),
  systemNamespaces: Type.Array(Type.String()),
  controls: Type.Array(WorkloadPolicyControlSchema),
});
export type WorkloadPolicy = Static<typeof WorkloadPolicy>;

/**
 * Which workloads an exception covers: every workload of `namespace`, or one workload by `kind`
 * and `name` (with `namespace`, or without it for a cluster-scoped SidecarSet).
 */
export const PolicyExceptionMatch = Type.Object(
  {
    namespace: Type.Optional(Type.String({ maxLength: 63 })),
    kind: Type.Optional(WorkloadKind),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
  },
  { additionalProperties: false },
);
export type PolicyExceptionMatch = Static<typeof PolicyExceptionMatch>;

export const PutPolicyExceptionRequest = Type.Object(
  {
    match: PolicyExceptionMatch,
    allow: Type.Array(WorkloadPolicyControlSchema, { minItems: 1, maxItems: WORKLOAD_POLICY_CONTROLS.length }),
    /** Why the exception exists (kept with it and in the audit log). */
    reason: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);
export type PutPolicyExceptionRequest = Static<typeof PutPolicyExceptionRequest>;

export const PolicyException = Type.Object({
  name: Type.String(),
  match: PolicyExceptionMatch,
  allow: Type.Array(WorkloadPolicyControlSchema),
  reason: Type.String(),
  createdAt: Type.String(),
  createdBy: Type.String(),
  updatedAt: Type.String(),
  updatedBy: Type.String(),
});
export type PolicyException = Static<typeof PolicyException>;

export const PolicyExceptionList = Type.Object({ items: Type.Array(PolicyException) });
export type PolicyExceptionList = Static<typeof PolicyExceptionList>;

export const PolicyExceptionNameParams = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' }),
});
export type PolicyExceptionNameParams = Static<typeof PolicyExceptionNameParams>;
