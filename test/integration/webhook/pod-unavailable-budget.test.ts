/**
 * PodUnavailableBudget on a real apiserver calling the agent's webhook over TLS, with its
 * controller running in the same replica (both gates on, so the CloneSet and SidecarSet
 * controllers ask the budget before in-place updates): new pods bound to their budget at creation,
 * status counted from kwok's Ready pods, an eviction storm let through one pod at a time, in-place
 * CloneSet and SidecarSet updates paced by a budget, a deletion refused with v1.9's message and a
 * dry run not charged, a budget over another's pods refused naming the field, and the bad inputs
 * (a budget covering nothing, a missing target, a budget next to another's pods) reported as
 * conditions and events.
 */
import type { PodUnavailableBudget } from '@flotilla/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerCloneSetController } from '../../../agent/src/controllers/cloneset/index.js';
import { controllerPubGuard } from '../../../agent/src/controllers/podunavailablebudget/guard-store.js';
import { registerPubController } from '../../../agent/src/controllers/podunavailablebudget/index.js';
import { setupPodReadinessController } from '../../../agent/src/controllers/podreadiness/index.js';
import { setupSidecarSetController } from '../../../agent/src/controllers/sidecarset/index.js';
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
let agentNs: string;
let replica: AgentReplica;
let config: ReturnType<typeof testWebhookConfig>;

const pubsPath = (name = ''): string =>
  `/apis/policy.kruise.io/v1alpha1/namespaces/${ns}/podunavailablebudgets${name ? `/${name}` : ''}`;
const podPath = (name: string): string => `/api/v1/namespaces/${ns}/pods/${name}`;
const sidecarSetPath = (name = ''): string => `/apis/apps.kruise.io/v1alpha1/sidecarsets${name ? `/${name}` : ''}`;
const SIDECARSET = `paced-sidecar-${suite}`;

type Pod = {
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: { containers: { name: string; image: string }[] };
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

/** A pod as the apiserver would store it after admission (dry run: no controller ever sees it). */
const dryRunPod = (metadata: Record<string, unknown>): Promise<Pod> =>
  rest.request<Pod>({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/pods`,
    query: { dryRun: 'All' },
    body: { apiVersion: 'v1', kind: 'Pod', metadata, spec: { containers: [{ name: 'main', image: IMAGE }] } },
  });

async function createPub(name: string, spec: PodUnavailableBudget['spec'], dryRun = false): Promise<void> {
  await rest.request({
    method: 'POST',
    path: pubsPath(),
    ...(dryRun ? { query: { dryRun: 'All' } } : {}),
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
    agentNs = await testNamespace(k, 'agent', { [SUITE_LABEL]: suite });
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
      setupSidecarSetController(ctx, agentNs, `${SUITE_LABEL}=${suite}`, controllerPubGuard(ctx.rest, false));
    });
    // The configuration takes effect asynchronously: wait until a budget with nothing left refuses
    // a dry-run eviction (which it would not charge if it let it through).
    const [probe] = await readyPods('probe', 1);
    await createPub('probe', { selector: { matchLabels: { app: 'probe' } }, minAvailable: 1 });
    await armed('probe', 'probe', 0);
    await eventually('the eviction webhook refusing', async () => (await evict(probe!, true))?.includes(NEGATIVE));
  });
  afterAll(async () => {
    await rest
      .request({ method: 'DELETE', path: sidecarSetPath(SIDECARSET), discardBody: true })
      .catch(() => undefined);
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

  it('binds a new pod to its budget at creation: by selector, or through its ReplicaSet to a Deployment', async () => {
    const RELATED = 'kruise.io/related-pub';
    await createPub('bind-sel', { selector: { matchLabels: { app: 'bind' } }, maxUnavailable: 1 });
    // Dry-run pods never reach the controller: an annotation on them comes from the pod webhook.
    const bySelector = await eventually('the pod webhook binding by selector', async () => {
      const pod = await dryRunPod({ name: 'bind-probe', labels: { app: 'bind' } });
      return pod.metadata.annotations?.[RELATED] ? pod : undefined;
    });
    expect(bySelector.metadata.annotations?.[RELATED]).toBe('bind-sel');
    expect((await dryRunPod({ name: 'unbound', labels: { app: 'elsewhere' } })).metadata.annotations?.[RELATED]).toBe(
      undefined,
    );

    // A Deployment with no replicas still gets its ReplicaSet; a pod of it belongs to the Deployment's budget.
    await rest.request({
      method: 'POST',
      path: `/apis/apps/v1/namespaces/${ns}/deployments`,
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'bind-deploy' },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: 'bind-deploy' } },
          template: {
            metadata: { labels: { app: 'bind-deploy' } },
            spec: { containers: [{ name: 'main', image: IMAGE }] },
          },
        },
      },
      discardBody: true,
    });
    await createPub('bind-deploy', {
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'bind-deploy' },
      maxUnavailable: 1,
    });
    type Owned = { metadata: { name: string; uid: string } };
    const rs = await eventually('the Deployment’s ReplicaSet', async () => {
      const list = await rest.request<{ items: Owned[] }>({
        method: 'GET',
        path: `/apis/apps/v1/namespaces/${ns}/replicasets`,
        query: { labelSelector: 'app=bind-deploy' },
      });
      return list.items[0];
    });
    const owner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs.metadata.name, uid: rs.metadata.uid };
    const ofDeployment = await eventually('the pod webhook binding through the Deployment', async () => {
      const pod = await dryRunPod({
        name: 'bind-deploy-probe',
        labels: { app: 'bind-deploy' },
        ownerReferences: [{ ...owner, controller: true }],
      });
      return pod.metadata.annotations?.[RELATED] ? pod : undefined;
    });
    expect(ofDeployment.metadata.annotations?.[RELATED]).toBe('bind-deploy');
    // Owned without being controlled, the pod has no workload: no budget.
    const uncontrolled = await dryRunPod({ name: 'loose', labels: { app: 'bind-deploy' }, ownerReferences: [owner] });
    expect(uncontrolled.metadata.annotations?.[RELATED]).toBeUndefined();
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

  it('paces an in-place SidecarSet upgrade: one pod’s sidecar at a time', async () => {
    const sidecar = (image: string) => [{ name: 'sc', image }];
    await rest.request({
      method: 'POST',
      path: sidecarSetPath(),
      body: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name: SIDECARSET, labels: { [SUITE_LABEL]: suite } },
        spec: {
          namespace: ns,
          selector: { matchLabels: { app: 'sidecar' } },
          containers: sidecar('registry.local/sc:v1'),
          // The SidecarSet alone would upgrade every pod at once.
          updateStrategy: { maxUnavailable: '100%' },
        },
      },
      discardBody: true,
    });
    await eventually('the SidecarSet in the webhook cache', async () =>
      (await dryRunPod({ name: 'sc-probe', labels: { app: 'sidecar' } })).spec?.containers.some((c) => c.name === 'sc'),
    );
    await readyPods('sidecar', 3);
    await createPub('sidecar', { selector: { matchLabels: { app: 'sidecar' } }, maxUnavailable: 1 });
    await armed('sidecar', 'sidecar', 1);

    const imageOf = (p: Pod): string | undefined => p.spec?.containers.find((c) => c.name === 'sc')?.image;
    let mostUnready = 0;
    const observe = async (): Promise<Pod[]> => {
      const pods = await podsOf('sidecar');
      mostUnready = Math.max(mostUnready, pods.filter((p) => !isReady(p)).length);
      return pods;
    };
    const setSidecar = (image: string) =>
      rest.request({
        method: 'PATCH',
        path: sidecarSetPath(SIDECARSET),
        contentType: 'application/merge-patch+json',
        body: { spec: { containers: sidecar(image) } },
        discardBody: true,
      });
    // A broken sidecar leaves its pod unready (kwok): the budget has nothing left while it lasts,
    // and the controller, retrying every second, finds it so until the admission record expired.
    await setSidecar(`${IMAGE}-broken`);
    await eventually(
      'one pod upgraded to the broken sidecar, the budget spent',
      async () => {
        const pods = await observe();
        const { status } = await getPub('sidecar');
        const broken = pods.filter((p) => imageOf(p) === `${IMAGE}-broken`);
        return broken.length === 1 && status?.currentAvailable === 2 && !status.unavailablePods;
      },
      60_000,
      100,
    );
    expect((await observe()).filter((p) => imageOf(p) === `${IMAGE}-broken`)).toHaveLength(1);

    // Mended: the unready pod goes first (it costs nothing), then the others one at a time.
    await setSidecar('registry.local/sc:v2');
    await eventually(
      'every sidecar upgraded in place and Ready',
      async () => {
        const pods = await observe();
        return pods.length === 3 && pods.every((p) => isReady(p) && imageOf(p) === 'registry.local/sc:v2');
      },
      90_000,
      100,
    );
    expect(mostUnready).toBe(1);
  }, 180_000);

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

  it('refuses a budget over another budget’s pods, naming the field, as v1.9 does', async () => {
    await createPub('solo', { selector: { matchLabels: { app: 'solo' } }, maxUnavailable: 1 });
    await createPub('solo-target', {
      targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'solo' },
      maxUnavailable: 1,
    });
    // The webhook reads the other budgets from its cache: dry runs wait until it knows both.
    const overlapping = {
      selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['solo', 'duo'] }] },
      maxUnavailable: 2,
    };
    const sameTarget = {
      targetRef: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'solo' },
      minAvailable: 1,
    };
    await eventually('the PUB webhook knowing both budgets', async () => {
      const refused = await Promise.all([
        outcome(createPub('solo-again', overlapping, true)),
        outcome(createPub('solo-target-again', sameTarget, true)),
      ]);
      return refused.every((m) => m !== undefined);
    });
    const selectorClash = await outcome(createPub('solo-again', overlapping));
    expect(selectorClash).toContain('admission webhook "vpodunavailablebudget.kb.io" denied the request');
    expect(selectorClash).toContain(
      'spec.selector: Invalid value: object: pub.spec.selector is in conflict with other PodUnavailableBudget solo',
    );
    const targetClash = await outcome(createPub('solo-target-again', sameTarget));
    expect(targetClash).toContain('spec.targetRef: Invalid value:');
    expect(targetClash).toContain('pub.spec.targetRef is in conflict with other PodUnavailableBudget solo-target');
    // Other keys or other workloads are no conflict, and a budget may still be changed.
    expect(
      await outcome(createPub('solo-tier', { selector: { matchLabels: { tier: 'solo' } }, maxUnavailable: 1 })),
    ).toBeUndefined();
    await rest.request({
      method: 'PATCH',
      path: pubsPath('solo'),
      contentType: 'application/merge-patch+json',
      body: { spec: { maxUnavailable: 2 } },
      discardBody: true,
    });
  });

  it('reports a budget covering nothing, a missing target and pods under two budgets, and keeps admitting', async () => {
    await createPub('empty', { selector: { matchLabels: { app: 'nothing-here' } }, maxUnavailable: 1 });
    await createPub('lost', {
      targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'missing' },
      maxUnavailable: 1,
    });
    await rest.request({
      method: 'POST',
      path: `/apis/apps/v1/namespaces/${ns}/replicasets`,
      body: {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'both' },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'both' } },
          template: { metadata: { labels: { app: 'both' } }, spec: { containers: [{ name: 'main', image: IMAGE }] } },
        },
      },
      discardBody: true,
    });
    await eventually('3 both pods ready', async () => (await podsOf('both')).filter(isReady).length === 3);
    // Replacements stay unready, so an eviction's budget is not given back while the test looks.
    await rest.request({
      method: 'PATCH',
      path: `/apis/apps/v1/namespaces/${ns}/replicasets/both`,
      contentType: 'application/merge-patch+json',
      body: { spec: { template: { spec: { containers: [{ name: 'main', image: `${IMAGE}-broken` }] } } } },
      discardBody: true,
    });
    const pods = (await podsOf('both')).map((p) => p.metadata.name);
    await createPub('both-a', { selector: { matchLabels: { app: 'both' } }, maxUnavailable: 1 });
    await armed('both-a', 'both', 1);
    // A selector budget and a targetRef budget are not compared by the webhook (nor by v1.9's):
    // the controller finds the pods they share.
    await createPub('both-b', {
      targetRef: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'both' },
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
    // A replacement is bound at creation to the first of the two budgets by name, as the controller binds.
    const replacement = await eventually('the replacement pod', async () =>
      (await podsOf('both')).find((p) => !pods.includes(p.metadata.name)),
    );
    expect(replacement.metadata.annotations?.['kruise.io/related-pub']).toBe('both-a');
  });
});
