/**
 * Names of the OpenKruise API and the labels, annotations, conditions and finalizers OpenKruise
 * writes on objects. Flotilla writes the same keys so that pods and tools stay compatible.
 */

export const KRUISE_GROUP = 'apps.kruise.io';
export const KRUISE_VERSION = 'v1alpha1';
export const KRUISE_API_VERSION = `${KRUISE_GROUP}/${KRUISE_VERSION}` as const;
/**
 * OpenKruise v1.9's second version of SidecarSet, ImagePullJob and NodeImage, and their storage
 * version. Flotilla's clients, controllers and hub work in KRUISE_VERSION; the agent converts.
 */
export const KRUISE_V1BETA1 = 'v1beta1';
export const KRUISE_V1BETA1_API_VERSION = `${KRUISE_GROUP}/${KRUISE_V1BETA1}` as const;
/** OpenKruise's policy group: PodUnavailableBudget, served at v1alpha1 only. */
export const PUB_GROUP = 'policy.kruise.io';
export const PUB_API_VERSION = `${PUB_GROUP}/${KRUISE_VERSION}` as const;

/** The kinds Flotilla serves, by kind name. */
export const KruiseKind = {
  CloneSet: 'CloneSet',
  SidecarSet: 'SidecarSet',
  ImagePullJob: 'ImagePullJob',
  NodeImage: 'NodeImage',
  BroadcastJob: 'BroadcastJob',
  DaemonSet: 'DaemonSet',
  StatefulSet: 'StatefulSet',
  ContainerRecreateRequest: 'ContainerRecreateRequest',
  WorkloadSpread: 'WorkloadSpread',
  PodUnavailableBudget: 'PodUnavailableBudget',
} as const;
export type KruiseKindName = (typeof KruiseKind)[keyof typeof KruiseKind];
export const KRUISE_KINDS: readonly KruiseKindName[] = Object.values(KruiseKind);

// --- Pod labels -------------------------------------------------------------------------------

/** Full revision name (`<cloneset>-<hash>`) of the revision a pod was created from or updated to. */
export const LABEL_CONTROLLER_REVISION_HASH = 'controller-revision-hash';
/** The short hash alone (the text after the last '-'). */
export const LABEL_POD_TEMPLATE_HASH = 'pod-template-hash';
/** Random 5-character id of a CloneSet pod; also on its PVCs. */
export const LABEL_CLONESET_INSTANCE_ID = 'apps.kruise.io/cloneset-instance-id';
/** Set to "true" on a pod to have the CloneSet delete (and replace) it. */
export const LABEL_SPECIFIED_DELETE = 'apps.kruise.io/specified-delete';
/** Lifecycle state of a pod: PreparingNormal, Normal, PreparingUpdate, Updating, Updated, PreparingDelete. */
export const LABEL_LIFECYCLE_STATE = 'lifecycle.apps.kruise.io/state';
/** On a CloneSet: "true" excludes PreparingDelete pods from the replica count. */
export const LABEL_CLONESET_SCALING_EXCLUDE_PREPARING_DELETE =
  'apps.kruise.io/cloneset-scaling-exclude-preparing-delete';
/** On a SidecarSet (copied to its revisions): the user's version name for injection by revision. */
export const LABEL_SIDECARSET_CUSTOM_VERSION = 'apps.kruise.io/sidecarset-custom-version';
/** On SidecarSet ControllerRevisions: the owning SidecarSet's name. */
export const LABEL_SIDECARSET_NAME = 'kruise.io/sidecarset-name';
/** On NodeImages created by tests: keeps the NodeImage when no Node exists. */
export const LABEL_FAKE_NODEIMAGE = 'apps.kruise.io/fake-nodeimage';
/** On BroadcastJob pods (and their template): the job's name; webhooks refuse it preset. */
export const LABEL_BROADCASTJOB_NAME = 'broadcastjob-name';
/** On BroadcastJob pods (and their template): the job's uid. */
export const LABEL_BROADCASTJOB_CONTROLLER_UID = 'broadcastjob-controller-uid';
/** On Advanced DaemonSet pods: the DaemonSet's template generation when the pod was made. */
export const LABEL_POD_TEMPLATE_GENERATION = 'pod-template-generation';
/** On an Advanced DaemonSet: its template generation (apps/v1's deprecated annotation, still read). */
export const ANNOTATION_DAEMONSET_TEMPLATE_GENERATION = 'deprecated.daemonset.template.generation';
/** On a v1alpha1 Advanced DaemonSet: "true" is v1beta1's spec.scaleStrategy.partitionedScaling. */
export const ANNOTATION_DAEMONSET_PROGRESSIVE_CREATE_POD = 'daemonset.kruise.io/progressive-create-pod';
/** On ControllerRevisions: the revision's hash. */
export const LABEL_CONTROLLER_HASH = 'controller.kubernetes.io/hash';
/** Opt-in label for resource deletion protection: "Always" or "Cascading". */
export const LABEL_DELETE_PROTECTION = 'policy.kruise.io/delete-protection';

// --- Pod annotations --------------------------------------------------------------------------

/** RFC 3339 time of the last lifecycle state change. */
export const ANNOTATION_LIFECYCLE_TIMESTAMP = 'lifecycle.apps.kruise.io/timestamp';
/** JSON record of an in-place update in progress (revision, last container statuses, batches). */
export const ANNOTATION_INPLACE_UPDATE_STATE = 'apps.kruise.io/inplace-update-state';
/** The older key for the same record, still read. */
export const ANNOTATION_INPLACE_UPDATE_STATE_OLD = 'inplace-update-state';
/** Pending in-place update spec while gracePeriodSeconds runs. */
export const ANNOTATION_INPLACE_UPDATE_GRACE = 'apps.kruise.io/inplace-update-grace';
/** The older key for the same spec, still read. */
export const ANNOTATION_INPLACE_UPDATE_GRACE_OLD = 'inplace-update-grace';
/** Container ids and hashes written by kruise-daemon; tells when an in-place update finished. */
export const ANNOTATION_RUNTIME_CONTAINERS_META = 'apps.kruise.io/runtime-containers-meta';
/** "Ordered": start and update containers by priority. */
export const ANNOTATION_CONTAINER_LAUNCH_PRIORITY = 'apps.kruise.io/container-launch-priority';
/** Kubernetes' pod deletion cost, honoured when choosing pods to scale in. */
export const ANNOTATION_POD_DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';
/** On CloneSet ControllerRevisions: hash of the volumeClaimTemplates. */
export const ANNOTATION_VOLUME_CLAIM_TEMPLATE_HASH = 'kruise.io/cloneset-volumeclaimtemplate-hash';
/** On SidecarSets and pods: hash of the sidecar containers (pods: a JSON map per SidecarSet). */
export const ANNOTATION_SIDECARSET_HASH = 'kruise.io/sidecarset-hash';
/** Same as ANNOTATION_SIDECARSET_HASH with every image blanked; equal means image-only change. */
export const ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE = 'kruise.io/sidecarset-hash-without-image';
/** Sorted, comma-separated names of the SidecarSets injected into a pod. */
export const ANNOTATION_SIDECARSET_INJECTED_LIST = 'kruise.io/sidecarset-injected-list';
/** Map from SidecarSet name to its in-place update state on a pod. */
export const ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE = 'kruise.io/sidecarset-inplace-update-state';
/** Hot upgrade: which of the two containers of a sidecar is working, e.g. {"X":"X-1"}. */
export const ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER = 'kruise.io/sidecarset-working-hotupgrade-container';
/** Hot upgrade: per-container version annotations are this prefix + container name. */
export const ANNOTATION_PREFIX_SIDECARSET_VERSION = 'version.sidecarset.kruise.io/';
export const ANNOTATION_PREFIX_SIDECARSET_VERSION_ALT = 'versionalt.sidecarset.kruise.io/';
/** CloneSet image pre-download tuning. */
export const ANNOTATION_IMAGE_PREDOWNLOAD_PARALLELISM = 'apps.kruise.io/image-predownload-parallelism';
export const ANNOTATION_IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS = 'apps.kruise.io/image-predownload-timeout-seconds';
export const ANNOTATION_IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS =
  'apps.kruise.io/image-predownload-min-updated-ready-pods';
/** ImagePullJob pull-secret copies in kruise-daemon-config. */
export const LABEL_IMAGEPULLJOB_SOURCE_UID = 'imagepulljobs.kruise.io/source-uid';
export const ANNOTATION_IMAGEPULLJOB_SOURCE_KEY = 'imagepulljobs.kruise.io/source-key';
export const ANNOTATION_IMAGEPULLJOB_REFERENCES = 'imagepulljobs.kruise.io/references';

// --- Pod conditions, env and finalizers ---------------------------------------------------------

/** Readiness gate the CloneSet controller adds; False while an in-place update runs. */
export const CONDITION_INPLACE_UPDATE_READY = 'InPlaceUpdateReady';
/** Readiness gate injected for pods owned by apps.kruise.io workloads; lifecycle hooks use it. */
export const CONDITION_KRUISE_POD_READY = 'KruisePodReady';
/** Pod condition: False when a sidecar change is more than an image change. */
export const CONDITION_SIDECARSET_UPGRADABLE = 'SidecarSetUpgradable';
/** Env var set to "true" on every injected sidecar container. */
export const ENV_SIDECAR_INJECTED = 'IS_INJECTED';
/** Hot-upgrade env vars fed from the version annotations. */
export const ENV_SIDECARSET_VERSION = 'SIDECARSET_VERSION';
export const ENV_SIDECARSET_VERSION_ALT = 'SIDECARSET_VERSION_ALT';
/** Env var giving a container's launch/update priority. */
export const ENV_CONTAINER_PRIORITY = 'KRUISE_CONTAINER_PRIORITY';
/** Finalizer OpenKruise adds to new ImagePullJobs so their pull secrets are cleaned up. */
export const FINALIZER_DELETION_PROTECTION = 'apps.kruise.io/deletion-protection';
/** Namespace where OpenKruise keeps SidecarSet revisions. */
export const KRUISE_SYSTEM_NAMESPACE = 'kruise-system';
/** Namespace where ImagePullJob pull secrets are copied for kruise-daemon. */
export const KRUISE_DAEMON_CONFIG_NAMESPACE = 'kruise-daemon-config';

// --- Enumerations -----------------------------------------------------------------------------

/** Pod lifecycle states (label LABEL_LIFECYCLE_STATE). */
export const LifecycleState = {
  PreparingNormal: 'PreparingNormal',
  Normal: 'Normal',
  PreparingUpdate: 'PreparingUpdate',
  Updating: 'Updating',
  Updated: 'Updated',
  PreparingDelete: 'PreparingDelete',
} as const;

/** The update strategy types OpenKruise v1.9.0's validating webhook (and ours) admits. */
export const CLONESET_UPDATE_STRATEGY_TYPES = ['ReCreate', 'InPlaceIfPossible', 'InPlaceOnly'] as const;
export type CloneSetUpdateStrategyType = (typeof CLONESET_UPDATE_STRATEGY_TYPES)[number];
/**
 * OnDelete: in the v1.9.0 API and controller (pods are only replaced when deleted) but refused by
 * its webhook; the CRD has no enum, so it reaches the controller only past the webhook.
 */
export const CLONESET_UPDATE_ON_DELETE = 'OnDelete';
export const CLONESET_CONDITION_TYPES = ['FailedScale', 'FailedUpdate'] as const;

export const SIDECARSET_UPDATE_STRATEGY_TYPES = ['NotUpdate', 'RollingUpdate'] as const;
export const POD_INJECT_POLICIES = ['BeforeAppContainer', 'AfterAppContainer'] as const;
export const SIDECAR_UPGRADE_TYPES = ['ColdUpgrade', 'HotUpgrade'] as const;
export const SHARE_VOLUME_POLICY_TYPES = ['enabled', 'disabled'] as const;
export const SIDECARSET_PATCH_POLICIES = ['Retain', 'Overwrite', 'MergePatchJson'] as const;
export const SIDECARSET_INJECT_REVISION_POLICIES = ['Always', 'Partial'] as const;

export const COMPLETION_POLICY_TYPES = ['Always', 'Never'] as const;
export const BROADCASTJOB_FAILURE_POLICY_TYPES = ['FailFast', 'Continue', 'Pause'] as const;
export type BroadcastJobFailurePolicyType = (typeof BROADCASTJOB_FAILURE_POLICY_TYPES)[number];
/** status.phase of a BroadcastJob. */
export const BroadcastJobPhase = {
  Running: 'running',
  Paused: 'paused',
  Completed: 'completed',
  Failed: 'failed',
} as const;
/** Advanced DaemonSet updateStrategy.type values. */
export const DAEMONSET_UPDATE_STRATEGY_TYPES = ['RollingUpdate', 'OnDelete'] as const;
/** rollingUpdate.rollingUpdateType at v1beta1; v1alpha1 also takes DAEMONSET_ROLLING_UPDATE_SURGING. */
export const DAEMONSET_ROLLING_UPDATE_TYPES = ['Standard', 'InPlaceIfPossible'] as const;
export type DaemonSetRollingUpdateType = (typeof DAEMONSET_ROLLING_UPDATE_TYPES)[number];
/** v1alpha1's deprecated alias: defaults maxSurge 1 / maxUnavailable 0, then becomes Standard. */
export const DAEMONSET_ROLLING_UPDATE_SURGING = 'Surging';
export const IMAGE_PULL_POLICIES = ['Always', 'IfNotPresent'] as const;
export const IMAGE_PULL_PHASES = ['Waiting', 'Pulling', 'Succeeded', 'Failed'] as const;
export const SYNC_STATUS_PHASES = ['Succeeded', 'Failed'] as const;

// --- PodUnavailableBudget -----------------------------------------------------------------------

/** On a pod: the PodUnavailableBudget guarding it (set at creation and by the PUB controller). */
export const ANNOTATION_RELATED_PUB = 'kruise.io/related-pub';
/** On a pod: "true" lets every operation on it through, whatever its budget. */
export const ANNOTATION_PUB_NO_PROTECT = 'pub.kruise.io/no-protect';
/** On a PUB: the operations it guards, a comma list of DELETE, UPDATE, EVICT, RESIZE. */
export const ANNOTATION_PUB_PROTECT_OPERATIONS = 'kruise.io/pub-protect-operations';
/** On a PUB: the replica count to budget against, overriding the workloads' own. */
export const ANNOTATION_PUB_PROTECT_TOTAL_REPLICAS = 'pub.kruise.io/protect-total-replicas';
/** Any pod label with this prefix marks the pod unavailable. */
export const LABEL_UNAVAILABLE_POD_PREFIX = 'unavailable-pod.kruise.io/';
/** The operations a budget can guard. */
export const PUB_OPERATIONS = ['DELETE', 'UPDATE', 'EVICT', 'RESIZE'] as const;
export type PubOperation = (typeof PUB_OPERATIONS)[number];
/** What a PUB without the protect-operations annotation guards. */
export const PUB_DEFAULT_OPERATIONS: readonly PubOperation[] = ['DELETE', 'UPDATE', 'EVICT'];

// --- ContainerRecreateRequest ------------------------------------------------------------------

/** On a CRR: the pod's name, node and uid (set by the webhook, immutable). */
export const LABEL_CRR_POD_NAME = 'crr.apps.kruise.io/pod-name';
export const LABEL_CRR_NODE_NAME = 'crr.apps.kruise.io/node-name';
export const LABEL_CRR_POD_UID = 'crr.apps.kruise.io/pod-uid';
/** "true" on a CRR until it completes; the node daemon watches only active ones. */
export const LABEL_CRR_ACTIVE = 'crr.apps.kruise.io/active';
/** RFC 3339 time at which the pod was marked not ready for the CRR (unreadyGracePeriodSeconds). */
export const ANNOTATION_CRR_UNREADY_ACQUIRED = 'crr.apps.kruise.io/unready-acquired';
/** JSON [{name, ready, restartCount, containerID}] of the pod's containers started since the CRR. */
export const ANNOTATION_CRR_SYNC_CONTAINER_STATUSES = 'crr.apps.kruise.io/sync-container-statuses';
/** Held while the CRR keeps the pod not ready, so the key is released before the CRR goes. */
export const FINALIZER_CRR_UNREADY_ACQUIRED = 'crr.apps.kruise.io/unready-acquired';
export const CRR_FAILURE_POLICIES = ['Fail', 'Ignore'] as const;
/** Phases of a CRR; its containers use Pending, Recreating, Succeeded and Failed. */
export const CrrPhase = {
  Pending: 'Pending',
  Recreating: 'Recreating',
  Succeeded: 'Succeeded',
  Failed: 'Failed',
  Completed: 'Completed',
} as const;
export type CrrPhaseName = (typeof CrrPhase)[keyof typeof CrrPhase];
