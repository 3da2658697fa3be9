/**
 * Two `agent manager` replicas wired as in production (createAgentManager) against one cluster:
 * health endpoints, metrics, controllers only on the leader, and a handover on graceful stop.
 */
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentManager, type AgentComponent, type AgentConfig } from '@flotilla/agent/app';
import { Resources, type Manager } from '@flotilla/agent/runtime';
import { cluster } from '../helpers/context.js';
import { eventually, testNamespace } from '../helpers/kube.js';
import { runtimeEnv } from './support.js';

const env = runtimeEnv();
const running: Manager[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((m) => m.stop('test over')));
});

function config(identity: string, namespace: string): AgentConfig {
  return {
    kubeconfig: cluster(0).kubeconfigPath,
    clusterName: 'c1',
    identity,
    logLevel: 'silent',
    health: { host: '127.0.0.1', port: 0 },
    leaderElection: {
      enabled: true,
      namespace,
      leaseName: 'agent',
      leaseDurationMs: 3000,
      renewDeadlineMs: 2000,
      retryPeriodMs: 500,
    },
    shutdownTimeoutMs: 5000,
    cacheSyncTimeoutMs: 30_000,
  };
}

/** A controller that records the configmaps it reconciles and emits an event for each. */
function recordingController(namespace: string, seen: string[]): AgentComponent {
  return {
    name: 'recorder',
    runsOn: 'leader',
    setup({ manager, events }) {
      const informer = manager.informer({ resource: Resources.configMaps, namespace });
      const recorder = events('recorder');
      const controller = manager.controller({
        name: 'recorder',
        reconcile: (key) => {
          seen.push(key);
          const cm = informer.getByKey(key);
          if (cm) recorder.event(cm, 'Normal', 'Reconciled', `saw ${key}`);
          return Promise.resolve();
        },
      });
      controller.watch(informer);
    },
  };
}

async function replica(identity: string, namespace: string, seen: string[]) {
  const registry = new Registry();
  const manager = await createAgentManager({
    config: config(identity, namespace),
    kubeConfig: env.kc,
    logger: env.logger,
    registry,
    components: [recordingController(namespace, seen)],
  });
  const done = manager.start();
  running.push(manager);
  await eventually(`${identity} health server`, () => Promise.resolve(manager.healthPort() !== undefined));
  const get = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${manager.healthPort()}${path}`);
    return { status: res.status, body: await res.text() };
  };
  return { manager, done, get };
}

describe('agent manager replicas against a real cluster', () => {
  it('serves health and metrics, reconciles only on the leader, and hands over on stop', async () => {
    const ns = await testNamespace(env.k, 'mgr');
    await env.k.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'x' } } });
    const seenA: string[] = [];
    const seenB: string[] = [];
    const a = await replica('agent-a', ns, seenA);
    await eventually('a leads and reconciles x', () =>
      Promise.resolve(a.manager.isLeader() && seenA.includes(`${ns}/x`)),
    );
    const b = await replica('agent-b', ns, seenB);
    await eventually('b ready', async () => (await b.get('/readyz')).status === 200);

    expect(await a.get('/healthz')).toEqual({ status: 200, body: 'ok\n' });
    expect((await a.get('/readyz?verbose')).body).toContain('[+]informers-synced ok');
    const metricsA = (await a.get('/metrics')).body;
    expect(metricsA).toContain('flotilla_agent_reconcile_total{controller="recorder",result="success"}');
    expect(metricsA).toContain(`flotilla_agent_leader_election_is_leader{lease="${ns}/agent"} 1`);
    expect((await b.get('/metrics')).body).toContain(`flotilla_agent_leader_election_is_leader{lease="${ns}/agent"} 0`);
    expect(b.manager.isLeader()).toBe(false);
    expect(seenB).toEqual([]);
    await eventually('an event from the controller', async () => {
      const list = await env.k.core.listNamespacedEvent({ namespace: ns });
      return list.items.some((e) => e.reason === 'Reconciled' && e.source?.host === 'agent-a');
    });

    await a.manager.stop('SIGTERM');
    await a.done;
    await eventually('b takes over at once', () => Promise.resolve(b.manager.isLeader()), 3000, 50);
    await eventually('b reconciles x', () => Promise.resolve(seenB.includes(`${ns}/x`)));
    await env.k.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'y' } } });
    await eventually('b reconciles y', () => Promise.resolve(seenB.includes(`${ns}/y`)));
    expect(seenA).not.toContain(`${ns}/y`);
  });
});
