/**
 * The node daemon with `--max-workers-for-pull-image=1` (OpenKruise v1.9) on real containerd: while
 * one pull holds the node's only slot (an unreachable registry, retried with backoff), a second
 * image waits: its tag reports `Waiting` and the NodeImage counts it in `status.waiting`; it is
 * pulled once the slot frees.
 */
import { pushTinyImage } from '@flotilla/test';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cluster } from '../helpers/context.js';
import { eventually, testNamespace } from '../helpers/kube.js';
import { getNodeImage, startImagePullEnv, type ImagePullEnv } from './env.js';
import { createJob, deleteJob, waitForJob } from './jobs.js';

let env: ImagePullEnv;

beforeAll(async () => {
  env = await startImagePullEnv({
    cluster: cluster(0),
    dir: inject('envDir'),
    logLevel: process.env.FLOTILLA_TEST_LOG,
    daemonArgs: ['--max-workers-for-pull-image=1'],
  });
}, 180_000);

afterAll(async () => {
  await env?.stop();
});

describe('one pull at a time per node', () => {
  it('a second image reports Waiting while the slot is taken, then is pulled', async () => {
    const ns = await testNamespace(env.k, 'ipj-waiting');
    const node = env.nodes[0]!.name;
    const selector = { names: [node] };
    // Refused at once, retried after 1, 2, 4 and 8 s: the slot stays taken for about 15 s.
    const nowhere = `127.0.0.1:1/${env.suite}/slow:v1`;
    await createJob(env, ns, 'slow', {
      image: nowhere,
      selector,
      pullPolicy: { backoffLimit: 4, timeoutSeconds: 10 },
    });
    const slowKey = nowhere.slice(0, nowhere.lastIndexOf(':'));
    await eventually(`${node} pulling ${nowhere}`, async () => {
      const ni = await getNodeImage(env.rest, node);
      return ni?.status?.imageStatuses?.[slowKey]?.tags[0]?.phase === 'Pulling';
    });

    const img = await pushTinyImage(env.registry, {
      repository: `${env.suite}/queued`,
      tag: 'v1',
      files: { 'hello.txt': 'queued' },
    });
    const key = img.ref.slice(0, img.ref.lastIndexOf(':'));
    await createJob(env, ns, 'queued', { image: img.ref, selector });
    const waiting = await eventually(`${node} reports ${img.ref} Waiting`, async () => {
      const ni = await getNodeImage(env.rest, node);
      return ni?.status?.imageStatuses?.[key]?.tags[0]?.phase === 'Waiting' && ni;
    });
    expect(waiting.status).toMatchObject({ pulling: 1, waiting: 1 });
    expect(waiting.status!.imageStatuses![key]!.tags[0]).not.toHaveProperty('startTime');

    // The slow pull gives up; the queued image is pulled and the count drops back to 0.
    const done = await waitForJob(env, ns, 'queued', 'completed', (s) => Boolean(s.completionTime), 60_000);
    expect(done.status).toMatchObject({ succeeded: 1, failed: 0 });
    const after = await getNodeImage(env.rest, node);
    expect(after?.status?.waiting ?? 0).toBe(0);
    expect(after?.status?.imageStatuses?.[slowKey]?.tags[0]?.phase).toBe('Failed');
    expect(await env.nodes[0]!.containerd.listImages()).toContain(img.ref);
    for (const name of ['slow', 'queued']) await deleteJob(env, ns, name);
  });
});
