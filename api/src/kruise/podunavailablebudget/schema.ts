/**
 * PodUnavailableBudget (policy.kruise.io/v1alpha1, namespaced, short name `pub`): how many of a
 * set of pods may be unavailable at once, field for field as OpenKruise v1.9 defines it. Unlike a
 * PodDisruptionBudget it also guards in-place updates and resizes (see the agent's pub webhook).
 * The pods are chosen by a label selector or by a workload (targetRef), never both.
 */
import Type, { type Static } from 'typebox';
import { int32, intOrString, mapOf, strictObject, time } from '../common/markers.js';
import { ConditionSchema, LabelSelectorSchema, ObjectMetaSchema } from '../common/meta.js';
import type { KruiseKind, PUB_API_VERSION } from '../constants.js';

/** The workload whose pods the budget covers. */
export const TargetReferenceSchema = strictObject(
  {
    apiVersion: Type.Optional(Type.String({ description: 'API version of the workload, e.g. apps/v1.' })),
    kind: Type.Optional(Type.String({ description: 'Kind of the workload, e.g. CloneSet or Deployment.' })),
    name: Type.Optional(Type.String({ description: 'Name of the workload, in the budget’s namespace.' })),
  },
  { description: 'A workload in the same namespace.' },
);
export type TargetReference = Static<typeof TargetReferenceSchema>;

export const PodUnavailableBudgetSpecSchema = strictObject(
  {
    selector: Type.Optional(LabelSelectorSchema),
    targetRef: Type.Optional(TargetReferenceSchema),
    maxUnavailable: Type.Optional(
      intOrString({ description: 'Pods that may be unavailable at once: a count or a percentage of the replicas.' }),
    ),
    minAvailable: Type.Optional(
      intOrString({ description: 'Pods that must stay available: a count or a percentage of the replicas.' }),
    ),
  },
  { description: 'Desired state of a PodUnavailableBudget: the pods (selector or targetRef) and the budget.' },
);
export type PodUnavailableBudgetSpec = Static<typeof PodUnavailableBudgetSpecSchema>;

export const PodUnavailableBudgetStatusSchema = strictObject(
  {
    observedGeneration: Type.Optional(int32({ description: 'The generation this status was computed for.' })),
    disruptedPods: Type.Optional(
      mapOf(time(), {
        description: 'Pods whose deletion, eviction or resize was admitted, not yet seen by the controller.',
      }),
    ),
    unavailablePods: Type.Optional(
      mapOf(time(), { description: 'Pods whose in-place update was admitted, not yet seen by the controller.' }),
    ),
    unavailableAllowed: int32({ description: 'How many more pods may become unavailable now.' }),
    currentAvailable: int32({ description: 'Pods available now.' }),
    desiredAvailable: int32({ description: 'Pods that must stay available.' }),
    totalReplicas: int32({ description: 'Pods the budget expects (the workloads’ replicas).' }),
    conditions: Type.Optional(Type.Array(ConditionSchema, { description: 'Problems the controller found.' })),
  },
  { description: 'Observed state of a PodUnavailableBudget.' },
);
export type PodUnavailableBudgetStatus = Static<typeof PodUnavailableBudgetStatusSchema>;

export const PodUnavailableBudgetSchema = strictObject({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: Type.Optional(ObjectMetaSchema),
  spec: PodUnavailableBudgetSpecSchema,
  status: Type.Optional(PodUnavailableBudgetStatusSchema),
});

export type PodUnavailableBudget = Omit<Static<typeof PodUnavailableBudgetSchema>, 'apiVersion' | 'kind'> & {
  apiVersion: typeof PUB_API_VERSION;
  kind: typeof KruiseKind.PodUnavailableBudget;
};
