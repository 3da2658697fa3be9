/**
 * The ContainerRecreateRequest webhooks on a real apiserver calling the agent's replica over TLS
 * (the handlers in the admission thread, the pod read through the main thread): a CRR for a
 * running kwok pod gets the pod's labels, grace and container status context; one for a missing
 * container or pod, or with an invalid spec, is refused by the webhook naming the field; the spec
 * cannot change afterwards.
 */
import type { ContainerRecreateRequest } from '@flotilla/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeRest, type KubeRest } from '../../../agent/src/runtime/index.js';
import { isKubeStatus } from '../../../agent/src/errors.js';
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
const suite = `crr-${Math.random().toString(36).slice(2, 7)}`;
let ns: string;
let replica: AgentReplica;
let config: ReturnType<typeof testWebhookConfig>;

const path = (name = ''): string =>
  `/apis/apps.kruise.io/v1alpha1/namespaces/${ns}/containerrecreaterequests${name ? `/${name}` : ''}`;

const create = (name: string, podName: string, containers: string[], dryRun = false) =>
  rest.request<ContainerRecreateRequest>({
    method: 'POST',
    path: `${path()}${dryRun ? '?dryRun=All' : ''}`,
    body: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ContainerRecreateRequest',
      metadata: { name },
      spec: { podName, containers: containers.map((c) => ({ name: c })) },
    },
  });

/** The apiserver's refusal message, or '' when the request went through. */
async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return '';
  } catch (err) {
    if (isKubeStatus(err, 400) || isKubeStatus(err, 422)) return (err as Error).message;
    throw err;
  }
}

describe('ContainerRecreateRequest webhooks', () => {
  beforeAll(async () => {
    await installCrds(k);
    const agentNs = await testNamespace(k, 'agent', { [SUITE_LABEL]: suite });
    ns = await testNamespace(k, 'crrwh', { [SUITE_LABEL]: suite });
    config = testWebhookConfig(suite, agentNs, await freePort());
    replica = await startReplica(k, config);
    await k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'web' },
        spec: {
          nodeName: cluster(0).nodeNames[0],
          terminationGracePeriodSeconds: 12,
          containers: [{ name: 'app', image: 'x' }],
        },
      },
    });
    await eventually('pod running with a container id', async () => {
      const pod = await k.core.readNamespacedPod({ namespace: ns, name: 'web' });
      return Boolean(pod.status?.containerStatuses?.[0]?.containerID);
    });
    // The configurations take effect asynchronously: wait until a dry run comes back defaulted.
    await eventually('CRR webhook active', async () => {
      const crr = await create('probe', 'web', ['app'], true);
      return crr.metadata?.labels?.['crr.apps.kruise.io/pod-uid'] !== undefined;
    });
  }, 120_000);

  afterAll(async () => {
    await replica?.stop();
    await deleteConfigurations(k, config);
  });

  it('fills in the labels, the grace and the status context from the pod', async () => {
    const pod = await k.core.readNamespacedPod({ namespace: ns, name: 'web' });
    const crr = await create('restart', 'web', ['app']);
    expect(crr.metadata?.labels).toMatchObject({
      'crr.apps.kruise.io/pod-name': 'web',
      'crr.apps.kruise.io/pod-uid': pod.metadata!.uid,
      'crr.apps.kruise.io/node-name': pod.spec!.nodeName,
      'crr.apps.kruise.io/active': 'true',
    });
    expect(crr.spec.strategy).toEqual({ failurePolicy: 'Fail', terminationGracePeriodSeconds: 12 });
    expect(crr.spec.containers[0]?.statusContext).toEqual({
      containerID: pod.status!.containerStatuses![0]!.containerID,
      restartCount: 0,
    });
  });

  it('refuses a missing container and a missing pod, naming the field', async () => {
    expect(await refusal(create('ghost', 'web', ['ghost']))).toContain('spec.containers[0].name');
    expect(await refusal(create('nopod', 'nope', ['app']))).toContain('no found Pod named nope');
  });

  it('refuses invalid specs through the webhook, naming the field', async () => {
    // Each passes the CRD schema; only the webhook's rules refuse it.
    const invalid: [Record<string, unknown>, string][] = [
      [{ containers: [{ name: 'app' }, { name: 'app' }] }, 'spec.containers[1].name'],
      [{ containers: [{ name: 'app' }], activeDeadlineSeconds: 2 }, 'spec.activeDeadlineSeconds'],
      [{ containers: [{ name: 'app', statusContext: { containerID: 'x', restartCount: 0 } }] }, 'spec.containers[0]'],
    ];
    for (const [spec, field] of invalid) {
      const message = await refusal(
        rest.request({
          method: 'POST',
          path: `${path()}?dryRun=All`,
          body: {
            apiVersion: 'apps.kruise.io/v1alpha1',
            kind: 'ContainerRecreateRequest',
            metadata: { name: 'invalid' },
            spec: { podName: 'web', ...spec },
          },
        }),
      );
      expect(message, field).toContain('admission webhook');
      expect(message, field).toContain(field);
    }
  });

  it('keeps the spec immutable', async () => {
    const message = await refusal(
      rest.request({
        method: 'PATCH',
        path: path('restart'),
        body: { spec: { activeDeadlineSeconds: 60 } },
        contentType: 'application/merge-patch+json',
      }),
    );
    expect(message).toContain('spec of ContainerRecreateRequest is immutable');
  });
});
