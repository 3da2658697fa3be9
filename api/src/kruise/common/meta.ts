/**
 * Plain Kubernetes types the Kruise kinds embed: ObjectMeta, LabelSelector, references and
 * conditions, with the fields and JSON names of k8s.io/apimachinery and k8s.io/api.
 */
import Type, { type Static } from 'typebox';
import { int64, opaqueObject, stringList, stringMap, strictObject, time } from './markers.js';

/** metav1.OwnerReference. */
export const OwnerReferenceSchema = strictObject(
  {
    apiVersion: Type.String(),
    kind: Type.String(),
    name: Type.String(),
    uid: Type.String(),
    controller: Type.Optional(Type.Boolean()),
    blockOwnerDeletion: Type.Optional(Type.Boolean()),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);
export type OwnerReference = Static<typeof OwnerReferenceSchema>;

/**
 * metav1.ObjectMeta as a client may send or read it. The CRD only declares `type: object` here:
 * the apiserver owns metadata and validates it itself.
 */
export const ObjectMetaSchema = strictObject({
  name: Type.Optional(Type.String()),
  generateName: Type.Optional(Type.String()),
  namespace: Type.Optional(Type.String()),
  selfLink: Type.Optional(Type.String()),
  uid: Type.Optional(Type.String()),
  resourceVersion: Type.Optional(Type.String()),
  generation: Type.Optional(int64()),
  creationTimestamp: Type.Optional(time()),
  deletionTimestamp: Type.Optional(time()),
  deletionGracePeriodSeconds: Type.Optional(int64()),
  labels: Type.Optional(stringMap()),
  annotations: Type.Optional(stringMap()),
  ownerReferences: Type.Optional(Type.Array(OwnerReferenceSchema)),
  finalizers: Type.Optional(stringList()),
  managedFields: Type.Optional(Type.Array(opaqueObject({}))),
});
export type ObjectMeta = Static<typeof ObjectMetaSchema>;

/** metav1.LabelSelectorRequirement. */
export const LabelSelectorRequirementSchema = strictObject({
  key: Type.String(),
  operator: Type.String(),
  values: Type.Optional(stringList()),
});
export type LabelSelectorRequirement = Static<typeof LabelSelectorRequirementSchema>;

/** metav1.LabelSelector; an empty selector selects everything. */
export const LabelSelectorSchema = strictObject(
  {
    matchLabels: Type.Optional(stringMap()),
    matchExpressions: Type.Optional(Type.Array(LabelSelectorRequirementSchema)),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);
export type LabelSelector = Static<typeof LabelSelectorSchema>;

/** corev1.ObjectFieldSelector, a downward-API field reference. */
export const ObjectFieldSelectorSchema = strictObject(
  { apiVersion: Type.Optional(Type.String()), fieldPath: Type.String() },
  { 'x-kubernetes-map-type': 'atomic' },
);
export type ObjectFieldSelector = Static<typeof ObjectFieldSelectorSchema>;

/** corev1.LocalObjectReference, e.g. an image pull secret. */
export const LocalObjectReferenceSchema = strictObject(
  { name: Type.Optional(Type.String()) },
  { 'x-kubernetes-map-type': 'atomic' },
);
export type LocalObjectReference = Static<typeof LocalObjectReferenceSchema>;

/** corev1.ObjectReference. */
export const ObjectReferenceSchema = strictObject(
  {
    apiVersion: Type.Optional(Type.String()),
    fieldPath: Type.Optional(Type.String()),
    kind: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    namespace: Type.Optional(Type.String()),
    resourceVersion: Type.Optional(Type.String()),
    uid: Type.Optional(Type.String()),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);
export type ObjectReference = Static<typeof ObjectReferenceSchema>;

/** A workload condition `{type, status, lastTransitionTime, reason, message}`. */
export const ConditionSchema = strictObject({
  type: Type.String(),
  status: Type.String(),
  lastTransitionTime: Type.Optional(time()),
  reason: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
});
export type Condition = Static<typeof ConditionSchema>;
