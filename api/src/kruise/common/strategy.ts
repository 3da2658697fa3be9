/**
 * OpenKruise types shared by CloneSet and SidecarSet (apis/apps/pub and apps/v1alpha1):
 * update priority and scatter strategies, in-place update strategy and pod lifecycle hooks.
 */
import Type, { type Static } from 'typebox';
import { LabelSelectorSchema } from './meta.js';
import { int32, stringList, stringMap, strictObject } from './markers.js';

/** Pods are sorted by the integer at the end of this label's value, higher first. */
export const UpdatePriorityOrderTermSchema = strictObject({ orderedKey: Type.String() });

/** Pods matching the selector get this weight (0..100); higher sums update first. */
export const UpdatePriorityWeightTermSchema = strictObject({
  weight: int32({ maximum: 100 }),
  matchSelector: LabelSelectorSchema,
});

/** Only one of orderPriority and weightPriority may be set. */
export const UpdatePriorityStrategySchema = strictObject({
  orderPriority: Type.Optional(Type.Array(UpdatePriorityOrderTermSchema)),
  weightPriority: Type.Optional(Type.Array(UpdatePriorityWeightTermSchema)),
});
export type UpdatePriorityStrategy = Static<typeof UpdatePriorityStrategySchema>;

/** Pods carrying label key=value are spread out over the update order. */
export const UpdateScatterTermSchema = strictObject({ key: Type.String(), value: Type.String() });
export const UpdateScatterStrategySchema = Type.Array(UpdateScatterTermSchema);
export type UpdateScatterStrategy = Static<typeof UpdateScatterStrategySchema>;

/** Time between marking a pod not-ready and changing its images during an in-place update. */
export const InPlaceUpdateStrategySchema = strictObject({ gracePeriodSeconds: Type.Optional(int32()) });
export type InPlaceUpdateStrategy = Static<typeof InPlaceUpdateStrategySchema>;

/** A lifecycle hook: the pod waits in a Preparing* state while any of these labels/finalizers exists. */
export const LifecycleHookSchema = strictObject({
  labelsHandler: Type.Optional(stringMap()),
  finalizersHandler: Type.Optional(stringList()),
  markPodNotReady: Type.Optional(Type.Boolean()),
});
export type LifecycleHook = Static<typeof LifecycleHookSchema>;

/** Hooks around pod deletion, in-place update, and creation (apis/apps/pub/lifecycle.go). */
export const LifecycleSchema = strictObject({
  preDelete: Type.Optional(LifecycleHookSchema),
  inPlaceUpdate: Type.Optional(LifecycleHookSchema),
  preNormal: Type.Optional(LifecycleHookSchema),
});
export type Lifecycle = Static<typeof LifecycleSchema>;
