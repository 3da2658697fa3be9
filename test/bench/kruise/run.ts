// One run of bench:kruise: a fresh harness cluster with one CloneSet controller (kruise-manager
// as shipped, kruise-manager with a raised client rate limit, or the Flotilla agent; see
// side-by-side.ts) and the same phases, measured with the CloneSet bench's instrument (settle()
// before each phase, the protobuf pod counter, CPU and resident memory from /proc). The ceiling
// runs the same phases with no controller (ceiling.ts).
import type { KubeRest } from '../../../agent/src/runtime/rest.js';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { cloneSet, namespace, patchCloneSet, status, until } from '../cloneset/measure.js';
import { ceilingPhases, type CeilingPhases } from './ceiling.js';
import {
  mib,
  round,
  runOnFreshCluster,
  timeCreation,
  type PhaseCpu,
  type Readiness,
  type RunFrame,
  type RunSetup,
} from './side-by-side.js';
import type { ControllerMeasures, ControllerSubject } from './summary.js';

export interface RunOptions extends Omit<RunSetup, 'nodes'> {
  pods: number;
  /** Seconds of the idle window (after the controller is ready and the cluster settled). */
  idleSeconds: number;
}

export interface ControllerRecord extends ControllerMeasures, RunFrame {
  subject: ControllerSubject;
  pods: number;
  cpuMs: { idle: PhaseCpu; scaleUp: PhaseCpu; inPlaceUpdate: PhaseCpu; scaleDown: PhaseCpu };
}

export interface CeilingRecord extends CeilingPhases, RunFrame {
  subject: 'ceiling';
}

export type RunRecord = ControllerRecord | CeilingRecord;

const log = (msg: string): void => void process.stderr.write(`[bench:kruise] ${msg}\n`);

/** Ready means its CloneSet controller works: a CloneSet of no replicas gets its status. */
const cloneSetReady: Readiness = {
  step: 'reconciling its first CloneSet',
  probe: async (rest) => {
    const probe = await namespace(rest, 'ready-probe');
    await rest.request({ method: 'POST', path: resourcePath(Resources.cloneSets, probe), body: cloneSet('probe', 0) });
    await until(
      'its first CloneSet reconciled',
      async () => (await status(rest, probe, 'probe')).observedGeneration === 1,
      180_000,
      250,
    );
  },
};

/** Polls a CloneSet's status (and, given, a check of its own) until `done` holds. */
async function untilStatus(
  rest: KubeRest,
  ns: string,
  what: string,
  done: (s: Awaited<ReturnType<typeof status>>) => boolean | Promise<boolean>,
): Promise<void> {
  await until(what, async () => done(await status(rest, ns, 'web')), 900_000, 250);
}

export async function runOnce(opts: RunOptions): Promise<RunRecord> {
  const nodes = Math.ceil(opts.pods / 100) + 2;
  if (opts.subject === 'ceiling') {
    const prefix = `ceiling round ${opts.round}`;
    return runOnFreshCluster({ ...opts, nodes }, cloneSetReady, (ctx) =>
      ceilingPhases(ctx, opts.pods, (msg) => log(`${prefix}: ${msg}`)),
    );
  }
  const subject = opts.subject;
  return runOnFreshCluster({ ...opts, nodes }, cloneSetReady, async (ctx) => {
    const { rest, measure } = ctx;
    log(`${opts.subject} round ${opts.round}: idle for ${opts.idleSeconds} s`);
    await measure.settle();
    const idleMark = measure.cpuNow();
    const idleRss = await measure.meanRss(opts.idleSeconds);
    const idleCpu = measure.cpuSince(idleMark);

    const ns = await namespace(rest, 'bench');
    await measure.settle();
    log(`${opts.subject} round ${opts.round}: scale 0 → ${opts.pods}`);
    const up = await timeCreation(ctx, ns, opts.pods, {
      create: () =>
        rest.request({ method: 'POST', path: resourcePath(Resources.cloneSets, ns), body: cloneSet('web', opts.pods) }),
      ready: () => untilStatus(rest, ns, 'all pods ready', (s) => s.readyReplicas === opts.pods),
    });
    log(`created in ${up.createdSeconds} s, ready in ${up.readySeconds} s`);

    await measure.settle();
    const afterScaleUpRss = await measure.meanRss(5);

    await measure.settle();
    log(`${opts.subject} round ${opts.round}: in-place update of ${opts.pods}`);
    const updateMark = measure.cpuNow();
    const t1 = performance.now();
    await patchCloneSet(rest, ns, 'web', { image: 'registry.local/app:v2' });
    await untilStatus(
      rest,
      ns,
      'all pods updated and ready',
      (s) => s.observedGeneration === 2 && s.updatedReplicas === opts.pods && s.updatedReadyReplicas === opts.pods,
    );
    const updateSeconds = (performance.now() - t1) / 1000;
    const updateCpu = measure.cpuSince(updateMark);
    log(`updated in ${round(updateSeconds)} s`);

    await measure.settle();
    log(`${opts.subject} round ${opts.round}: scale ${opts.pods} → 0`);
    const downMark = measure.cpuNow();
    const t2 = performance.now();
    await patchCloneSet(rest, ns, 'web', { replicas: 0 });
    await untilStatus(rest, ns, 'all pods gone', async (s) => {
      if (s.replicas !== 0) return false;
      const left = await rest.request<{ items: unknown[] }>({
        method: 'GET',
        path: resourcePath(Resources.pods, ns),
        query: { limit: 1 },
      });
      return left.items.length === 0;
    });
    const downSeconds = (performance.now() - t2) / 1000;
    const downCpu = measure.cpuSince(downMark);
    log(`scaled down in ${round(downSeconds)} s`);

    return {
      subject,
      pods: opts.pods,
      scaleUp: { createdSeconds: up.createdSeconds, readySeconds: up.readySeconds },
      inPlaceUpdate: { seconds: round(updateSeconds) },
      scaleDown: { seconds: round(downSeconds) },
      rssMiB: { idle: mib(idleRss), afterScaleUp: mib(afterScaleUpRss), peak: mib(measure.peakRss()) },
      idleCpuCores: round(idleCpu.controller! / 1000 / opts.idleSeconds, 4),
      cpuMs: { idle: idleCpu, scaleUp: up.cpu, inPlaceUpdate: updateCpu, scaleDown: downCpu },
    };
  });
}
