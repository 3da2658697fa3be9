import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Registry } from 'prom-client';
// Same module graph as the controller (see cloneset/harness.ts).
import { kubeListWatcher } from '../../../agent/src/runtime/kube-list-watch.js';
import { Manager } from '../../../agent/src/runtime/manager.js';
import { RuntimeMetrics } from '../../../agent/src/runtime/metrics.js';
import { createKubeRest } from '../../../agent/src/runtime/rest.js';
import { setupPodReadinessController } from '../../../agent/src/controllers/podreadiness/index.js';
import { cluster } from '../helpers/context.js';
import { eventually, isPodReady, kube, podCondition, simplePod, testNamespace } from '../helpers/kube.js';

describe('pod readiness controller', () => {
  const k = kube(cluster(0));
  const rest = createKubeRest(k.kc);
  let ns: string;
  let manager: Manager;
  let done: Promise<void>;

  beforeAll(async () => {
    ns = await testNamespace(k, 'podready');
    manager = new Manager({
      logger: pino({ level: process.env.FLOTILLA_TEST_LOG ?? 'silent' }, pino.destination(2)),
      metrics: new RuntimeMetrics(new Registry()),
      listWatcherFor: (resource, options) => kubeListWatcher(k.kc, rest, resource, options),
      shutdownTimeoutMs: 5000,
    });
    setupPodReadinessController({ manager, rest }, { namespace: ns });
    done = manager.start();
    await eventually('caches synced', () => Promise.resolve(manager.hasSynced()), 30_000, 50);
  });

  afterAll(async () => {
    await manager.stop('test over');
    await done.catch(() => undefined);
  });

  it('answers the KruisePodReady gate so a gated pod turns Ready, and leaves ungated pods alone', async () => {
    await k.core.createNamespacedPod({
      namespace: ns,
      body: simplePod('gated', 'registry.local/app:v1', { readinessGates: [{ conditionType: 'KruisePodReady' }] }),
    });
    await k.core.createNamespacedPod({ namespace: ns, body: simplePod('plain', 'registry.local/app:v1') });
    const ready = await eventually('gated pod Ready', async () => {
      const p = await k.core.readNamespacedPod({ name: 'gated', namespace: ns });
      if (!isPodReady(p)) throw new Error(JSON.stringify(p.status?.conditions));
      return p;
    });
    expect(podCondition(ready, 'KruisePodReady')).toBe('True');
    const plain = await eventually('plain pod Ready', async () => {
      const p = await k.core.readNamespacedPod({ name: 'plain', namespace: ns });
      return isPodReady(p) && p;
    });
    expect(podCondition(plain, 'KruisePodReady')).toBeUndefined();
  });
});
