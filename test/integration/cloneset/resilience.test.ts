/**
 * The controller process killed with SIGKILL in the middle of a scale-up and of updates: after a
 * restart the CloneSet converges, no pod beyond what the spec (and maxSurge) allows ever exists,
 * no pod is created twice, and nothing is left half-done. Two replicas: only the leader
 * reconciles, and killing it hands over within the lease time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Informer } from '../../../agent/src/runtime/informer.js';
import { kubeListWatcher } from '../../../agent/src/runtime/kube-list-watch.js';
import { kubeLeaseClient } from '../../../agent/src/runtime/leader-election.js';
import { Resources } from '../../../agent/src/runtime/resource.js';
import { eventually } from '../helpers/kube.js';
import {
  cloneSet,
  condition,
  createCloneSet,
  env,
  events,
  livePods,
  namespace,
  patchCloneSet,
  settled,
  testCluster,
  type Pod,
} from './harness.js';

const e = env();
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/controller-process.ts');

interface Proc {
  child: ChildProcess;
  output: () => string;
  exit: Promise<unknown>;
}

const children: Proc[] = [];
const informers: Informer<Pod>[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.child.exitCode === null) c.child.kill('SIGKILL');
  await Promise.all(informers.splice(0).map((i) => i.stop()));
});

function controller(ns: string, identity: string): Proc {
  const child = spawn(
    process.execPath,
    ['--conditions=@flotilla/source', '--import', 'tsx', fixture, testCluster().kubeconfigPath, ns, identity],
    { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let out = '';
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise((resolve) => child.once('exit', resolve));
  const proc = { child, output: () => out, exit };
  children.push(proc);
  return proc;
}

async function sigkill(p: Proc): Promise<void> {
  p.child.kill('SIGKILL');
  await p.exit;
}

/** Every pod name ever seen in the namespace, and the most pods alive (not terminating) at once. */
async function recordPods(ns: string): Promise<{ names: Set<string>; maxLive: () => number }> {
  const informer = new Informer<Pod>({
    name: 'recorder',
    listWatch: kubeListWatcher(e.k.kc, e.rest, Resources.pods, { namespace: ns }),
    logger: e.logger,
  });
  informers.push(informer);
  const names = new Set<string>();
  const live = new Set<string>();
  let max = 0;
  const seen = (p: Pod): void => {
    names.add(p.metadata.name);
    if (p.metadata.deletionTimestamp) live.delete(p.metadata.name);
    else live.add(p.metadata.name);
    max = Math.max(max, live.size);
  };
  informer.addEventHandler({
    onAdd: seen,
    onUpdate: (_old, p) => seen(p),
    onDelete: (p) => live.delete(p.metadata.name),
  });
  informer.start();
  await informer.waitForSync();
  return { names, maxLive: () => max };
}

const image = (v: string): unknown => ({ spec: { template: { spec: { containers: [{ name: 'main', image: v }] } } } });

describe('CloneSet controller crashes and leader election', () => {
  it('SIGKILL in the middle of a scale-up: the restarted controller completes it without extra pods', async () => {
    const ns = await namespace(e, 'cs-kill-scale');
    const recorder = await recordPods(ns);
    const first = controller(ns, 'agent');
    await createCloneSet(e, ns, cloneSet('web', { replicas: 24, scaleStrategy: { maxUnavailable: 6 } }));
    await eventually(
      'scale-up under way',
      async () => {
        const n = (await livePods(e, ns, 'web')).length;
        return n >= 8 && n < 40;
      },
      60_000,
      50,
    );
    await sigkill(first);
    controller(ns, 'agent');
    await settled(e, ns, 'web', 24, 90_000);
    expect(recorder.names.size).toBe(24);
    expect(recorder.maxLive()).toBe(24);
  });

  it('SIGKILL in the middle of an in-place update: converges with the same pods, none recreated or left not ready', async () => {
    const ns = await namespace(e, 'cs-kill-inplace');
    const first = controller(ns, 'agent');
    await createCloneSet(
      e,
      ns,
      cloneSet('web', { replicas: 20, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 4 } }),
    );
    await settled(e, ns, 'web', 20, 90_000);
    const before = (await livePods(e, ns, 'web')).map((p) => p.metadata.uid).sort();
    const recorder = await recordPods(ns);
    await patchCloneSet(e, ns, 'web', image('registry.local/app:v2'));
    await eventually(
      'update under way',
      async () => {
        const n = (await livePods(e, ns, 'web')).filter(
          (p) => p.spec.containers[0]!.image === 'registry.local/app:v2',
        ).length;
        return n >= 1 && n < 20;
      },
      60_000,
      50,
    );
    await sigkill(first);
    controller(ns, 'agent');
    await settled(e, ns, 'web', 20, 90_000);
    const after = await livePods(e, ns, 'web');
    expect(after.map((p) => p.metadata.uid).sort()).toEqual(before);
    expect(recorder.names.size).toBe(20);
    for (const p of after) {
      expect(p.spec.containers[0]!.image).toBe('registry.local/app:v2');
      expect(p.metadata.labels?.['lifecycle.apps.kruise.io/state']).toBe('Normal');
      expect(condition(p, 'InPlaceUpdateReady')).toBe('True');
    }
  });

  it('SIGKILL in the middle of a recreate update with maxSurge=2: never more than replicas + 2 pods, each pod created once', async () => {
    const ns = await namespace(e, 'cs-kill-surge');
    const first = controller(ns, 'agent');
    await createCloneSet(
      e,
      ns,
      cloneSet('web', { replicas: 10, updateStrategy: { type: 'ReCreate', maxSurge: 2, maxUnavailable: 0 } }),
    );
    await settled(e, ns, 'web', 10, 90_000);
    const recorder = await recordPods(ns);
    await patchCloneSet(e, ns, 'web', image('registry.local/app:v2'));
    await eventually(
      'update under way',
      async () => {
        const n = (await livePods(e, ns, 'web')).filter(
          (p) => p.spec.containers[0]!.image === 'registry.local/app:v2',
        ).length;
        return n >= 2 && n < 10;
      },
      60_000,
      50,
    );
    await sigkill(first);
    controller(ns, 'agent');
    await settled(e, ns, 'web', 10, 90_000);
    expect(recorder.maxLive()).toBeLessThanOrEqual(12);
    // 10 old pods and 10 replacements, nothing created twice.
    expect(recorder.names.size).toBe(20);
    const left = await livePods(e, ns, 'web');
    expect(left.every((p) => p.metadata.labels?.['apps.kruise.io/specified-delete'] === undefined)).toBe(true);
  });

  it('two replicas: only the leader reconciles; after a SIGKILL the other takes over within the lease time', async () => {
    const ns = await namespace(e, 'cs-leader');
    const leases = kubeLeaseClient(e.rest);
    const a = controller(ns, 'replica-a');
    await eventually(
      'a leads',
      async () => (await leases.get(ns, 'cloneset-controller'))?.spec?.holderIdentity === 'replica-a',
      60_000,
    );
    const b = controller(ns, 'replica-b');
    await eventually(
      'b up and following',
      () => Promise.resolve(b.output().includes('"msg":"new leader observed"')),
      60_000,
    );
    await createCloneSet(e, ns, cloneSet('web', { replicas: 2 }));
    await settled(e, ns, 'web', 2);
    const creators = async (): Promise<string[]> =>
      (await events(e, ns, 'web')).filter((ev) => ev.reason === 'SuccessfulCreate').map((ev) => ev.source?.host ?? '');
    // Give b time to (wrongly) act before checking that it did not.
    await new Promise((r) => setTimeout(r, 2000));
    expect(new Set(await creators())).toEqual(new Set(['replica-a']));

    await sigkill(a);
    const killedAt = Date.now();
    await eventually(
      'b leads',
      async () => (await leases.get(ns, 'cloneset-controller'))?.spec?.holderIdentity === 'replica-b',
      30_000,
      100,
    );
    const handover = Date.now() - killedAt;
    // Lease duration 3 s, plus one retry period and a renew round trip.
    expect(handover).toBeLessThan(5000);
    await patchCloneSet(e, ns, 'web', { spec: { replicas: 3 } });
    await settled(e, ns, 'web', 3);
    expect(await creators()).toContain('replica-b');
  });
});
