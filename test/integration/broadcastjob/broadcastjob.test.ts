/**
 * BroadcastJob on a real apiserver with kwok nodes: one pod per node it fits (not on a node with
 * a taint it does not tolerate), parallelism, completion (Always with a deadline and a TTL),
 * and the failure policies FailFast, Pause and Continue; OpenKruise's e2e "succeeds for
 * parallelism < number of node", and pods bound by nodeName (assign-bcj-pods-by-scheduler=false).
 * Pods end through the kwok stage flotilla-pod-exit (exit code from a template label).
 */
import { Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/kube.js';
import { assignedNode } from '../../../agent/src/controllers/broadcastjob/pod-template.js';
import {
  addTaintedNode,
  broadcastJob,
  clusterNodes,
  createJob,
  env,
  getJob,
  listPods,
  namespace,
  patchJob,
  startController,
  waitForJob,
  type Env,
  type Pod,
  type RunningController,
} from './harness.js';

const e: Env = env();
let ns: string;
let controller: RunningController;
let nodes: string[];
let removeTainted: () => Promise<void>;
const tainted = `bcj-tainted-${Math.random().toString(36).slice(2, 7)}`;

beforeAll(async () => {
  ns = await namespace(e, 'bcj');
  nodes = await clusterNodes(e);
  removeTainted = await addTaintedNode(e, tainted);
  controller = await startController(e, ns);
}, 60_000);

afterAll(async () => {
  await controller?.stop();
  await removeTainted?.();
  await e.k.core.deleteNamespace({ name: ns }).catch(() => undefined);
});

const podsOf = async (job: string): Promise<Pod[]> =>
  (await listPods(e, ns)).filter((p) => p.metadata.labels?.['broadcastjob-name'] === job);

/**
 * Follows the job's pods through a watch (events in resourceVersion order, so no state is missed)
 * and answers the most that were running (not finished, not being deleted) at once; stops then.
 */
async function mostRunningAtOnce(job: string): Promise<() => number> {
  const running = new Set<string>();
  let most = 0;
  const watch = await new Watch(e.k.kc).watch(
    `/api/v1/namespaces/${ns}/pods`,
    { labelSelector: `broadcastjob-name=${job}` },
    (type: string, pod: Pod) => {
      const finished = ['Succeeded', 'Failed'].includes(pod.status?.phase ?? '') || pod.metadata.deletionTimestamp;
      if (type === 'DELETED' || finished) running.delete(pod.metadata.uid!);
      else running.add(pod.metadata.uid!);
      most = Math.max(most, running.size);
    },
    () => undefined,
  );
  return () => {
    watch.abort();
    return most;
  };
}

describe('BroadcastJob', () => {
  it('runs one pod on each of the 3 nodes, none on the tainted node, and completes', async () => {
    await createJob(e, ns, broadcastJob('all', { exitCode: 0 }));
    const job = await waitForJob(e, ns, 'all', 'completed', (j) => j.status?.phase === 'completed');
    expect(job.status).toMatchObject({ desired: 3, active: 0, succeeded: 3, failed: 0 });
    expect(job.status?.conditions).toEqual([
      expect.objectContaining({
        type: 'Complete',
        status: 'True',
        message: 'Job completed, 3 pods succeeded, 0 pods failed',
      }),
    ]);
    expect(Date.parse(job.status!.completionTime!)).toBeGreaterThanOrEqual(Date.parse(job.status!.startTime!));
    const pods = await podsOf('all');
    expect(pods.map((p) => p.spec.nodeName).sort()).toEqual(nodes);
    expect(pods.map(assignedNode).sort()).toEqual(nodes);
    expect(pods.map((p) => p.metadata.ownerReferences?.[0]?.apiVersion)).toEqual(
      Array(3).fill('apps.kruise.io/v1beta1'),
    );
    expect(nodes).not.toContain(tainted);
  });

  it('with parallelism 1, starts each pod only after the previous one finished', async () => {
    const running = await mostRunningAtOnce('paced');
    await createJob(e, ns, broadcastJob('paced', { exitCode: 0, spec: { parallelism: 1 } }));
    await waitForJob(e, ns, 'paced', 'completed', (j) => j.status?.phase === 'completed');
    expect(running()).toBe(1);
    expect(await podsOf('paced')).toHaveLength(3);
  });

  it('with parallelism below the nodes it fits, runs on every one, a tolerated tainted node too, and succeeds', async () => {
    const base = broadcastJob('fewer', { exitCode: 0, spec: { parallelism: nodes.length } });
    const toleration = { key: 'flotilla.test/bcj-untolerated', operator: 'Equal', value: 'yes', effect: 'NoSchedule' };
    const template = base.spec.template;
    const job = {
      ...base,
      spec: { ...base.spec, template: { ...template, spec: { ...template.spec, tolerations: [toleration] } } },
    };
    await createJob(e, ns, job);
    const done = await waitForJob(e, ns, 'fewer', 'completed', (j) => j.status?.phase === 'completed');
    const all = nodes.length + 1;
    expect(done.status).toMatchObject({ desired: all, succeeded: all, failed: 0 });
    expect((await podsOf('fewer')).map(assignedNode).sort()).toEqual([...nodes, tainted].sort());
  });

  it('binds pods by nodeName when not assigned by the scheduler (--assign-bcj-pods-by-scheduler=false)', async () => {
    const boundNs = await namespace(e, 'bcj-bound');
    const bound = await startController(e, boundNs, { assignPodsByScheduler: false });
    try {
      await createJob(e, boundNs, broadcastJob('bound', { exitCode: 0 }));
      const done = await waitForJob(e, boundNs, 'bound', 'completed', (j) => j.status?.phase === 'completed');
      expect(done.status).toMatchObject({ desired: nodes.length, succeeded: nodes.length });
      const pods = (await listPods(e, boundNs)).filter((p) => p.metadata.labels?.['broadcastjob-name'] === 'bound');
      expect(pods.map((p) => p.spec.nodeName).sort()).toEqual(nodes);
      expect(pods.map((p) => p.spec.affinity)).toEqual(Array(nodes.length).fill(undefined));
    } finally {
      await bound.stop();
    }
  });

  it('fails a job still running at activeDeadlineSeconds and deletes its pods', async () => {
    await createJob(
      e,
      ns,
      broadcastJob('deadline', { spec: { completionPolicy: { type: 'Always', activeDeadlineSeconds: 2 } } }),
    );
    await waitForJob(e, ns, 'deadline', 'pods running', (j) => j.status?.active === 3);
    const job = await waitForJob(e, ns, 'deadline', 'failed', (j) => j.status?.phase === 'failed');
    expect(job.status).toMatchObject({ active: 0, failed: 3 });
    expect(job.status?.conditions?.[0]).toMatchObject({
      type: 'Failed',
      message: `Job ${ns}/deadline was active longer than specified deadline`,
    });
    await eventually('deadline pods deleted', async () => (await podsOf('deadline')).length === 0, 20_000);
  });

  it('deletes a finished job ttlSecondsAfterFinished after it completed', async () => {
    await createJob(
      e,
      ns,
      broadcastJob('ttl', { exitCode: 0, spec: { completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 1 } } }),
    );
    await waitForJob(e, ns, 'ttl', 'completed', (j) => j.status?.phase === 'completed');
    await eventually('ttl job deleted', async () => (await getJob(e, ns, 'ttl')) === undefined, 20_000);
  });

  it('FailFast (the default) stops at the first failed pod', async () => {
    await createJob(e, ns, broadcastJob('fastfail', { exitCode: 1, spec: { parallelism: 1 } }));
    const job = await waitForJob(e, ns, 'fastfail', 'failed', (j) => j.status?.phase === 'failed');
    expect(job.status).toMatchObject({ failed: 1, succeeded: 0, active: 0 });
    expect(job.status?.conditions?.[0]?.message).toBe(
      'failure policy is FailurePolicyTypeFailFast and failed pod is found',
    );
    expect(await podsOf('fastfail')).toHaveLength(1);
  });

  it('Pause pauses at the first failed pod', async () => {
    await createJob(
      e,
      ns,
      broadcastJob('pause', { exitCode: 1, spec: { parallelism: 1, failurePolicy: { type: 'Pause' } } }),
    );
    const job = await waitForJob(e, ns, 'pause', 'paused', (j) => j.status?.phase === 'paused');
    expect(job.status).toMatchObject({ failed: 1, active: 0 });
    expect(job.status?.conditions).toBeUndefined();
    expect(await podsOf('pause')).toHaveLength(1);
  });

  it('Continue runs on past failed pods and completes', async () => {
    await createJob(e, ns, broadcastJob('continue', { exitCode: 1, spec: { failurePolicy: { type: 'Continue' } } }));
    const job = await waitForJob(e, ns, 'continue', 'completed', (j) => j.status?.phase === 'completed');
    expect(job.status).toMatchObject({ desired: 3, succeeded: 0, failed: 3 });
  });

  it('spec.paused holds the pods back until it is cleared', async () => {
    await createJob(e, ns, broadcastJob('held', { exitCode: 0, spec: { paused: true } }));
    const paused = await waitForJob(e, ns, 'held', 'paused', (j) => j.status?.phase === 'paused');
    expect(paused.status).toMatchObject({ desired: 3, active: 0 });
    expect(await podsOf('held')).toEqual([]);
    await patchJob(e, ns, 'held', { spec: { paused: false } });
    const done = await waitForJob(e, ns, 'held', 'completed', (j) => j.status?.phase === 'completed');
    expect(done.status?.succeeded).toBe(3);
  });
});
