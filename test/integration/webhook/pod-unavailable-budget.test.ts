/**
 * PodUnavailableBudget on a real apiserver calling the agent's webhook over TLS, with its
 * controller running in the same replica (delete gate on, update gate off, as v1.9's defaults):
 * status counted from kwok's Ready pods, an eviction storm let through one pod at a time, a
 * deletion refused with v1.9's message and a dry run not charged, and the bad inputs (a budget
 * covering nothing, a missing target, overlapping budgets) reported as conditions and events.
 */
import type { PodUnavailableBudget } from '@flotilla/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerCloneSetController } from '../../../agent/src/controllers/cloneset/index.js';
import { controllerPubGuard } from '../../../agent/src/controllers/podunavailablebudget/guard-store.js';
import { registerPubController } from '../../../agent/src/controllers/podunavailablebudget/index.js';
import { setupPodReadinessController } from '../../../agent/src/controllers/podreadiness/index.js';
import { createKubeRest, type KubeRest } from '../../../agent/src/runtime/index.js';
import { cluster } from '../helpers/context.js';
import { installCrds } from '../helpers/crds.js';
import { eventually, kube, testNamespace } from '../helpers/kube.js';
import {
  deleteConfigurations,
  freePort,
  startReplica,
  SUITE_LABEL,
  testWebhookConfig,
  type AgentReplica,
} from './support.js';

const k = kube(cluster(0));
const rest: KubeRest = createKubeRest(k.kc);
const suite = `pub-${Math.random().toString(36).slice(2, 7)}`;
const NEGATIVE = 'is forbidden: pub unavailable allowed is negative';
const IMAGE = 'registry.local/app:v1';
const V2 = 'registry.local/app:v2';
let ns: string;
let replica: AgentReplica;
let config: ReturnType<typeof testWebhookConfig>;

const pubsPath = (name = ''): string =>
  `/apis/policy.kruise.io/v1alpha1/namespaces/${ns}/podunavailablebudgets${name ? `/${name}` : ''}`;
const podPath = (name: string): string => `/api/v1/namespaces/${ns}/pods/${name}`;

type Pod = {
  metadata: { name: string; annotations?: Record<string, string> };
  status?: { conditions?: { type: string; status: string }[] };
};

const isReady = (p: Pod): boolean => !!p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

async function podsOf(app: string): Promise<Pod[]> {
  const list = await rest.request<{ items: Pod[] }>({
    method: 'GET',
    path: `/api/v1/namespaces/${ns}/pods`,
    query: { labelSelector: `app=${app}` },
  });
  return list.items;
}

/** `n` bare pods labelled app=<app>, once all are Ready. */
async function readyPods(app: string, n: number): Promise<string[]> {
  const names = Array.from({ length: n }, (_, i) => `${app}-${i}`);
  await Promise.all(
    names.map((name) =>
      rest.request({
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/pods`,
        body: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, labels: { app } },
          spec: { containers: [{ name: 'main', image: IMAGE }] },
        },
        discardBody: true,
      }),
    ),
  );
  await eventually(`${n} ${app} pods ready`, async () => (await podsOf(app)).filter(isReady).length === n);
  return names;
}

async function createPub(name: string, spec: PodUnavailableBudget['spec']): Promise<void> {
  await rest.request({
    method: 'POST',
    path: pubsPath(),
    body: { apiVersion: 'policy.kruise.io/v1alpha1', kind: 'PodUnavailableBudget', metadata: { name }, spec },
    discardBody: true,
  });
}

const getPub = (name: string): Promise<PodUnavailableBudget> =>
  rest.request<PodUnavailableBudget>({ method: 'GET', path: pubsPath(name) });

async function statusOf(
  name: string,
  ok: (s: NonNullable<PodUnavailableBudget['status']>) => boolean,
): Promise<NonNullable<PodUnavailableBudget['status']>> {
  return eventually(`PodUnavailableBudget ${name} status`, async () => {
    const { status } = await getPub(name);
    return status && ok(status) ? status : undefined;
  });
}

/** undefined when the request went through, else the error message. */
async function outcome(request: Promise<unknown>): Promise<string | undefined> {
  try {
    await request;
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

const evict = (pod: string, dryRun = false): Promise<string | undefined> =>
  outcome(
    rest.request({
      method: 'POST',
      path: `${podPath(pod)}/eviction`,
      ...(dryRun ? { query: { dryRun: 'All' } } : {}),
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: ns } },
      discardBody: true,
    }),
  );

const remove = (pod: string, dryRun = false): Promise<string | undefined> =>
  outcome(
    rest.request({
      method: 'DELETE',
      path: podPath(pod),
      discardBody: true,
      ...(dryRun ? { query: { dryRun: 'All' } } : {}),
    }),
  );

async function eventsOf(name: string): Promise<{ reason?: string; message?: string; type?: string }[]> {
  const list = await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${name}` });
  return list.items;
}

/** Every pod bound to the budget and the budget at `allowed`. */
async function armed(pub: string, app: string, allowed: number): Promise<void> {
  await eventually(`${app} pods bound to ${pub}`, async () =>
    (await podsOf(app)).every((p) => p.metadata.annotations?.['kruise.io/related-pub'] === pub),
  );
  await statusOf(pub, (s) => s.unavailableAllowed === allowed && !s.disruptedPods);
}

describe('PodUnavailableBudget', () => {
  beforeAll(async () => {
    await installCrds(k);
    const agentNs = await testNamespace(k, 'agent', { [SUITE_LABEL]: suite });
    ns = await testNamespace(k, 'pub', { [SUITE_LABEL]: suite });
    // Both gates on: budgets also guard pod updates, and the CloneSet asks before in-place updates.
    config = { ...testWebhookConfig(suite, agentNs, await freePort()), pubUpdateGate: true };
    replica = await startReplica(k, config, 'replica-a', false, (ctx) => {
      registerPubController(ctx.manager, {
        rest: ctx.rest,
        events: ctx.events('podunavailablebudget'),
        namespace: ns,
        podEventDelayMs: 50,
      });
      registerCloneSetController(ctx.manager, {
        rest: ctx.rest,
        events: ctx.events('cloneset'),
        namespace: ns,
        pubGuard: controllerPubGuard(ctx.rest, false),
      });
      // The pod webhook gives CloneSet pods the KruisePodReady gate, which this controller opens.
      setupPodReadinessController(ctx, { namespace: ns });
    });
    // The configuration takes effect asynchronously: wait until a budget with nothing left refuses
    // a dry-run eviction (which it would not charge if it let it through).
    const [probe] = await readyPods('probe', 1);
    await createPub('probe', { selector: { matchLabels: { app: 'probe' } }, minAvailable: 1 });
    await armed('probe', 'probe', 0);
    await eventually('the eviction webhook refusing', async () => (await evict(probe!, true))?.includes(NEGATIVE));
  });
  afterAll(async () => {
    await deleteConfigurations(k, config);
    await replica?.stop();
    await k.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it('counts the Ready pods it covers and binds them', async () => {
    await readyPods('count', 4);
    await createPub('count', { selector: { matchLabels: { app: 'count' } }, minAvailable: '50%' });
    await armed('count', 'count', 2);
    const pub = await getPub('count');
    expect(pub.status).toEqual({
      observedGeneration: 1,
      unavailableAllowed: 2,
      currentAvailable: 4,
      desiredAvailable: 2,
      totalReplicas: 4,
    });
  });

  it('lets an eviction storm through one pod at a time', async () => {
    // A ReplicaSet of 10 whose replacements stay unready (a "-broken" image in kwok) until the
    // test mends them: the budget (1 of 10) is then given back exactly when the test says.
    const rs = `/apis/apps/v1/namespaces/${ns}/replicasets`;
    const template = (image: string) => ({
      metadata: { labels: { app: 'storm' } },
      spec: { containers: [{ name: 'main', image }] },
    });
    await rest.request({
      method: 'POST',
      path: rs,
      body: {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'storm' },
        spec: { replicas: 10, selector: { matchLabels: { app: 'storm' } }, template: template(IMAGE) },
      },
      discardBody: true,
    });
    await eventually('10 storm pods ready', async () => (await podsOf('storm')).filter(isReady).length === 10);
    const setTemplate = (image: string) =>
      rest.request({
        method: 'PATCH',
        path: `${rs}/storm`,
        contentType: 'application/merge-patch+json',
        body: { spec: { template: template(image) } },
        discardBody: true,
      });
    await setTemplate(`${IMAGE}-broken`);
    await createPub('storm', { selector: { matchLabels: { app: 'storm' } }, maxUnavailable: 1 });
    await armed('storm', 'storm', 1);
    expect((await getPub('storm')).status).toMatchObject({
      totalReplicas: 10,
      desiredAvailable: 9,
      currentAvailable: 10,
    });

    const storm = async (pods: string[]): Promise<string> => {
      const outcomes = await Promise.all(pods.map((p) => evict(p)));
      expect(outcomes.filter((m) => m === undefined)).toHaveLength(1);
      for (const m of outcomes.filter((m) => m !== undefined)) {
        expect(m).toContain('admission webhook "vpodeviction.kb.io" denied the request');
        expect(m).toContain(`podunavailablebudget.policy.kruise.io "storm" ${NEGATIVE}`);
        expect(m).toContain('403');
      }
      return pods[outcomes.indexOf(undefined)]!;
    };
    const originals = (await podsOf('storm')).map((p) => p.metadata.name);
    const first = await storm(originals);
    // Its replacement is not Ready: nothing more may go.
    await statusOf('storm', (s) => s.currentAvailable === 9 && s.unavailableAllowed === 0 && !s.disruptedPods);
    const left = originals.filter((p) => p !== first);
    expect(await evict(left[0]!)).toContain(NEGATIVE);

    // Mended, the replacement is Ready and the budget gives one more, to one of the next storm.
    await setTemplate(IMAGE);
    const replacement = (await podsOf('storm')).find((p) => !originals.includes(p.metadata.name))!.metadata.name;
    await rest.request({
      method: 'PATCH',
      path: podPath(replacement),
      contentType: 'application/strategic-merge-patch+json',
      body: { spec: { containers: [{ name: 'main', image: IMAGE }] } },
      discardBody: true,
    });
    await setTemplate(`${IMAGE}-broken`);
    await statusOf('storm', (s) => s.currentAvailable === 10 && s.unavailableAllowed === 1);
    await storm(left);
    const denied = left.find((p) => p !== first)!;
    await eventually('PubPreventPodDeletion recorded', async () =>
      (await eventsOf(denied)).some(
        (e) =>
          e.type === 'Warning' &&
          e.reason === 'PubPreventPodDeletion' &&
          e.message === 'openkruise pub prevents pod deletion',
      ),
    );
  });

  it('paces an in-place CloneSet update: never more pods unavailable than the budget allows', async () => {
    const clonesets = `/apis/apps.kruise.io/v1alpha1/namespaces/${ns}/clonesets`;
    await rest.request({
      method: 'POST',
      path: clonesets,
      body: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        metadata: { name: 'paced' },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'paced' } },
          template: { metadata: { labels: { app: 'paced' } }, spec: { containers: [{ name: 'main', image: IMAGE }] } },
          // The CloneSet alone would update every pod at once.
          updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: '100%' },
        },
      },
      discardBody: true,
    });
    await eventually('3 paced pods ready', async () => (await podsOf('paced')).filter(isReady).length === 3);
    await createPub('paced', {
      targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'paced' },
      maxUnavailable: 1,
    });
    await armed('paced', 'paced', 1);
    expect((await getPub('paced')).status).toMatchObject({ totalReplicas: 3, desiredAvailable: 2 });

    await rest.request({
      method: 'PATCH',
      path: `${clonesets}/paced`,
      contentType: 'application/merge-patch+json',
      body: { spec: { template: { spec: { containers: [{ name: 'main', image: V2 }] } } } },
      discardBody: true,
    });
    type Seen = Pod & { spec: { containers: { image: string }[] } };
    let mostUnready = 0;
    await eventually(
      'every paced pod updated in place and Ready',
      async () => {
        const pods = (await podsOf('paced')) as Seen[];
        mostUnready = Math.max(mostUnready, pods.filter((p) => !isReady(p)).length);
        return pods.length === 3 && pods.every((p) => isReady(p) && p.spec.containers[0]!.image === V2);
      },
      90_000,
      100,
    );
    expect(mostUnready).toBe(1);
  }, 120_000);

  it('refuses a deletion when nothing is left, and does not charge a dry run', async () => {
    const [a, b] = await readyPods('keep', 2);
    await createPub('keep', { selector: { matchLabels: { app: 'keep' } }, minAvailable: 2 });
    await armed('keep', 'keep', 0);
    await eventually('the pod webhook refusing', async () => (await remove(a!, true)) !== undefined);
    const message = await remove(a!);
    expect(message).toContain(
      `admission webhook "vpod.kb.io" denied the request: podunavailablebudget.policy.kruise.io "keep" ${NEGATIVE}`,
    );

    await rest.request({
      method: 'PATCH',
      path: pubsPath('keep'),
      contentType: 'application/merge-patch+json',
      body: { spec: { minAvailable: 1 } },
      discardBody: true,
    });
    await statusOf('keep', (s) => s.unavailableAllowed === 1 && s.observedGeneration === 2);
    expect(await remove(b!, true)).toBeUndefined();
    const untouched = (await getPub('keep')).status!;
    expect(untouched.unavailableAllowed).toBe(1);
    expect(untouched.disruptedPods).toBeUndefined();
    expect(await remove(b!)).toBeUndefined();
    expect(Object.keys((await getPub('keep')).status?.disruptedPods ?? { [b!]: '' })).toEqual([b]);
    expect(await remove(a!)).toContain(NEGATIVE);
  });

  it('reports a budget covering nothing, a missing target and overlapping budgets, and keeps admitting', async () => {
    await createPub('empty', { selector: { matchLabels: { app: 'nothing-here' } }, maxUnavailable: 1 });
    await createPub('lost', {
      targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'missing' },
      maxUnavailable: 1,
    });
    const pods = await readyPods('both', 3);
    await createPub('both-a', { selector: { matchLabels: { app: 'both' } }, maxUnavailable: 1 });
    await armed('both-a', 'both', 1);
    await createPub('both-b', {
      selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['both'] }] },
      maxUnavailable: 2,
    });

    const conditionOf = async (name: string, type: string) =>
      eventually(`${type} on ${name}`, async () =>
        (await getPub(name)).status?.conditions?.find((c) => c.type === type),
      );
    expect(await conditionOf('empty', 'NoPodsMatched')).toMatchObject({ status: 'True', reason: 'NoPods' });
    expect(await conditionOf('lost', 'TargetNotFound')).toMatchObject({
      status: 'True',
      message: 'targetRef CloneSet/missing (apps.kruise.io/v1alpha1) does not exist',
    });
    const overlap = await conditionOf('both-b', 'PodsOverlap');
    expect(overlap.message).toContain('(also both-a)');
    for (const [name, reason] of [
      ['empty', 'NoPods'],
      ['lost', 'TargetNotFound'],
      ['both-b', 'OverlappingBudgets'],
    ] as const) {
      await eventually(`event ${reason} on ${name}`, async () =>
        (await eventsOf(name)).some((e) => e.type === 'Warning' && e.reason === reason),
      );
    }
    // The pods stay bound to the first budget, whose admissions go on.
    expect((await podsOf('both')).map((p) => p.metadata.annotations?.['kruise.io/related-pub'])).toEqual([
      'both-a',
      'both-a',
      'both-a',
    ]);
    expect(await evict(pods[0]!)).toBeUndefined();
    expect(await evict(pods[1]!)).toContain(`"both-a" ${NEGATIVE}`);
  });
});
