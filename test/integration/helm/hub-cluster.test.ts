/**
 * The hub chart on a real control plane (the run's first cluster: kube-apiserver, scheduler and
 * kwok nodes over three zones; images are never pulled, kwok plays the pods): helm validates
 * every object against the server's schema on install, the scheduler spreads the replicas over
 * zones, upgrade scales, uninstall removes everything. The chart is namespaced only (no CRD, no
 * cluster-wide object), so it shares the run's cluster inside a namespace of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetworkingV1Api, PolicyV1Api, type V1Pod } from '@kubernetes/client-node';
import { cluster, type ClusterInfo } from '../helpers/context.js';
import { eventually, kube, type Kube } from '../helpers/kube.js';
import { helmOk } from './chart.js';
import { HUB_RELEASE, hubChartDir, set } from './hub-chart.js';

const NS = `hub-chart-${Math.random().toString(36).slice(2, 8)}`;
const SELECTOR = `app.kubernetes.io/instance=${HUB_RELEASE},app.kubernetes.io/component=hub`;

let c: ClusterInfo;
let k: Kube;

/** The Secrets and ConfigMap the chart reads; the pods never run, so the contents are stand-ins. */
async function createPrerequisites(): Promise<void> {
  await k.core.createNamespace({ body: { metadata: { name: NS } } });
  const secret = (name: string, stringData: Record<string, string>, type = 'Opaque') =>
    k.core.createNamespacedSecret({ namespace: NS, body: { metadata: { name }, type, stringData } });
  await secret('hub-db', { url: 'postgres://hub@postgres:5432/flotilla' });
  await secret('hub-admin', { token: 'flt-admin-0123456789abcdef' });
  await secret('hub-nats-auth', {
    'hub.creds': 'creds',
    'hub-system.creds': 'creds',
    'operator-signing.nk': 'seed',
    'account-signing.nk': 'seed',
  });
  await secret('hub-tls', { 'tls.crt': 'cert', 'tls.key': 'key' }, 'kubernetes.io/tls');
  await k.core.createNamespacedConfigMap({
    namespace: NS,
    body: { metadata: { name: 'nats-ca' }, data: { 'ca.crt': 'ca' } },
  });
}

const helmHere = (args: string[]): Promise<string> =>
  helmOk([...args, '--namespace', NS, '--kubeconfig', c.kubeconfigPath], {}, 240_000);

const VALUES = set(
  'database.existingSecret=hub-db',
  'adminToken.existingSecret=hub-admin',
  'nats.auth.existingSecret=hub-nats-auth',
  'nats.urls={tls://nats-0.nats:4222,tls://nats-1.nats:4222}',
  'nats.ca.configMapName=nats-ca',
  'tls.existingSecret=hub-tls',
  'ingress.enabled=true',
  'ingress.host=hub.example.com',
  'ingress.tlsSecretName=hub-tls',
  // A hard spread, so the zones the scheduler picked show the constraint works.
  'topologySpread.whenUnsatisfiable=DoNotSchedule',
);

async function readyPods(n: number): Promise<V1Pod[]> {
  return eventually(
    `${n} hub pods ready`,
    async () => {
      const pods = (await k.core.listNamespacedPod({ namespace: NS, labelSelector: SELECTOR })).items.filter(
        (p) => !p.metadata?.deletionTimestamp,
      );
      const ready = pods.filter((p) => p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'));
      return ready.length === n && pods.length === n ? ready : undefined;
    },
    120_000,
  );
}

async function zonesOf(pods: V1Pod[]): Promise<string[]> {
  const zones = await Promise.all(
    pods.map(
      async (p) =>
        (await k.core.readNode({ name: p.spec!.nodeName! })).metadata?.labels?.['topology.kubernetes.io/zone'] ?? '',
    ),
  );
  return zones.sort();
}

beforeAll(async () => {
  c = cluster(0);
  k = kube(c);
  await createPrerequisites();
}, 60_000);

afterAll(async () => {
  await k?.core.deleteNamespace({ name: NS }).catch(() => undefined);
});

describe('the hub chart on a cluster', () => {
  it('installs, spreads two replicas over zones, scales on upgrade and uninstalls cleanly', async () => {
    await helmHere(['install', HUB_RELEASE, hubChartDir, ...VALUES, '--wait', '--timeout', '3m']);
    const pods = await readyPods(2);
    const zones = await zonesOf(pods);
    expect(new Set(zones).size, zones.join(',')).toBe(2);
    const pod = pods[0]!.spec!;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532, fsGroup: 65532 });
    expect(pod.automountServiceAccountToken).toBe(false);
    // The server kept what it was given: every secret by reference, none in the pod spec.
    const env = pod.containers[0]!.env ?? [];
    expect(env.find((e) => e.name === 'DATABASE_URL')?.valueFrom?.secretKeyRef?.name).toBe('hub-db');
    expect(JSON.stringify(pod)).not.toContain('flt-admin-0123456789abcdef');
    const pdb = await k.kc
      .makeApiClient(PolicyV1Api)
      .readNamespacedPodDisruptionBudget({ name: HUB_RELEASE, namespace: NS });
    expect(pdb.spec?.minAvailable).toBe(1);
    const ingress = await k.kc
      .makeApiClient(NetworkingV1Api)
      .readNamespacedIngress({ name: HUB_RELEASE, namespace: NS });
    expect(ingress.spec?.tls?.[0]?.hosts).toEqual(['hub.example.com']);

    await helmHere(['upgrade', HUB_RELEASE, hubChartDir, ...VALUES, ...set('replicas=3'), '--wait', '--timeout', '3m']);
    expect(await zonesOf(await readyPods(3))).toEqual(['zone-a', 'zone-b', 'zone-c']);

    await helmHere(['uninstall', HUB_RELEASE, '--wait', '--timeout', '2m']);
    await eventually(
      'the release is gone',
      async () => {
        const [deployments, services, accounts] = await Promise.all([
          k.apps.listNamespacedDeployment({ namespace: NS }),
          k.core.listNamespacedService({ namespace: NS }),
          k.core.listNamespacedServiceAccount({ namespace: NS, labelSelector: SELECTOR }),
        ]);
        return deployments.items.length + services.items.length + accounts.items.length === 0;
      },
      60_000,
    );
    // The Secrets were the operator's, not the release's: they stay.
    expect((await k.core.readNamespacedSecret({ name: 'hub-admin', namespace: NS })).metadata?.name).toBe('hub-admin');
  });
});
