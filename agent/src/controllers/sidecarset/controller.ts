/**
 * The SidecarSet reconcile, which only orders the steps (decisions live in plan.ts, status.ts,
 * upgrade.ts):
 *
 * 1. collect the matched pods (scope, selector, active, injected, all sidecars present);
 * 2. register the latest revision and truncate history;
 * 3. write the status when it changed;
 * 4. wait while earlier pod updates are not yet in the cache (update expectations);
 * 5. unless NotUpdate or paused: complete hot upgrades whose new container is ready (the old one
 *    goes back to the empty image), and do nothing else in that round, as OpenKruise;
 * 6. unless done: mark not-upgradable pods, upgrade the planned ones in place.
 */
import type { PubGuard } from '../podunavailablebudget/guard.js';
import { KRUISE_API_VERSION, type SidecarSet } from '@flotilla/api';
import { isAtLeast } from '../../runtime/expectations.js';
import type { Informer } from '../../runtime/informer.js';
import { formatTime } from '../../runtime/kube-time.js';
import type { ReconcileContext, ReconcileResult } from '../../runtime/controller.js';
import { resourcePath, Resources } from '../../runtime/resource.js';
import { PatchType, type KubeRest } from '../../runtime/rest.js';
import type { EventRecorder } from '../../runtime/events.js';
import { isKubeStatus } from '../../errors.js';
import { injectedSidecarSets } from './control/annotations.js';
import { sidecarSetPodMatcher } from './control/match.js';
import { registerLatestRevision } from './history.js';
import { planUpgrade, type UpgradePlan } from './plan.js';
import { isHotUpgrade, isInHotUpgrade } from './control/hot-upgrade.js';
import {
  hasAllSidecars,
  isHotUpgradingReady,
  isPodStateConsistent,
  upgradableCondition,
  workingSidecarNames,
} from './pod-state.js';
import { calculateStatus, statusChanged } from './status.js';
import { isPodActive } from '../../kube/pods.js';
import type { ControllerRevision, Namespace, Pod } from '../../kube/types.js';
import { finishHotUpgrade, upgradePod } from './upgrade.js';

export interface SidecarSetControllerDeps {
  rest: KubeRest;
  sidecarSets: Informer<SidecarSet>;
  pods: Informer<Pod>;
  namespaces: Informer<Namespace>;
  revisions: Informer<ControllerRevision>;
  revisionNamespace: string;
  events: EventRecorder;
  now?: () => number;
  /**
   * With PodUnavailableBudgetUpdateGate: asked before each in-place upgrade; a pod whose budget has
   * nothing left waits for a later round.
   */
  pubGuard?: PubGuard;
}

/** Pod keys updated by us → the resourceVersion the update produced. */
type Expectations = Map<string, string>;

/**
 * The pod informer's index of the SidecarSets named in a pod's `kruise.io/sidecarset-injected-list`:
 * a SidecarSet's reconcile looks at the pods it was injected into, not at every pod.
 */
export const BY_INJECTED_SIDECARSET = 'byInjectedSidecarSet';

export function injectedSidecarSetIndex(pod: Pod): string[] {
  return [...injectedSidecarSets(pod)];
}

/**
 * Active pods in the SidecarSet's scope, selected by it, injected by it and holding all its
 * sidecars. Reads the pods through BY_INJECTED_SIDECARSET (which the pod informer must have).
 */
export function matchedPods(deps: SidecarSetControllerDeps, ss: SidecarSet): Pod[] {
  const matches = sidecarSetPodMatcher(ss, (ns) => deps.namespaces.get(undefined, ns)?.metadata.labels);
  return deps.pods
    .byIndex(BY_INJECTED_SIDECARSET, ss.metadata?.name ?? '')
    .filter(
      (pod) =>
        isPodActive(pod) &&
        matches(pod.metadata.namespace ?? 'default', pod.metadata.labels) &&
        hasAllSidecars(pod, ss),
    );
}

/**
 * Whether a SidecarSet update asks for a reconcile: anything but its status changed. OpenKruise
 * reconciles on a new generation only; labels (the custom version), annotations and the deletion
 * count here too. A status-only update is the controller's own write: reconciling again for it
 * would loop as long as pods keep changing (one status write, one more reconcile).
 */
export function sidecarSetChanged(old: SidecarSet, obj: SidecarSet): boolean {
  const a = old.metadata ?? {};
  const b = obj.metadata ?? {};
  return (
    a.generation !== b.generation ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    !sameStrings(a.labels, b.labels) ||
    !sameStrings(a.annotations, b.annotations)
  );
}

function sameStrings(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  const ak = Object.keys(a ?? {});
  if (ak.length !== Object.keys(b ?? {}).length) return false;
  return ak.every((k) => b !== undefined && Object.hasOwn(b, k) && a![k] === b[k]);
}

export function sidecarSetReconciler(
  deps: SidecarSetControllerDeps,
): (key: string, ctx: ReconcileContext) => Promise<ReconcileResult> {
  const expectations = new Map<string, Expectations>();
  const now = (): string => formatTime((deps.now ?? Date.now)());
  return async (key, ctx) => {
    const cached = deps.sidecarSets.getByKey(key);
    if (!cached) {
      expectations.delete(key);
      return;
    }
    const ss = structuredClone(cached);
    const pods = matchedPods(deps, ss);
    const status = await syncStatus(deps, key, ss, pods);
    ss.status = status;

    const pending = expectations.get(key) ?? new Map<string, string>();
    forgetObserved(deps.pods, pending);
    if (pending.size > 0) return { requeueAfter: 1000 };
    const strategy = ss.spec.updateStrategy ?? {};
    if (strategy.type === 'NotUpdate' || strategy.paused) return;
    const round: Round = { deps, ss, key, now, pending };
    const finishing = podsFinishingHotUpgrade(ss, pods);
    if (finishing.length > 0) {
      await finishHotUpgrades(round, finishing);
      expectations.set(key, pending);
      return { requeueAfter: 1000 };
    }
    if (status.updatedPods >= status.matchedPods) return;

    const plan = planUpgrade(ss, pods);
    const heldBack = await upgradePods(round, plan);
    expectations.set(key, pending);
    ctx.log.debug(
      { upgraded: plan.upgrade.length - heldBack, notUpgradable: plan.notUpgradable.length, heldBack },
      'sidecarset synced',
    );
    return pending.size > 0 || heldBack > 0 ? { requeueAfter: 1000 } : undefined;
  };
}

/** One reconcile's writes to pods: what they need, and the expectations they add to. */
interface Round {
  deps: SidecarSetControllerDeps;
  ss: SidecarSet;
  key: string;
  now: () => string;
  pending: Expectations;
}

/**
 * Steps 2 and 3: registers the latest revision, writes the status when it changed; returns it.
 * `key` is the SidecarSet's name (it is cluster-scoped).
 */
async function syncStatus(
  deps: SidecarSetControllerDeps,
  key: string,
  ss: SidecarSet,
  pods: readonly Pod[],
): Promise<NonNullable<SidecarSet['status']>> {
  const revisions = deps.revisions.list(deps.revisionNamespace, {
    matchLabels: { 'kruise.io/sidecarset-name': key },
  });
  const latest = await registerLatestRevision(deps.rest, deps.revisionNamespace, ss, revisions, pods);
  const status = calculateStatus(ss, pods, latest.name, latest.collisionCount);
  if (statusChanged(ss.status, status)) {
    await deps.rest.request({
      method: 'PATCH',
      path: resourcePath(Resources.sidecarSets, undefined, key, 'status'),
      body: { status },
      contentType: PatchType.merge,
    });
  }
  return status;
}

/** Drops the expected pod versions the cache has caught up with (or whose pods are gone). */
function forgetObserved(pods: Informer<Pod>, pending: Expectations): void {
  for (const [podKey, rv] of pending) {
    const seen = pods.getByKey(podKey)?.metadata.resourceVersion;
    if (seen === undefined || isAtLeast(seen, rv)) pending.delete(podKey);
  }
}

/** Step 5: puts the old container of each finished hot upgrade back on the empty image. */
async function finishHotUpgrades(round: Round, pods: readonly Pod[]): Promise<void> {
  const { deps, ss } = round;
  for (const pod of pods) {
    const rv = await writePod(deps.rest, pod, (fresh) => finishHotUpgrade(ss, fresh, round.now()));
    if (!rv) continue;
    round.pending.set(`${pod.metadata.namespace}/${pod.metadata.name}`, rv);
    deps.events.event(
      { ...pod, apiVersion: 'v1', kind: 'Pod' },
      'Normal',
      'ResetContainerSucceed',
      'reset sidecar container image empty successfully',
    );
  }
}

/** Whether the pod's PodUnavailableBudget lets it be upgraded now (taking one from it); true without a guard. */
async function budgetAllows(deps: SidecarSetControllerDeps, pod: Pod): Promise<boolean> {
  if (!deps.pubGuard) return true;
  const query = { namespace: pod.metadata.namespace ?? '', podName: pod.metadata.name, pod, dryRun: false };
  return (await deps.pubGuard.admit({ operation: 'UPDATE', ...query })).allowed;
}

/**
 * Step 6: marks the not-upgradable pods, then upgrades the planned ones in place, each as its
 * PodUnavailableBudget allows. Returns how many the budgets held back.
 */
async function upgradePods(round: Round, plan: UpgradePlan): Promise<number> {
  const { deps, ss, key } = round;
  for (const pod of plan.notUpgradable) {
    await writeCondition(deps.rest, pod, upgradableCondition(pod, key, false, round.now()));
  }
  if (plan.notUpgradable.length > 0) {
    deps.events.event(
      { ...ss, apiVersion: KRUISE_API_VERSION, kind: 'SidecarSet' },
      'Normal',
      'NotUpgradablePods',
      `SidecarSet in-place update detected ${plan.notUpgradable.length} not upgradable pod(s) in this round, will skip them.`,
    );
  }
  let heldBack = 0;
  for (const pod of plan.upgrade) {
    if (!(await budgetAllows(deps, pod))) {
      heldBack++;
      continue;
    }
    const rv = await writePod(deps.rest, pod, (fresh) => upgradePod(ss, fresh, round.now()));
    if (rv) round.pending.set(`${pod.metadata.namespace}/${pod.metadata.name}`, rv);
    await writeCondition(deps.rest, pod, upgradableCondition(pod, key, true, round.now()));
  }
  return heldBack;
}

/**
 * The pods whose hot upgrade can be completed: a swap is in flight, every container but the idle
 * ones runs what its spec says, and all of those are ready.
 */
export function podsFinishingHotUpgrade(ss: SidecarSet, pods: readonly Pod[]): Pod[] {
  if (!(ss.spec.containers ?? []).some(isHotUpgrade)) return [];
  return pods.filter(
    (pod) =>
      isInHotUpgrade(ss, pod) &&
      isPodStateConsistent(pod, ss, workingSidecarNames(ss, pod)) &&
      isHotUpgradingReady(pod, ss),
  );
}

/**
 * Reads the pod fresh and writes what `change` makes of it (nothing when it returns undefined);
 * retries on a conflict. Returns the new resourceVersion.
 */
async function writePod(
  rest: KubeRest,
  pod: Pod,
  change: (fresh: Pod) => Pod | undefined,
): Promise<string | undefined> {
  const path = resourcePath(Resources.pods, pod.metadata.namespace, pod.metadata.name);
  for (let attempt = 0; ; attempt++) {
    const fresh = await rest.request<Pod>({ method: 'GET', path });
    const body = change(fresh);
    if (!body) return undefined;
    try {
      const updated = await rest.request<Pod>({ method: 'PUT', path, body });
      return updated.metadata.resourceVersion;
    } catch (err) {
      if (isKubeStatus(err, 404)) return undefined;
      if (!isKubeStatus(err, 409) || attempt >= 3) throw err;
    }
  }
}

async function writeCondition(
  rest: KubeRest,
  pod: Pod,
  condition: ReturnType<typeof upgradableCondition>,
): Promise<void> {
  if (!condition) return;
  try {
    await rest.request({
      method: 'PATCH',
      path: resourcePath(Resources.pods, pod.metadata.namespace, pod.metadata.name, 'status'),
      body: { status: { conditions: [condition] } },
      contentType: PatchType.strategic,
    });
  } catch (err) {
    if (!isKubeStatus(err, 404)) throw err;
  }
}
