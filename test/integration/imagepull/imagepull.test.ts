/**
 * ImagePullJob, NodeImage and the node daemon on real containerd: our versions of OpenKruise's
 * pullimages e2e scenarios, plus pull secrets from an htpasswd registry, failures (missing image,
 * unreachable registry, wrong secret, nonsense NodeImage entries) and `imagePullPolicy: Always`
 * on a moved tag. Every image is built and pushed by the suite; each scenario uses its own
 * namespace and its own repositories, so results never depend on what an earlier one pulled.
 */
import { pushTinyImage, type PushedImage } from '@flotilla/test';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cluster } from '../helpers/context.js';
import { eventually, testNamespace } from '../helpers/kube.js';
import { getNodeImage, startImagePullEnv, type ImagePullEnv, type TagStatusJson } from './env.js';
import {
  createJob,
  createPullSecret,
  deleteJob,
  eventsFor,
  getJob,
  secretCopiesFrom,
  waitForJob,
  type JobJson,
} from './jobs.js';

let env: ImagePullEnv;

beforeAll(async () => {
  env = await startImagePullEnv({
    cluster: cluster(0),
    dir: inject('envDir'),
    logLevel: process.env.FLOTILLA_TEST_LOG,
  });
}, 180_000);

afterAll(async () => {
  await env?.stop();
});

const done = (s: NonNullable<JobJson['status']>): boolean => Boolean(s.completionTime);

/** The status of `image` (a NodeImage key) tag `tag` on node `node`. */
async function tagStatus(node: string, image: string, tag: string): Promise<TagStatusJson | undefined> {
  const ni = await getNodeImage(env.rest, node);
  return ni?.status?.imageStatuses?.[image]?.tags.find((t) => t.tag === tag);
}

/** NodeImage key of a pushed image: `host/repo`. */
const keyOf = (img: PushedImage): string => img.ref.slice(0, img.ref.lastIndexOf(':'));

async function push(repo: string, content = repo, registry = env.registry): Promise<PushedImage> {
  return pushTinyImage(registry, { repository: `${env.suite}/${repo}`, tag: 'v1', files: { 'hello.txt': content } });
}

describe('ImagePullJob on real containerd', () => {
  it('an Always job pulls on all nodes, completes, and reports image ids and events', async () => {
    const ns = await testNamespace(env.k, 'ipj-all');
    const img = await push('all');
    await createJob(env, ns, 'all', { image: img.ref, parallelism: 2 });
    const job = await waitForJob(env, ns, 'all', 'completed', done);
    expect(job.status).toMatchObject({ desired: 2, active: 0, succeeded: 2, failed: 0, message: 'job has completed' });
    await eventually('protection finalizer released after completion', async () => {
      const j = await getJob(env.rest, ns, 'all');
      return !(j?.metadata.finalizers ?? []).includes('apps.kruise.io/deletion-protection');
    });
    for (const node of env.nodes) {
      expect(await node.containerd.listImages()).toContain(img.ref);
      expect(await tagStatus(node.name, keyOf(img), 'v1')).toMatchObject({
        phase: 'Succeeded',
        progress: 100,
        imageID: `${keyOf(img)}@${img.configDigest}`,
        version: 0,
      });
    }
    const events = await eventually('PullImageSucceed events', async () => {
      const list = (await eventsFor(env.rest, ns, 'all')).filter((e) => e.reason === 'PullImageSucceed');
      return list.length === 2 && list;
    });
    expect(new Set(events.map((e) => e.source?.host))).toEqual(new Set(env.nodes.map((n) => n.name)));
    await deleteJob(env, ns, 'all');
  });

  it('an Always job with selector.names pulls on that node only', async () => {
    const ns = await testNamespace(env.k, 'ipj-one');
    const img = await push('one');
    const [a, b] = env.nodes;
    await createJob(env, ns, 'one', { image: img.ref, selector: { names: [a!.name] } });
    const job = await waitForJob(env, ns, 'one', 'completed', done);
    expect(job.status).toMatchObject({ desired: 1, succeeded: 1, failed: 0, message: 'job has completed' });
    expect(await a!.containerd.listImages()).toContain(img.ref);
    expect(await b!.containerd.listImages()).not.toContain(img.ref);
    expect((await getNodeImage(env.rest, b!.name))?.spec.images?.[keyOf(img)]).toBeUndefined();
    await deleteJob(env, ns, 'one');
  });

  it('a podSelector job pulls where the matching pods run', async () => {
    const ns = await testNamespace(env.k, 'ipj-pods');
    const img = await push('pods');
    const [a, b] = env.nodes;
    await env.k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'web-0', labels: { app: 'web' } },
        spec: { nodeName: b!.name, containers: [{ name: 'main', image: 'registry.local/web:v1' }] },
      },
    });
    await createJob(env, ns, 'pods', { image: img.ref, podSelector: { matchLabels: { app: 'web' } } });
    const job = await waitForJob(env, ns, 'pods', 'completed', done);
    expect(job.status).toMatchObject({ desired: 1, succeeded: 1 });
    expect(await b!.containerd.listImages()).toContain(img.ref);
    expect(await a!.containerd.listImages()).not.toContain(img.ref);
    await deleteJob(env, ns, 'pods');
  });

  it('a Never job keeps pulling on nodes added later, and a removed node takes its NodeImage along', async () => {
    const ns = await testNamespace(env.k, 'ipj-never');
    const img = await push('never');
    await createJob(env, ns, 'never', {
      image: img.ref,
      parallelism: 5,
      selector: { matchLabels: env.nodeLabels },
      completionPolicy: { type: 'Never' },
    });
    const before = await waitForJob(env, ns, 'never', 'pulled on 2 nodes', (s) => s.succeeded === 2);
    expect(before.status).toMatchObject({ desired: 2, message: 'job is running, progress 100.0%' });
    expect(before.status?.completionTime).toBeUndefined();

    const late = env.spare;
    await env.joinNode(late);
    const after = await waitForJob(env, ns, 'never', 'pulled on the new node', (s) => s.succeeded === 3);
    expect(after.status).toMatchObject({ desired: 3, active: 0, failed: 0 });
    expect(after.status?.completionTime).toBeUndefined();
    expect(await late.containerd.listImages()).toContain(img.ref);

    await env.removeNode(late);
    await eventually('NodeImage of the removed node deleted', async () => !(await getNodeImage(env.rest, late.name)));
    await waitForJob(env, ns, 'never', 'back to 2 nodes', (s) => s.desired === 2);
    await deleteJob(env, ns, 'never');
  });

  it('two jobs with the same image share the tag: version + 1, both owners, the second is quick', async () => {
    const ns = await testNamespace(env.k, 'ipj-two');
    const img = await push('shared');
    await createJob(env, ns, 'first', { image: img.ref, parallelism: 2 });
    await waitForJob(env, ns, 'first', 'completed', done);
    const t0 = Date.now();
    await createJob(env, ns, 'second', { image: img.ref, parallelism: 2 });
    const second = await waitForJob(env, ns, 'second', 'completed', done);
    expect(second.status).toMatchObject({ desired: 2, succeeded: 2, failed: 0 });
    expect(Date.now() - t0).toBeLessThan(15_000);
    for (const node of env.nodes) {
      const tag = (await getNodeImage(env.rest, node.name))?.spec.images?.[keyOf(img)]?.tags[0];
      expect(tag?.version).toBe(1);
      expect(tag?.ownerReferences?.map((o) => o.name)).toEqual(['first', 'second']);
      expect(await tagStatus(node.name, keyOf(img), 'v1')).toMatchObject({ phase: 'Succeeded', version: 1 });
    }
    // Deleting one owner keeps the tag for the other; deleting both removes it.
    await deleteJob(env, ns, 'first');
    await eventually('first owner removed', async () => {
      const tag = (await getNodeImage(env.rest, env.nodes[0]!.name))?.spec.images?.[keyOf(img)]?.tags[0];
      return tag?.ownerReferences?.length === 1 && tag.ownerReferences[0]?.name === 'second';
    });
    await deleteJob(env, ns, 'second');
    await eventually('tag gone with its last owner', async () => {
      const ni = await getNodeImage(env.rest, env.nodes[0]!.name);
      return ni !== undefined && ni.spec.images?.[keyOf(img)] === undefined;
    });
  });

  it('pulls from an htpasswd registry with a pull secret, which is copied, then cleaned up with the job after its TTL', async () => {
    const ns = await testNamespace(env.k, 'ipj-secret');
    const img = await push('private', 'private', env.authRegistry);
    await createPullSecret(env.rest, ns, 'regcred', env.authRegistry.host, env.auth.username, env.auth.password);
    await createJob(env, ns, 'private', {
      image: img.ref,
      parallelism: 2,
      pullSecrets: ['regcred'],
      completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 3 },
    });
    const copies = await eventually('secret copied into kruise-daemon-config', async () => {
      const list = await secretCopiesFrom(env.rest, ns);
      return list.length === 1 && list;
    });
    expect(copies[0]!.metadata.name).toMatch(/^regcred-/);
    expect(copies[0]!.metadata.annotations).toMatchObject({
      'imagepulljobs.kruise.io/source-key': `${ns}/regcred`,
      'imagepulljobs.kruise.io/references': `${ns}/private`,
    });
    expect(copies[0]!.metadata.labels?.['imagepulljobs.kruise.io/source-uid']).toBeTruthy();
    const job = await waitForJob(env, ns, 'private', 'completed', done);
    expect(job.status).toMatchObject({ desired: 2, succeeded: 2, failed: 0 });
    for (const node of env.nodes) {
      const entry = (await getNodeImage(env.rest, node.name))?.spec.images?.[keyOf(img)];
      expect(entry?.pullSecrets).toEqual([{ namespace: 'kruise-daemon-config', name: copies[0]!.metadata.name }]);
      expect(await node.containerd.listImages()).toContain(img.ref);
    }
    // TTL: the job goes 3 s after completion, its tags with it, and the copy once nothing references it.
    await eventually(
      'job deleted after ttlSecondsAfterFinished',
      async () => !(await getJob(env.rest, ns, 'private')),
      30_000,
    );
    await eventually('image entry removed from NodeImages', async () => {
      const entries = await Promise.all(
        env.nodes.map(async (n) => (await getNodeImage(env.rest, n.name))?.spec.images?.[keyOf(img)]),
      );
      return entries.every((e) => e === undefined);
    });
    expect(await secretCopiesFrom(env.rest, ns)).toEqual([]);
  });

  it('a wrong or missing secret fails per node with the registry answer and names the secret', async () => {
    const ns = await testNamespace(env.k, 'ipj-badsecret');
    const wrongImage = await push('locked-a', 'a', env.authRegistry);
    const missingImage = await push('locked-b', 'b', env.authRegistry);
    await createPullSecret(env.rest, ns, 'wrong', env.authRegistry.host, env.auth.username, 'not-the-password');
    const pullPolicy = { backoffLimit: 0, timeoutSeconds: 20 };
    await createJob(env, ns, 'wrong', { image: wrongImage.ref, parallelism: 2, pullPolicy, pullSecrets: ['wrong'] });
    await createJob(env, ns, 'missing', {
      image: missingImage.ref,
      parallelism: 2,
      pullPolicy,
      pullSecrets: ['nowhere'],
    });
    for (const name of ['wrong', 'missing']) {
      const job = await waitForJob(env, ns, name, 'completed', done);
      expect(job.status).toMatchObject({
        desired: 2,
        succeeded: 0,
        failed: 2,
        failedNodes: env.nodes.map((n) => n.name),
      });
    }
    for (const img of [wrongImage, missingImage]) {
      const status = await tagStatus(env.nodes[0]!.name, keyOf(img), 'v1');
      expect(status).toMatchObject({ phase: 'Failed' });
      expect(status?.message).toMatch(/failed to pull image ".*:v1" after 1 attempt: .*401 Unauthorized/);
    }
    const missingEvents = await eventsFor(env.rest, ns, 'missing');
    expect(missingEvents.map((e) => e.reason)).toContain('PullSecretNotFound');
    await deleteJob(env, ns, 'wrong');
    await deleteJob(env, ns, 'missing');
  });

  it('a missing image and an unreachable registry fail per node after backoff; the job completes with failures and the daemons keep running', async () => {
    const ns = await testNamespace(env.k, 'ipj-fail');
    const nowhere = `127.0.0.1:1/${env.suite}/app:v1`;
    const missing = `${env.registry.host}/${env.suite}/does-not-exist:v1`;
    const pullPolicy = { backoffLimit: 1, timeoutSeconds: 10 };
    await createJob(env, ns, 'missing', { image: missing, parallelism: 2, pullPolicy });
    await createJob(env, ns, 'unreachable', { image: nowhere, parallelism: 2, pullPolicy });
    for (const name of ['missing', 'unreachable']) {
      const job = await waitForJob(env, ns, name, 'completed', done);
      expect(job.status).toMatchObject({
        desired: 2,
        active: 0,
        succeeded: 0,
        failed: 2,
        failedNodes: env.nodes.map((n) => n.name),
        message: 'job has completed',
      });
      const events = await eventsFor(env.rest, ns, name);
      expect(events.filter((e) => e.reason === 'PullImageFailed' && e.type === 'Warning')).toHaveLength(2);
    }
    for (const node of env.nodes) {
      const notFound = await tagStatus(node.name, missing.slice(0, missing.lastIndexOf(':')), 'v1');
      expect(notFound?.message).toMatch(/after 2 attempts: NotFound: .*not found/);
      // Two attempts with a 1 s backoff between them.
      expect(Date.parse(notFound!.completionTime!) - Date.parse(notFound!.startTime!)).toBeGreaterThanOrEqual(1000);
      const refused = await tagStatus(node.name, '127.0.0.1:1/' + `${env.suite}/app`, 'v1');
      expect(refused?.message).toMatch(/after 2 attempts: .*connection refused/);
      expect(node.daemon.hasExited()).toBe(false);
    }
    // The daemons still pull after all that.
    const img = await push('after-failures');
    await createJob(env, ns, 'after', { image: img.ref, parallelism: 2 });
    expect((await waitForJob(env, ns, 'after', 'completed', done)).status).toMatchObject({ succeeded: 2 });
    for (const name of ['missing', 'unreachable', 'after']) await deleteJob(env, ns, name);
  });

  it('an Always job ends at activeDeadlineSeconds, counting every unfinished node as failed', async () => {
    const ns = await testNamespace(env.k, 'ipj-deadline');
    // Refused at once, then retried after 1, 2, 4, 8 and 16 s: the retries outlast the 3 s deadline.
    await createJob(env, ns, 'deadline', {
      image: `127.0.0.1:1/${env.suite}/deadline:v1`,
      parallelism: 2,
      pullPolicy: { backoffLimit: 5, timeoutSeconds: 2 },
      completionPolicy: { type: 'Always', activeDeadlineSeconds: 3 },
    });
    const job = await waitForJob(env, ns, 'deadline', 'completed', done);
    expect(job.status).toMatchObject({
      desired: 2,
      active: 0,
      succeeded: 0,
      failed: 2,
      failedNodes: env.nodes.map((n) => n.name),
      message: 'job exceeds activeDeadlineSeconds',
    });
    const ranMs = Date.parse(job.status!.completionTime!) - Date.parse(job.status!.startTime!);
    expect(ranMs).toBeGreaterThanOrEqual(3000);
    expect(ranMs).toBeLessThan(15_000);
    await deleteJob(env, ns, 'deadline');
  });

  it('a NodeImage edited by hand with nonsense fails that entry only, a malformed job image is reported; other images keep pulling', async () => {
    const ns = await testNamespace(env.k, 'ipj-nonsense');
    const node = env.nodes[0]!;
    const bogus = {
      tags: [
        {
          tag: 'Not A Tag!',
          version: 0,
          createdAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          pullPolicy: { backoffLimit: 0, timeoutSeconds: 0, ttlSecondsAfterFinished: 300 },
        },
      ],
    };
    await env.rest.request({
      method: 'PATCH',
      path: `/apis/apps.kruise.io/v1alpha1/nodeimages/${node.name}`,
      contentType: 'application/merge-patch+json',
      // Without a resourceVersion: the daemon and the controllers write this object all the time.
      body: { spec: { images: { 'no such/image!!': bogus } } },
    });
    // A job with a malformed image (stored as given: no webhook here) says why, and reaches no node.
    await createJob(env, ns, 'malformed', { image: 'Not An Image!', selector: { names: [node.name] } });
    const img = await push('beside-nonsense');
    await createJob(env, ns, 'beside', { image: img.ref, selector: { names: [node.name] } });
    expect((await waitForJob(env, ns, 'beside', 'completed', done)).status).toMatchObject({ succeeded: 1 });
    const malformed = await waitForJob(env, ns, 'malformed', 'says the image is malformed', (s) =>
      (s.message ?? '').startsWith('invalid image Not An Image!: '),
    );
    expect(malformed.status).toMatchObject({ desired: 0 });
    const owners = Object.values((await getNodeImage(env.rest, node.name))?.spec.images ?? {}).flatMap((i) =>
      i.tags.flatMap((t) => (t.ownerReferences ?? []).map((o) => o.name)),
    );
    expect(owners).not.toContain('malformed');
    const status = await eventually('nonsense entry reported failed', () =>
      tagStatus(node.name, 'no such/image!!', 'Not A Tag!'),
    );
    expect(status).toMatchObject({ phase: 'Failed' });
    expect(status.message).toContain('invalid image reference');
    expect(node.daemon.hasExited()).toBe(false);
    await env.rest.request({
      method: 'PATCH',
      path: `/apis/apps.kruise.io/v1alpha1/nodeimages/${node.name}`,
      contentType: 'application/merge-patch+json',
      body: { spec: { images: { 'no such/image!!': null } } },
    });
    await deleteJob(env, ns, 'beside');
    await deleteJob(env, ns, 'malformed');
  });

  it('imagePullPolicy Always pulls a moved tag again; IfNotPresent keeps what the node has', async () => {
    const ns = await testNamespace(env.k, 'ipj-always');
    const node = env.nodes[0]!;
    const first = await push('moving', 'first content');
    await createJob(env, ns, 'v1-first', { image: first.ref, selector: { names: [node.name] } });
    await waitForJob(env, ns, 'v1-first', 'completed', done);
    expect((await tagStatus(node.name, keyOf(first), 'v1'))?.imageID).toBe(`${keyOf(first)}@${first.configDigest}`);

    const moved = await push('moving', 'second content');
    expect(moved.configDigest).not.toBe(first.configDigest);
    await createJob(env, ns, 'if-not-present', { image: moved.ref, selector: { names: [node.name] } });
    await waitForJob(env, ns, 'if-not-present', 'completed', done);
    expect((await tagStatus(node.name, keyOf(first), 'v1'))?.imageID).toBe(`${keyOf(first)}@${first.configDigest}`);

    await createJob(env, ns, 'always', {
      image: moved.ref,
      selector: { names: [node.name] },
      imagePullPolicy: 'Always',
    });
    const job = await waitForJob(env, ns, 'always', 'completed', done);
    expect(job.status).toMatchObject({ succeeded: 1, failed: 0 });
    expect(await tagStatus(node.name, keyOf(first), 'v1')).toMatchObject({
      version: 2,
      imageID: `${keyOf(first)}@${moved.configDigest}`,
    });
    for (const name of ['v1-first', 'if-not-present', 'always']) await deleteJob(env, ns, name);
  });
});
