/**
 * Fuzz target, over the wire: a real hub (status intake running) and a cluster `c1` that joined
 * through the REST API; a client with c1's own NATS credentials and permissions publishes
 * fuzzed messages (nats.ts's inputs, most of them moved onto c1's own subjects, the rest left on
 * other clusters' subjects, which the server must refuse). Then, once the hub's STATUS consumer
 * has drained:
 * - the server refused every publish outside c1's permissions (one permission error each);
 * - the hub is still ready and answers an ordinary request, nothing crashed;
 * - every message the hub consumed is accounted for: a drop (by reason), a heartbeat or a
 *   stored report;
 * - reports were stored only for c1 and only for objects the hub placed on c1.
 */
import { HUB_STATUS_CONSUMER, STATUS_STREAM, newAgentKey, type AgentCredentials } from '@flotilla/api';
import { jetstreamManager } from '@nats-io/jetstream';
import fc from 'fast-check';
import { connectAs, metricValue, signedHeaders, type JoinedCluster } from '../../integration/hub/fleet.js';
import { Findings, thrown, type Violation } from './lib/findings.js';
import { startFuzzHub, type FuzzHub } from './lib/hub.js';
import type { RunOptions } from './lib/run.js';
import { natsInput, type NatsInput } from './nats.js';

const OWN = 'c1';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A subject a NATS client can publish on (no wildcards, spaces or empty tokens). */
const publishable = (s: string): boolean =>
  s !== '' && !/[\s*>]/.test(s) && !s.split('.').includes('') && Buffer.byteLength(s) < 1000;

/** Most messages on c1's own subjects: the hub's intake, not the server's permissions, decides. */
const liveInput: fc.Arbitrary<{ m: NatsInput; own: boolean }> = fc
  .tuple(natsInput, fc.integer({ min: 0, max: 9 }))
  .map(([m, dice]) => {
    const t = m.subject.split('.');
    const own = dice < 8 && t[0] === 'flotilla' && (t[1] === 'status' || t[1] === 'heartbeat') && t.length > 2;
    if (own) t[2] = OWN;
    const subject = t.join('.');
    // What c1's permissions allow it to publish (its status subjects and its heartbeat).
    return {
      m: { ...m, subject },
      own: subject.startsWith(`flotilla.status.${OWN}.`) || subject === `flotilla.heartbeat.${OWN}`,
    };
  })
  .filter(({ m }) => publishable(m.subject));

async function rest(
  f: FuzzHub,
  method: 'GET' | 'POST',
  url: string,
  token: string,
  body?: object,
  headers: Record<string, string> = {},
): Promise<unknown> {
  const res = await f.hub.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}`, ...headers },
    ...(body ? { payload: body } : {}),
  });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

/** c1 registers with a key of its own, is accepted and claims (signed); two workloads are placed on it. */
async function join(f: FuzzHub): Promise<JoinedCluster> {
  const key = newAgentKey();
  const reg = (await rest(f, 'POST', '/api/v1/clusters/register', f.tokens.bootstrap, {
    name: OWN,
    publicKey: key.publicKey,
  })) as { registrationSecret: string };
  await rest(f, 'POST', `/api/v1/clusters/${OWN}/accept`, f.tokens.operator);
  const claimUrl = `/api/v1/clusters/${OWN}/claim`;
  const body = { registrationSecret: reg.registrationSecret };
  const creds = {
    ...((await rest(
      f,
      'POST',
      claimUrl,
      f.tokens.bootstrap,
      body,
      signedHeaders(key.seed, 'POST', claimUrl, body),
    )) as AgentCredentials),
    seed: key.seed,
  };
  for (const name of ['web', 'x']) {
    await rest(f, 'POST', '/api/v1/workloads', f.tokens.operator, {
      kind: 'CloneSet',
      name,
      namespace: 'default',
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'app:v1' }] } },
      },
      placement: { clusterSelector: {} },
    });
  }
  return creds;
}

async function accounted(f: FuzzHub): Promise<number> {
  const names = [
    'flotilla_hub_nats_messages_dropped_total',
    'flotilla_hub_heartbeats_total',
    'flotilla_hub_status_reports_total',
  ];
  const values = await Promise.all(names.map((n) => metricValue(f.registry, n)));
  return values.reduce((a, b) => a + b, 0);
}

async function consumerState(f: FuzzHub): Promise<{ delivered: number; redelivered: number; pending: number }> {
  const jsm = await jetstreamManager(f.hub.nc);
  const info = await jsm.consumers.info(STATUS_STREAM, HUB_STATUS_CONSUMER);
  return {
    delivered: info.delivered.consumer_seq,
    redelivered: info.num_redelivered,
    pending: info.num_pending + info.num_ack_pending,
  };
}

async function drained(f: FuzzHub): Promise<{ delivered: number; redelivered: number; pending: number }> {
  for (let i = 0; ; i++) {
    const s = await consumerState(f);
    if (s.pending === 0 || i > 600) return s;
    await sleep(100);
  }
}

export async function runNatsLive(opts: RunOptions): Promise<Findings> {
  const f = await startFuzzHub();
  const findings = new Findings();
  const crashes: Violation[] = [];
  const onCrash = (err: unknown): void => void crashes.push({ ...thrown('process', err), kind: 'crash' });
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
  try {
    const creds = await join(f);
    const nc = await connectAs(f.nats, creds);
    let denied = 0;
    void (async () => {
      for await (const s of nc.status()) if (s.type === 'error' && /permission/i.test(String(s.error))) denied++;
    })();
    const before = { counted: await accounted(f), consumer: await drained(f) };
    const inputs = fc.sample(liveInput, { numRuns: opts.runs, seed: opts.seed });
    for (const [i, { m, own }] of inputs.entries()) {
      nc.publish(m.subject, m.data);
      findings.record(m, []);
      findings.count(own ? 'published on subjects c1 may use' : 'published on subjects c1 may not use');
      if (i % 500 === 499) {
        await nc.flush();
        opts.progress?.(i + 1, findings);
      }
    }
    await nc.flush();
    await sleep(500);
    const after = await drained(f);
    const consumed = after.delivered - before.consumer.delivered - (after.redelivered - before.consumer.redelivered);
    const counted = (await accounted(f)) - before.counted;
    findings.count('refused by the server (permissions)', denied);
    findings.count('consumed by the hub', consumed);
    findings.count('accounted by the hub (drops + heartbeats + reports)', counted);
    for (const reason of [
      'subject',
      'json',
      'schema',
      'foreign',
      'unknown_cluster',
      'future_reported_at',
      'not_placed',
      'future_generation',
    ]) {
      findings.count(
        `dropped: ${reason}`,
        await metricValue(f.registry, 'flotilla_hub_nats_messages_dropped_total', { reason }),
      );
    }
    const out: Violation[] = [];
    if (after.pending !== 0)
      out.push({ kind: 'not-drained', where: 'hub-status consumer', detail: `${after.pending} pending` });
    const forbidden = findings.counters.get('published on subjects c1 may not use') ?? 0;
    if (denied !== forbidden) {
      out.push({
        kind: 'permissions',
        where: 'nats-server',
        detail: `${forbidden} forbidden publishes, ${denied} refused`,
      });
    }
    if (counted !== consumed)
      out.push({ kind: 'uncounted', where: 'status intake', detail: `consumed ${consumed}, accounted ${counted}` });
    const rows = await f.hub.pool.query<{ n: string }>(
      `select count(*) as n from object_status s where s.cluster_name <> $1 or not exists (
         select 1 from desired_objects d where d.cluster_name = s.cluster_name and d.kind = s.kind
           and d.namespace = s.namespace and d.name = s.name)`,
      [OWN],
    );
    if (Number(rows.rows[0]!.n) > 0)
      out.push({ kind: 'stored-unplaced', where: 'object_status', detail: `${rows.rows[0]!.n} rows` });
    const ready = await f.hub.app.inject({ method: 'GET', url: '/readyz' });
    const list = await f.hub.app.inject({
      method: 'GET',
      url: '/api/v1/clusters',
      headers: { authorization: `Bearer ${f.tokens.viewer}` },
    });
    if (ready.statusCode !== 200 || list.statusCode !== 200) {
      out.push({ kind: 'hub-down', where: 'after', detail: `readyz ${ready.statusCode}, clusters ${list.statusCode}` });
    }
    findings.report('after the run', [...out, ...crashes]);
    await nc.close();
    return findings;
  } finally {
    process.off('uncaughtException', onCrash);
    process.off('unhandledRejection', onCrash);
    await f.stop();
  }
}
