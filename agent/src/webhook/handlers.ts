/**
 * The webhook's handlers wired to the caches they read. The same wiring runs in the admission
 * thread (over caches mirrored from the main thread's informers, see thread/) and, with
 * `--webhook-thread=false`, in the main thread over the informers themselves: both provide the
 * read-only `WebhookStores` below.
 */
import type { Logger } from 'pino';
import {
  invalid,
  LABEL_SIDECARSET_NAME,
  type PodUnavailableBudget,
  type SidecarSet,
  type WorkloadSpread,
} from '@flotilla/api';
import type { ReadStore } from '../runtime/cache.js';
import { parseWhitelist, WHITELIST_KEY } from '../controllers/sidecarset/control/patch-metadata.js';
import type { InjectionConflict } from '../controllers/sidecarset/inject.js';
import { missingInjectionRevision } from '../controllers/sidecarset/inject-revision.js';
import type { ControllerRevision, Namespace } from '../kube/types.js';
import type { WebhookConfig } from './config.js';
import type { DeletionInventory } from './validating/deletion-protection-handler.js';
import type { PubGuard } from '../controllers/podunavailablebudget/guard.js';
import { bindNewPod } from '../controllers/podunavailablebudget/binding.js';
import type { SpreadGuard } from '../controllers/workloadspread/admission.js';
import { webhookDefinitions, type WebhookDefinition } from './registry.js';
import type { CrrPodReader } from './mutating/crr-defaults.js';
import { containerConflicts, whitelistViolations } from './validating/sidecarset-rules.js';
import { pubConflicts } from './validating/pub-rules.js';

export interface ConfigMapLike {
  metadata?: { name?: string; namespace?: string };
  data?: Record<string, string>;
}

/** Everything the handlers read. */
export interface WebhookStores {
  sidecarSets: ReadStore<SidecarSet>;
  namespaces: ReadStore<Namespace>;
  /** SidecarSet revisions (ControllerRevisions labelled with their SidecarSet's name). */
  revisions: ReadStore<ControllerRevision>;
  /** The patchPodMetadata whitelist ConfigMap, when it exists. */
  configMaps: ReadStore<ConfigMapLike>;
  /** WorkloadSpreads: a pod is only taken to the main thread's guard when its namespace has one. */
  workloadSpreads: ReadStore<WorkloadSpread>;
  /** PodUnavailableBudgets: new pods are bound to theirs, and a budget may not cover another's pods. */
  podUnavailableBudgets: ReadStore<PodUnavailableBudget>;
}

/** What the handlers need besides the stores. */
export interface HandlerWiring {
  config: Pick<
    WebhookConfig,
    | 'namespace'
    | 'whitelistConfigMap'
    | 'patchMetadataDefaultsAllowed'
    | 'sortSidecarContainersByName'
    | 'resourcesDeletionProtection'
    | 'crdCascadingDeletionProtection'
    | 'pubDeleteGate'
    | 'pubUpdateGate'
    | 'workloadSpreadGate'
    | 'inPlacePodVerticalScaling'
  >;
  logger: Logger;
  /** Counts what a protected deletion would take with it (read live, from the main thread). */
  inventory: DeletionInventory;
  /** Reads a CRR's pod and node (live, from the main thread). */
  crrPods?: CrrPodReader;
  /** Decides (and pays for) disruptions of pods under a PodUnavailableBudget, from the main thread. */
  pubGuard: PubGuard;
  /** Places new pods into WorkloadSpread subsets (recording them in its status), from the main thread. */
  spreadGuard: SpreadGuard;
  /** Container-name clashes between SidecarSets met while injecting a pod (for a Warning event). */
  onConflicts(conflicts: readonly InjectionConflict[], namespace: string): void;
}

/** Every webhook definition with its handler reading `stores`. */
export function wiredDefinitions(stores: WebhookStores, wiring: HandlerWiring): WebhookDefinition[] {
  const { config, logger } = wiring;
  const revisionsOf = (ss: SidecarSet): ControllerRevision[] =>
    stores.revisions.list(undefined, { matchLabels: { [LABEL_SIDECARSET_NAME]: ss.metadata?.name ?? '' } });
  const gates = {
    resourcesDeletionProtection: config.resourcesDeletionProtection,
    crdCascading: config.crdCascadingDeletionProtection,
  };
  // WorkloadSpread admissions go to the main thread's guard only in namespaces that have one.
  const spread: SpreadGuard = {
    assign: (query) =>
      stores.workloadSpreads.list(query.namespace).length > 0
        ? wiring.spreadGuard.assign(query)
        : Promise.resolve(undefined),
  };
  return webhookDefinitions({
    crrPods: wiring.crrPods,
    workloadSpread: { enabled: config.workloadSpreadGate, guard: spread },
    deletionProtection: config.resourcesDeletionProtection ? { gates, inventory: wiring.inventory } : undefined,
    podBudget: {
      gates: {
        deleteGate: config.pubDeleteGate,
        updateGate: config.pubUpdateGate,
        inPlaceResize: config.inPlacePodVerticalScaling,
      },
      guard: wiring.pubGuard,
    },
    pods: {
      sidecarSets: () => stores.sidecarSets.list(),
      namespaceLabels: (ns) => stores.namespaces.get(undefined, ns)?.metadata.labels,
      revisions: revisionsOf,
      onConflicts: (conflicts, namespace) => wiring.onConflicts(conflicts, namespace),
      sortSidecarContainersByName: config.sortSidecarContainersByName,
      relatedPub:
        config.pubDeleteGate || config.pubUpdateGate
          ? (pod, namespace) =>
              bindNewPod({
                pod,
                namespace,
                pubs: stores.podUnavailableBudgets.list(namespace),
                lookup: (ns, rs) => wiring.pubGuard.replicaSetWorkload(ns, rs),
                onLookupError: (err) =>
                  logger.warn(
                    { err, namespace },
                    "a new pod's ReplicaSet cannot be read; binding it by selectors only",
                  ),
              })
          : undefined,
      spread: config.workloadSpreadGate ? spread : undefined,
    },
    extraValidation: {
      PodUnavailableBudget: (object) => {
        const pub = object as PodUnavailableBudget;
        return pubConflicts(pub, stores.podUnavailableBudgets.list(pub.metadata?.namespace));
      },
      SidecarSet: (object) => {
        const ss = object as SidecarSet;
        const text = stores.configMaps.get(config.namespace, config.whitelistConfigMap)?.data?.[WHITELIST_KEY];
        let whitelist;
        try {
          whitelist = text ? parseWhitelist(text) : undefined;
        } catch (err) {
          logger.warn({ err }, 'the patchPodMetadata whitelist cannot be read; treating it as absent');
        }
        const revisionProblem = missingInjectionRevision(ss, revisionsOf(ss));
        return [
          ...whitelistViolations(ss, whitelist, config.patchMetadataDefaultsAllowed),
          ...containerConflicts(ss, stores.sidecarSets.list()),
          ...(revisionProblem
            ? [invalid(revisionProblem.path, ss.spec.injectionStrategy?.revision, revisionProblem.message)]
            : []),
        ];
      },
    },
  });
}
