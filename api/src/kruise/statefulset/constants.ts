/** Names and enumerations of Advanced StatefulSet (OpenKruise v1.9 and apps/v1 StatefulSet). */

/** On every pod of a set: the pod's own name (apps/v1 StatefulSetPodNameLabel). */
export const LABEL_STATEFULSET_POD_NAME = 'statefulset.kubernetes.io/pod-name';
/** On every pod of a set: its ordinal (apps/v1 PodIndexLabel; gate PodIndexLabel, on in v1.9). */
export const LABEL_POD_INDEX = 'apps.kubernetes.io/pod-index';

export const POD_MANAGEMENT_POLICIES = ['OrderedReady', 'Parallel'] as const;
export type PodManagementPolicy = (typeof POD_MANAGEMENT_POLICIES)[number];
export const STATEFULSET_UPDATE_STRATEGY_TYPES = ['RollingUpdate', 'OnDelete'] as const;
export const POD_UPDATE_POLICIES = ['ReCreate', 'InPlaceIfPossible', 'InPlaceOnly'] as const;
export type PodUpdatePolicy = (typeof POD_UPDATE_POLICIES)[number];
export const PVC_RETENTION_POLICY_TYPES = ['Retain', 'Delete'] as const;
/** rollingUpdate.minReadySeconds may not exceed this (v1beta1 MaxMinReadySeconds). */
export const STATEFULSET_MAX_MIN_READY_SECONDS = 300;
/** Conditions the controller sets when it cannot create or update a pod. */
export const STATEFULSET_CONDITION_FAILED_CREATE = 'FailedCreatePod';
export const STATEFULSET_CONDITION_FAILED_UPDATE = 'FailedUpdatePod';
