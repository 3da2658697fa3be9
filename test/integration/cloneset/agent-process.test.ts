/**
 * `agent manager` as a user runs it (agent/src/main.ts, flags and a kubeconfig) runs the CloneSet
 * controller: it scales a CloneSet out and in, updates it in place, reports its status, and exits
 * 0 on SIGTERM. Then the image's own command (its Node flags and environment, the bundle
 * agent/scripts/bundle.mjs makes, which `npm test` builds) with every component: the admission
 * thread runs from the bundle's worker.js. The process acts in every namespace, so it gets a
 * cluster of its own instead of the run's shared ones, where it would reconcile other suites'
 * CloneSets.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { freePort, startCluster, type Cluster } from '@flotilla/test';
import { agentImageRuntime } from '../../bench/agent-image.js';
import { KubeApiError } from '../../../agent/src/errors.js';
import { createKubeRest } from '../../../agent/src/runtime/rest.js';
import { installCrds } from '../helpers/crds.js';
import { eventually, kube, testNamespace } from '../helpers/kube.js';
import {
  cloneSet,
  createCloneSet,
  inPlaceState,
  livePods,
  patchCloneSet,
  settled,
  statusReaches,
  type Env,
} from './harness.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

let own: Cluster;
let e: Env;
beforeAll(async () => {
  own = await startCluster({ name: 'cs-agent', nodes: 2 });
  const info = {
    name: own.name,
    server: own.server,
    kubeconfig: own.kubeconfig,
    kubeconfigPath: own.kubeconfigPath,
    nodeNames: own.nodeNames,
  };
  const k = kube(info);
  e = { k, rest: createKubeRest(k.kc), logger: pino({ level: 'silent' }) };
  await installCrds(k);
});
afterAll(async () => {
  await own?.stop();
});

describe('agent manager process', () => {
  it('runs the CloneSet controller: scales out and in, updates in place, reports status, exits 0 on SIGTERM', async () => {
    const ns = await testNamespace(e.k, 'cs-agent');
    const healthPort = await freePort();
    const child = spawn(
      process.execPath,
      [
        '--conditions=@flotilla/source',
        '--import',
        'tsx',
        'agent/src/main.ts',
        'manager',
        `--kubeconfig=${own.kubeconfigPath}`,
        '--cluster-name=cs-agent',
        '--no-leader-elect',
        '--health-host=127.0.0.1',
        `--health-port=${healthPort}`,
        '--components=cloneset',
        '--log-level=warn',
      ],
      { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await eventually(
        'agent ready',
        async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`).catch(() => undefined))?.status === 200,
        90_000,
      );
      await createCloneSet(e, ns, cloneSet('web', { replicas: 3, updateStrategy: { type: 'InPlaceIfPossible' } }));
      const created = await settled(e, ns, 'web', 3);
      expect(created.status).toMatchObject({ availableReplicas: 3, labelSelector: 'app=web' });
      const before = (await livePods(e, ns, 'web')).map((p) => p.metadata.uid).sort();

      await patchCloneSet(e, ns, 'web', {
        spec: { template: { spec: { containers: [{ name: 'main', image: 'registry.local/app:v2' }] } } },
      });
      await settled(e, ns, 'web', 3);
      const updated = await livePods(e, ns, 'web');
      expect(updated.map((p) => p.metadata.uid).sort()).toEqual(before);
      expect(updated.every((p) => inPlaceState(p).revision !== undefined)).toBe(true);

      await patchCloneSet(e, ns, 'web', { spec: { replicas: 1 } });
      await statusReaches(e, ns, 'web', 'scaled in to 1', (s) => s.replicas === 1 && s.readyReplicas === 1);
      await eventually('2 pods deleted', async () => (await livePods(e, ns, 'web')).length === 1);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exit, stderr).toBe(0);
  });

  it('runs as the image runs it: the bundle with every component, its webhook thread validating', async () => {
    const image = agentImageRuntime(root);
    expect(image.script).toBe('agent/dist/bundle/main.js');
    const ns = await testNamespace(e.k, 'cs-bundle');
    const agentNs = await testNamespace(e.k, 'cs-bundle-system');
    const [healthPort, webhookPort] = [await freePort(), await freePort()];
    const child = spawn(
      process.execPath,
      [
        ...image.nodeFlags,
        image.script,
        'manager',
        `--kubeconfig=${own.kubeconfigPath}`,
        '--cluster-name=cs-bundle',
        '--no-leader-elect',
        `--namespace=${agentNs}`,
        '--components=*',
        '--webhook-host=127.0.0.1',
        `--webhook-port=${webhookPort}`,
        `--webhook-url=https://127.0.0.1:${webhookPort}`,
        '--health-host=127.0.0.1',
        `--health-port=${healthPort}`,
        '--log-level=warn',
      ],
      { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...image.env } },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await eventually(
        'bundled agent ready',
        async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`).catch(() => undefined))?.status === 200,
        90_000,
      );
      // Denied by the admission thread (worker.js of the bundle), naming the field.
      const bad = cloneSet('bad', { replicas: 1 });
      bad.spec.template.metadata = { labels: { app: 'other' } };
      const err = await createCloneSet(e, ns, bad).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(err).toBeInstanceOf(KubeApiError);
      const message = String(((err as KubeApiError).body as { message?: string } | undefined)?.message);
      expect(message).toContain('vcloneset.kb.io');
      expect(message).toContain('spec.template.metadata.labels');
      await createCloneSet(e, ns, cloneSet('web', { replicas: 2 }));
      const created = await settled(e, ns, 'web', 2);
      expect(created.status).toMatchObject({ availableReplicas: 2 });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exit, stderr).toBe(0);
  });
});
