import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { cluster } from '../helpers/context.js';
import { installCrds } from '../helpers/crds.js';
import { kube, simplePod, testNamespace } from '../helpers/kube.js';
import {
  deleteConfigurations,
  freePort,
  startReplica,
  SUITE_LABEL,
  testWebhookConfig,
  type AgentReplica,
} from './support.js';

const k = kube(cluster(0));

/**
 * A TCP balancer standing in for the Service in front of the replicas: `pick` chooses each new
 * connection's backend port.
 */
async function balancer(port: number, pick: () => number): Promise<net.Server> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    const upstream = net.connect(pick(), '127.0.0.1');
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  // The apiserver keeps connections open; closing the balancer ends them.
  server.on('close', () => sockets.forEach((s) => s.destroy()));
  const close = server.close.bind(server);
  server.close = (cb) => {
    sockets.forEach((s) => s.destroy());
    return close(cb);
  };
  return server;
}

describe('webhook certificates', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
  });

  it('rotates CA and serving certificates under a stream of admissions with zero failures, served by two replicas (one from its admission thread, one from its main thread)', async () => {
    await installCrds(k);
    const suite = `rot-${Math.random().toString(36).slice(2, 7)}`;
    const agentNs = await testNamespace(k, 'agent', { [SUITE_LABEL]: suite });
    const ns = await testNamespace(k, 'rot', { [SUITE_LABEL]: suite });
    const lbPort = await freePort();
    const [portA, portB] = [await freePort(), await freePort()];
    const base = testWebhookConfig(suite, agentNs, portA, `https://127.0.0.1:${lbPort}`);
    // Short lifetimes: the CA is rotated about every 12 s, the serving certificate every 6 s.
    const config = {
      ...base,
      caValidityMs: 24_000,
      servingValidityMs: 12_000,
      renewFraction: 0.5,
      propagationMs: 1_500,
      syncIntervalMs: 1_000,
    };
    const started: { a?: AgentReplica; b?: AgentReplica } = {};
    // A new connection goes to the replica that has served fewer admissions. The apiserver speaks
    // HTTP/2 to a loopback URL, one connection at a time, and each replica's reload of a rotated
    // certificate sends it away (GOAWAY). By plain round robin, the replica that reloaded second in
    // a round held the connection only between the two reloads, so a replica's share depended on
    // which one read the Secret first and could stay at a handful of admissions.
    const lb = await balancer(lbPort, () => {
      const { a, b } = started;
      return a && b && b.webhook.server.served() < a.webhook.server.served() ? portB : portA;
    });
    cleanup.push(() => new Promise((r) => lb.close(r)));
    cleanup.push(() => deleteConfigurations(k, config));
    const a = await startReplica(k, config, 'replica-a');
    started.a = a;
    cleanup.push(() => a.stop());
    // Replica A serves from its admission thread (the default), B from its main thread: rotation
    // must be seamless both ways.
    const b = await startReplica(k, { ...config, port: portB, thread: false }, 'replica-b');
    started.b = b;
    cleanup.push(() => b.stop());

    const secretCa = async (): Promise<string> => {
      const s = await k.core.readNamespacedSecret({ namespace: agentNs, name: config.secretName });
      return s.data?.['ca-cert.pem'] ?? '';
    };
    const owned = {
      ...simplePod('probe', 'registry.local/app:v1'),
      metadata: {
        generateName: 'stream-',
        ownerReferences: [
          {
            apiVersion: 'apps.kruise.io/v1alpha1',
            kind: 'CloneSet',
            name: 'x',
            uid: '00000000-0000-0000-0000-000000000001',
            controller: true,
          },
        ],
      },
    };
    // Wait until the configuration is effective (the gate shows up on a dry-run create).
    for (let i = 0; ; i++) {
      const p = await k.core.createNamespacedPod({ namespace: ns, body: owned, dryRun: 'All' }).catch(() => undefined);
      if (p?.spec?.readinessGates?.length) break;
      if (i > 200) throw new Error('webhook never became effective');
      await new Promise((r) => setTimeout(r, 100));
    }

    const cas = new Set<string>([await secretCa()]);
    const failures: string[] = [];
    let admitted = 0;
    // Counted separately: the point is that admissions keep succeeding across the CA change,
    // whatever the machine's load makes the total.
    let admittedAfterRotation = 0;
    const until = Date.now() + 30_000;
    const worker = async (): Promise<void> => {
      while (Date.now() < until) {
        try {
          const p = await k.core.createNamespacedPod({ namespace: ns, body: owned, dryRun: 'All' });
          if (p.spec?.readinessGates?.[0]?.conditionType !== 'KruisePodReady') failures.push('not mutated');
          admitted++;
          if (cas.size >= 2) admittedAfterRotation++;
        } catch (err) {
          failures.push(String((err as { body?: string }).body ?? err));
        }
      }
    };
    const watcher = async (): Promise<void> => {
      while (Date.now() < until) {
        cas.add(await secretCa());
        await new Promise((r) => setTimeout(r, 500));
      }
    };
    await Promise.all([worker(), worker(), worker(), worker(), watcher()]);

    expect(failures.slice(0, 3)).toEqual([]);
    expect(admitted).toBeGreaterThan(50);
    expect(cas.size, 'the CA must have been rotated at least once').toBeGreaterThanOrEqual(2);
    expect(admittedAfterRotation, 'admissions after the first rotation').toBeGreaterThan(10);
    expect(a.webhook.thread, 'replica A serves from a thread').toBeDefined();
    expect(b.webhook.thread, 'replica B serves from its main thread').toBeUndefined();
    expect(a.webhook.server.served()).toBeGreaterThan(10);
    expect(b.webhook.server.served()).toBeGreaterThan(10);
  }, 120_000);
});
