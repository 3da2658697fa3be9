/**
 * The admission thread: the apiserver's admissions are answered by the agent's worker thread, so
 * a main thread busy with controller work (here: blocked outright) delays no pod create; on
 * shutdown the thread ends and the port closes. The create runs in a child process, since this
 * test's own thread is the agent's main thread and is blocked while the create happens.
 */
import { spawn } from 'node:child_process';
import type https from 'node:https';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cluster } from '../helpers/context.js';
import { installCrds } from '../helpers/crds.js';
import { eventually, kube, simplePod, testNamespace } from '../helpers/kube.js';
import {
  deleteConfigurations,
  freePort,
  startReplica,
  SUITE_LABEL,
  testWebhookConfig,
  type AgentReplica,
} from './support.js';

const k = kube(cluster(0));
const suite = `thr-${Math.random().toString(36).slice(2, 7)}`;
let agentNs: string;
let ns: string;
let replica: AgentReplica;
let config: ReturnType<typeof testWebhookConfig>;

/** A pod a CloneSet controls: the webhook gives it the KruisePodReady gate. */
const owned = (name: string): Record<string, unknown> => ({
  ...simplePod(name, 'registry.local/app:v1'),
  metadata: {
    name,
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
});

// Runs in the child: waits for a line on stdin, then creates the pod (dry run) and prints the
// status, the time the create took and the readiness gates of the answer.
const CHILD = `
const https = require('node:https');
const o = JSON.parse(process.env.CREATE);
process.stdout.write('ready\\n');
process.stdin.once('data', () => {
  const t0 = Date.now();
  const req = https.request(o.url, { method: 'POST', ca: o.ca, cert: o.cert, key: o.key,
    headers: { ...o.headers, 'content-type': 'application/json' } }, (res) => {
    let body = '';
    res.on('data', (c) => (body += c));
    res.on('end', () => {
      const gates = (JSON.parse(body).spec || {}).readinessGates || [];
      process.stdout.write(JSON.stringify({ status: res.statusCode, ms: Date.now() - t0, gates }) + '\\n');
      process.exit(0);
    });
  });
  req.on('error', (e) => { process.stdout.write(JSON.stringify({ error: String(e) }) + '\\n'); process.exit(1); });
  req.end(o.body);
});
`;

const pem = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : Buffer.isBuffer(v) ? v.toString('utf8') : undefined;

async function createFromChild(namespace: string, body: Record<string, unknown>, blockMs: number) {
  const options: https.RequestOptions = {};
  await k.kc.applyToHTTPSOptions(options);
  const server = k.kc.getCurrentCluster()!.server;
  const env = {
    url: `${server}/api/v1/namespaces/${namespace}/pods?dryRun=All`,
    ca: pem(options.ca),
    cert: pem(options.cert),
    key: pem(options.key),
    headers: options.headers ?? {},
    body: JSON.stringify(body),
  };
  const child = spawn(process.execPath, ['-e', CHILD], {
    env: { ...process.env, CREATE: JSON.stringify(env) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (c: string) => (out += c));
  await eventually('child ready', () => Promise.resolve(out.startsWith('ready')));
  child.stdin.write('go\n');
  // The agent's main thread (this one) does nothing else for blockMs, as a long reconcile would.
  const until = Date.now() + blockMs;
  while (Date.now() < until) {
    /* busy */
  }
  await new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return JSON.parse(out.trim().split('\n').at(-1)!) as {
    status?: number;
    ms?: number;
    gates?: { conditionType: string }[];
    error?: string;
  };
}

describe('the admission thread', () => {
  beforeAll(async () => {
    await installCrds(k);
    agentNs = await testNamespace(k, 'agent', { [SUITE_LABEL]: suite });
    ns = await testNamespace(k, 'thr', { [SUITE_LABEL]: suite });
    config = testWebhookConfig(suite, agentNs, await freePort());
    replica = await startReplica(k, config);
    await eventually('mutating webhook active', async () => {
      const p = await k.core.createNamespacedPod({ namespace: ns, body: owned('probe'), dryRun: 'All' });
      return (p.spec?.readinessGates?.length ?? 0) > 0;
    });
  });
  afterAll(async () => {
    await deleteConfigurations(k, config);
    await replica?.stop();
  });

  it('answers the apiserver while the main thread is blocked', async () => {
    expect(replica.webhook.thread, 'admissions are served by a thread by default').toBeDefined();
    const served = replica.webhook.server.served();
    const result = await createFromChild(ns, owned('while-blocked'), 3000);
    expect(result.error).toBeUndefined();
    expect(result.status).toBe(201);
    expect(result.gates?.map((g) => g.conditionType)).toEqual(['KruisePodReady']);
    // Answered well inside the 3 s the main thread was blocked: the thread served it.
    expect(result.ms).toBeLessThan(2000);
    await eventually('the thread reports the admission', () =>
      Promise.resolve(replica.webhook.server.served() > served),
    );
  });

  it('ends the thread and closes the port on shutdown', async () => {
    const thread = replica.webhook.thread!;
    const worker = thread.worker()!;
    const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
    await replica.stop();
    await exited;
    expect(thread.worker()).toBeUndefined();
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect(config.port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    expect(refused, 'nothing listens on the webhook port after shutdown').toBe(true);
  });
});
