import https from 'node:https';
import net from 'node:net';
import { MessageChannel } from 'node:worker_threads';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../runtime/kube-object.js';
import { createCa, createServingCert } from '../certs/pki.js';
import { defaultWebhookConfig } from '../config.js';
import type { WebhookServerMetrics } from '../metrics.js';
import type { TlsMaterial } from '../server.js';
import { AdmissionThread, type MirrorSource } from './host.js';
import type { FromThread, ToThread } from './protocol.js';
import { serveAdmissions } from './serve.js';
import { EVENT_LOOP_MONITOR_MS } from '../../runtime/event-loop.js';

const HOUR = 3600_000;
const silent = pino({ level: 'silent' });
let tls: TlsMaterial;
let ca: string;

beforeAll(async () => {
  const now = Date.now();
  const authority = await createCa('test-ca', now, HOUR);
  const serving = await createServingCert(authority, ['127.0.0.1'], now, HOUR);
  tls = { certPem: serving.certPem, keyPem: serving.keyPem };
  ca = authority.certPem;
});

const sidecarSet = (name: string, container: string): KubeObject =>
  ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: container, image: `${container}:v1` }] },
  }) as unknown as KubeObject;

function review(uid: string): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      operation: 'CREATE',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: 'default',
      object: { metadata: { name: 'p', labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'm' }] } },
    },
  });
}

/** The names of the containers the review's patch adds (empty without a patch). */
async function admit(port: number, uid = 'u-1'): Promise<string[]> {
  const body = await new Promise<string>((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port, path: '/mutate-pod', method: 'POST', ca, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`HTTP ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(review(uid));
  });
  const response = (JSON.parse(body) as { response: { uid: string; patch?: string } }).response;
  expect(response.uid).toBe(uid);
  if (!response.patch) return [];
  const patch = JSON.parse(Buffer.from(response.patch, 'base64').toString()) as { path: string; value: unknown }[];
  const containers = patch.find((op) => op.path === '/spec/containers')?.value as { name: string }[] | undefined;
  return (containers ?? []).map((c) => c.name);
}

/** An informer stand-in: a list and the handlers registered on it. */
class FakeSource implements MirrorSource {
  readonly objects = new Map<string, KubeObject>();
  readonly handlers: Parameters<MirrorSource['addEventHandler']>[0][] = [];
  list(): KubeObject[] {
    return [...this.objects.values()];
  }
  addEventHandler(handler: Parameters<MirrorSource['addEventHandler']>[0]): () => void {
    this.handlers.push(handler);
    return () => undefined;
  }
  add(obj: KubeObject): void {
    this.objects.set(obj.metadata!.name!, obj);
    for (const h of this.handlers) h.onAdd?.(obj);
  }
  remove(name: string): void {
    const obj = this.objects.get(name)!;
    this.objects.delete(name);
    for (const h of this.handlers) h.onDelete?.(obj);
  }
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const until = async (check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('serveAdmissions (the thread side, over a MessageChannel)', () => {
  it('answers from the caches it is sent, reports metrics in batches and stops on close', async () => {
    const { port1, port2 } = new MessageChannel();
    const received: FromThread[] = [];
    port1.on('message', (m: FromThread) => received.push(m));
    const send = (m: ToThread): void => port1.postMessage(m);
    const reply = async (id: number): Promise<FromThread & { type: 'reply' }> => {
      await until(() => received.some((m) => m.type === 'reply' && m.id === id), `reply ${id}`);
      return received.find((m) => m.type === 'reply' && m.id === id) as FromThread & { type: 'reply' };
    };
    const config = { ...defaultWebhookConfig('agents'), host: '127.0.0.1', port: 0 };
    serveAdmissions(port2, { config, logLevel: 'silent', flushMs: 20 }, silent);

    send({ type: 'upsert', store: 'sidecarSets', object: sidecarSet('mesh', 'proxy') });
    send({ type: 'tls', id: 1, tls });
    send({ type: 'listen', id: 2 });
    const { port } = await reply(2);
    expect(port).toBeGreaterThan(0);
    expect(await admit(port!)).toEqual(['proxy', 'main']);

    send({ type: 'remove', store: 'sidecarSets', key: 'mesh' });
    send({ type: 'stats', id: 3 });
    expect((await reply(3)).stats).toMatchObject({ resolution: EVENT_LOOP_MONITOR_MS / 1000 });
    expect(await admit(port!, 'u-2')).toEqual([]);
    await until(
      () =>
        received.filter((m) => m.type === 'metrics').flatMap((m) => (m.type === 'metrics' ? m.observations : []))
          .length === 2,
      'two observations',
    );
    const metrics = received.filter((m) => m.type === 'metrics');
    expect(metrics.flatMap((m) => (m.type === 'metrics' ? m.observations.map((o) => o[0]) : []))).toEqual([
      '/mutate-pod',
      '/mutate-pod',
    ]);

    send({ type: 'close', id: 4, final: true });
    expect((await reply(4)).error).toBeUndefined();
    await expect(admit(port!)).rejects.toThrow();
    port1.close();
  }, 20_000);
});

describe('deletion protection in the admission thread', () => {
  it('asks the main thread to count and answers with its count', async () => {
    const { port1, port2 } = new MessageChannel();
    const received: FromThread[] = [];
    port1.on('message', (m: FromThread) => {
      received.push(m);
      // The main thread's side: three active pods, no PVC.
      if (m.type === 'count') {
        port1.postMessage({
          type: 'counted',
          id: m.id,
          count: m.query.what === 'activePods' ? 3 : 0,
        } satisfies ToThread);
      }
    });
    const config = {
      ...defaultWebhookConfig('agents'),
      host: '127.0.0.1',
      port: 0,
      resourcesDeletionProtection: true,
    };
    serveAdmissions(port2, { config, logLevel: 'silent', flushMs: 20 }, silent);
    port1.postMessage({ type: 'tls', id: 1, tls } satisfies ToThread);
    port1.postMessage({ type: 'listen', id: 2 } satisfies ToThread);
    await until(() => received.some((m) => m.type === 'reply' && m.id === 2), 'listening');
    const { port } = received.find((m) => m.type === 'reply' && m.id === 2) as FromThread & { type: 'reply' };
    const body = await new Promise<string>((resolve, reject) => {
      const req = https.request(
        { host: '127.0.0.1', port, path: '/validate-namespace', method: 'POST', ca, agent: false },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      req.end(
        JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          request: {
            uid: 'd-1',
            operation: 'DELETE',
            kind: { group: '', version: 'v1', kind: 'Namespace' },
            resource: { group: '', version: 'v1', resource: 'namespaces' },
            name: 'team-a',
            oldObject: { metadata: { name: 'team-a', labels: { 'policy.kruise.io/delete-protection': 'Cascading' } } },
          },
        }),
      );
    });
    const { response } = JSON.parse(body) as {
      response: { allowed: boolean; status?: { code: number; message: string } };
    };
    expect(response).toMatchObject({
      allowed: false,
      status: {
        code: 403,
        message:
          'forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and active pods 3>0',
      },
    });
    expect(received.filter((m) => m.type === 'count').map((m) => m.type === 'count' && m.query)).toEqual([
      { what: 'activePods', namespace: 'team-a' },
      { what: 'boundPvcs', namespace: 'team-a' },
    ]);
    port1.postMessage({ type: 'close', id: 3, final: true } satisfies ToThread);
    await until(() => received.some((m) => m.type === 'reply' && m.id === 3), 'closed');
    port1.close();
  }, 20_000);
});

describe('AdmissionThread (a real worker thread)', () => {
  const threads: AdmissionThread[] = [];
  afterEach(async () => {
    for (const t of threads.splice(0)) await t.stop();
  });
  afterAll(async () => {
    for (const t of threads.splice(0)) await t.stop();
  });

  it('lowers the main thread once the thread is started, and only once across restarts', async () => {
    const set: number[] = [];
    let startedFirst = false;
    const thread: AdmissionThread = new AdmissionThread({
      config: { ...defaultWebhookConfig('agents'), host: '127.0.0.1', port: 0, controllersNice: 10 },
      logger: silent,
      restartDelayMs: 50,
      priority: {
        platform: 'linux',
        setCallingThreadNice: (nice) => {
          // A thread inherits its creator's priority: it must exist before the main thread is lowered.
          startedFirst = thread.worker() !== undefined;
          set.push(nice);
        },
      },
    });
    threads.push(thread);
    thread.start();
    expect(set).toEqual([10]);
    expect(startedFirst).toBe(true);
    await thread.worker()!.terminate();
    await until(() => thread.restarts() === 1, 'restarted');
    expect(set).toEqual([10]);
  }, 30_000);

  it('serves admissions from mirrored caches, counts them, and is restarted with its state when it dies', async () => {
    const observed: string[] = [];
    const metrics: WebhookServerMetrics = {
      observe: (path) => observed.push(path),
      connection: () => undefined,
      abandoned: () => undefined,
    };
    const conflicts: string[] = [];
    // A fixed port, as in the agent: a restarted thread must come back where the apiserver calls.
    const thread = new AdmissionThread({
      config: { ...defaultWebhookConfig('agents'), host: '127.0.0.1', port: await freePort() },
      logger: silent,
      metrics,
      onConflicts: (c) => conflicts.push(...c.map((x) => `${x.container}:${x.skippedFrom}`)),
      flushMs: 20,
      restartDelayMs: 50,
    });
    threads.push(thread);
    const sidecarSets = new FakeSource();
    thread.mirror('sidecarSets', sidecarSets);
    sidecarSets.add(sidecarSet('a-mesh', 'proxy')); // before start: part of the first full copy
    thread.start();
    await thread.setTls(tls);
    const port = await thread.listen();
    expect(thread.isServing()).toBe(true);
    expect(await admit(port)).toEqual(['proxy', 'main']);

    // A change after start is forwarded; two SidecarSets injecting `proxy` report a conflict.
    sidecarSets.add(sidecarSet('b-mesh', 'proxy'));
    sidecarSets.add(sidecarSet('c-log', 'log'));
    await until(async () => (await admit(port)).includes('log'), 'the new SidecarSet injects');
    await until(() => conflicts.includes('proxy:b-mesh'), 'conflict reported to the main thread');
    await until(() => thread.served() >= 2 && observed.length === thread.served(), 'metrics reach the main thread');
    expect((await thread.loopStats())?.resolution).toBe(EVENT_LOOP_MONITOR_MS / 1000);

    // Killed: the thread comes back on the same port with the same caches and certificate.
    const before = thread.worker()!;
    await before.terminate();
    await until(() => thread.restarts() === 1 && thread.isServing(), 'restarted and listening');
    expect(thread.port()).toBe(port);
    expect(await admit(port)).toEqual(['proxy', 'log', 'main']);

    // close() stops serving but keeps the thread; listen() serves again; stop() ends it.
    await thread.close();
    await expect(admit(port)).rejects.toThrow();
    await thread.listen();
    expect(await admit(port)).toEqual(['proxy', 'log', 'main']);
    const worker = thread.worker()!;
    const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
    await thread.stop();
    await exited;
    expect(thread.isServing()).toBe(false);
    expect(thread.worker()).toBeUndefined();
    await expect(admit(port)).rejects.toThrow();
  }, 60_000);
});
