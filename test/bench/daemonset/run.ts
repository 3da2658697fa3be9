// One run of bench:daemonset: a fresh harness cluster of N kwok nodes with one Advanced DaemonSet
// controller (kruise-manager as shipped, kruise-manager with a raised client rate limit, or the
// Flotilla agent; ../kruise/side-by-side.ts), then the same two phases for each: the set created
// until every node runs a ready pod, and its image updated in place until every pod is updated
// and ready. Measured with bench:kruise's instrument (settle() before each phase, the protobuf pod
// counter, CPU and resident memory from /proc).
import type { DaemonSetV1beta1 } from '@flotilla/api';
import type { Pod } from '../../../agent/src/kube/types.js';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { PatchType, type KubeRest } from '../../../agent/src/runtime/rest.js';
import { namespace, until } from '../cloneset/measure.js';
import {
  mib,
  round,
  runOnFreshCluster,
  timeCreation,
  type PhaseCpu,
  type Readiness,
  type RunFrame,
  type RunSetup,
} from '../kruise/side-by-side.js';
import type { DaemonSetMeasures } from './summary.js';

export interface DaemonSetRun extends DaemonSetMeasures, RunFrame {
  cpuMs: { create: PhaseCpu; inPlaceUpdate: PhaseCpu };
}

const NAME = 'agent';
const sets = Resources.daemonSets;
const log = (msg: string): void => void process.stderr.write(`[bench:daemonset] ${msg}\n`);

/**
 * An Advanced DaemonSet that updates in place, every node at once (maxUnavailable 100 %, maxSurge
 * 0 as kruise's validation wants for InPlaceIfPossible).
 */
export function daemonSet(name: string, nodeSelector?: Record<string, string>): DaemonSetV1beta1 {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'DaemonSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          ...(nodeSelector ? { nodeSelector } : {}),
          containers: [{ name: 'main', image: 'registry.local/agent:v1' }],
        },
      },
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: { rollingUpdateType: 'InPlaceIfPossible', maxUnavailable: '100%', maxSurge: 0 },
      },
    },
  };
}

async function getSet(rest: KubeRest, ns: string, name: string): Promise<DaemonSetV1beta1> {
  return rest.request<DaemonSetV1beta1>({ method: 'GET', path: resourcePath(sets, ns, name) });
}

/**
 * Ready means its DaemonSet controller works: a set whose node selector matches no node gets its
 * status for its first generation. The probe is deleted afterwards, so that node events wake the
 * controller for the measured set alone.
 */
const daemonSetReady: Readiness = {
  step: 'reconciling its first DaemonSet',
  probe: async (rest) => {
    const ns = await namespace(rest, 'ready-probe');
    await until(
      'DaemonSets served',
      () =>
        rest.request({ method: 'GET', path: resourcePath(sets, ns) }).then(
          () => true,
          () => false,
        ),
      60_000,
      250,
    );
    const probe = daemonSet('probe', { 'bench.flotilla.dev/no-node': 'true' });
    await rest.request({ method: 'POST', path: resourcePath(sets, ns), body: probe });
    await until(
      'its first DaemonSet reconciled',
      async () => (await getSet(rest, ns, 'probe')).status?.observedGeneration === 1,
      180_000,
      250,
    );
    await rest.request({ method: 'DELETE', path: resourcePath(sets, ns, 'probe') });
  },
};

/** Every node runs a pod of `generation`, updated, ready and available, as the set's status says. */
async function rolledOut(rest: KubeRest, ns: string, nodes: number, generation: number): Promise<boolean> {
  const ds = await getSet(rest, ns, NAME);
  const s = ds.status;
  return (
    ds.metadata?.generation === generation &&
    s?.observedGeneration === generation &&
    s.desiredNumberScheduled === nodes &&
    s.updatedNumberScheduled === nodes &&
    s.numberReady === nodes &&
    s.numberAvailable === nodes
  );
}

async function podUids(rest: KubeRest, ns: string): Promise<Set<string>> {
  const list = await rest.request<{ items: Pod[] }>({ method: 'GET', path: resourcePath(Resources.pods, ns) });
  return new Set(list.items.map((p) => p.metadata.uid ?? ''));
}

export async function runOnce(setup: RunSetup): Promise<DaemonSetRun> {
  const { nodes } = setup;
  const tag = `${setup.subject} round ${setup.round}`;
  return runOnFreshCluster(setup, daemonSetReady, async (ctx) => {
    const { rest, measure } = ctx;
    // The status is polled every 100 ms for every subject alike: the in-place phase takes seconds.
    const untilRolledOut = (ns: string, generation: number, what: string): Promise<void> =>
      until(what, () => rolledOut(rest, ns, nodes, generation), 900_000, 100);
    await measure.settle();
    const readyRss = await measure.meanRss(5);

    const ns = await namespace(rest, 'bench');
    await measure.settle();
    log(`${tag}: create on ${nodes} nodes`);
    const create = await timeCreation(ctx, ns, nodes, {
      create: () => rest.request({ method: 'POST', path: resourcePath(sets, ns), body: daemonSet(NAME) }),
      ready: () => untilRolledOut(ns, 1, 'every pod ready'),
    });
    log(`created in ${create.createdSeconds} s, ready in ${create.readySeconds} s`);

    await measure.settle();
    const afterCreateRss = await measure.meanRss(5);

    await measure.settle();
    const before = await podUids(rest, ns);
    log(`${tag}: in-place update of ${nodes}`);
    const updateMark = measure.cpuNow();
    const t1 = performance.now();
    await rest.request({
      method: 'PATCH',
      path: resourcePath(sets, ns, NAME),
      contentType: PatchType.merge,
      body: { spec: { template: { spec: { containers: [{ name: 'main', image: 'registry.local/agent:v2' }] } } } },
    });
    await untilRolledOut(ns, 2, 'every pod updated and ready');
    const updateSeconds = (performance.now() - t1) / 1000;
    const updateCpu = measure.cpuSince(updateMark);
    const recreated = [...(await podUids(rest, ns))].filter((uid) => !before.has(uid)).length;
    log(`updated in ${round(updateSeconds)} s, ${recreated} recreated`);

    return {
      create: { createdSeconds: create.createdSeconds, readySeconds: create.readySeconds },
      inPlaceUpdate: { seconds: round(updateSeconds), recreated },
      rssMiB: { ready: mib(readyRss), afterCreate: mib(afterCreateRss), peak: mib(measure.peakRss()) },
      cpuMs: { create: create.cpu, inPlaceUpdate: updateCpu },
    };
  });
}
