// Counts the pods created in a namespace, from a watch read by a worker thread of the bench.
//
// Every phase (the ceiling loops and the scale-up) is counted by this same instrument and ends at
// the same event, the last pod seen, so the observer costs every phase the same. The watch is read
// off the bench's main thread, which runs the ceiling loops' 64 creations in flight.
import type https from 'node:https';
import { Worker } from 'node:worker_threads';
import type { KubeConfig } from '@kubernetes/client-node';

/** Shared Int32 slots between the thread and the bench. */
const SLOT = { pods: 0, failed: 1, open: 2, rewatches: 3 } as const;

/**
 * The thread counts in rounds: a LIST with `limit=1` gives the pods so far (the item and
 * `remainingItemCount`) and a resourceVersion, a WATCH from it counts every ADDED event after
 * that (the namespace is fresh and nothing in it is deleted while it counts). The apiserver ends
 * a watch that falls behind a burst of events (its cacher drops a watcher whose buffer stays
 * full), as it does the informers', which resume; so does this: a new round.
 *
 * The watch is protobuf because the scheduler, the controller manager and kwok watch pods in
 * protobuf in every phase: the apiserver encodes an event once per format and shares it between
 * watchers, so the counter costs it the write alone in every phase. A JSON counter would pay the
 * JSON encoding in the ceiling loops and share the agent's in the scale-up, weighing on the
 * ceilings only.
 *
 * A protobuf watch is a stream of frames, each a 4-byte big-endian length and a metav1.WatchEvent
 * whose field 1 is the type: an ADDED frame starts 0x0a 0x05 "ADDED". Only those first bytes of a
 * frame are looked at and the rest skipped: parsing each event, as an informer does, would take a
 * good share of the worker side's core. Plain JavaScript, so the thread needs no loader.
 */
const THREAD = `
const { workerData } = require('node:worker_threads');
const https = require('node:https');
const { server, path, tls, shared, slot } = workerData;
const state = new Int32Array(shared);
const fail = () => Atomics.store(state, slot.failed, 1);
const added = Buffer.from([0x0a, 0x05, ...Buffer.from('ADDED')]);
const HEAD = 4 + added.length;
const get = (query, accept, onResponse) => {
  const headers = { ...tls.headers, Accept: accept };
  const req = https.request(new URL(server + path + query), { method: 'GET', ...tls, headers }, onResponse);
  req.on('error', fail);
  req.end();
};
const json = (res, then) => {
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (c) => (body += c));
  res.on('end', () => (res.statusCode === 200 ? then(JSON.parse(body)) : fail()));
};
const round = () =>
  get('?limit=1', 'application/json', (res) =>
    json(res, (list) => {
      const before = list.items.length + (list.metadata.remainingItemCount ?? 0);
      if (list.metadata.continue && list.metadata.remainingItemCount === undefined) return fail();
      watch(before, list.metadata.resourceVersion);
    }),
  );
const watch = (before, rv) =>
  get('?watch=true&timeoutSeconds=3600&resourceVersion=' + rv, 'application/vnd.kubernetes.protobuf;stream=watch', (w) => {
    if (w.statusCode !== 200 || !String(w.headers['content-type']).startsWith('application/vnd.kubernetes.protobuf')) {
      w.resume();
      return fail();
    }
    let seen = 0;
    Atomics.store(state, slot.pods, Math.max(Atomics.load(state, slot.pods), before));
    Atomics.store(state, slot.open, 1);
    let pending = Buffer.alloc(0);
    let skip = 0;
    let broken = false;
    w.on('data', (chunk) => {
      let i = 0;
      while (i < chunk.length && !broken) {
        if (skip > 0) {
          const take = Math.min(skip, chunk.length - i);
          skip -= take;
          i += take;
          continue;
        }
        const piece = chunk.subarray(i, i + HEAD - pending.length);
        pending = pending.length > 0 ? Buffer.concat([pending, piece]) : piece;
        i += piece.length;
        if (pending.length < HEAD) break;
        const length = pending.readUInt32BE(0);
        if (pending.subarray(4).equals(added)) Atomics.store(state, slot.pods, before + ++seen);
        else if (pending[4] !== 0x0a) broken = true;
        skip = length - added.length;
        if (skip < 0) broken = true;
        pending = Buffer.alloc(0);
      }
      if (broken) {
        fail();
        w.destroy();
      }
    });
    w.on('end', () => {
      if (broken) return;
      Atomics.add(state, slot.rewatches, 1);
      round();
    });
    w.on('error', fail);
  });
round();
`;

export interface PodCounter {
  /** Pods seen so far; throws once the counter failed. */
  count(): number;
  /** How often the apiserver ended the watch and the counter resumed with a new LIST. */
  rewatches(): number;
  stop(): Promise<void>;
}

/** Starts counting the pods of `ns` (a fresh namespace) and resolves once the watch is open. */
export async function podCounter(kc: KubeConfig, ns: string): Promise<PodCounter> {
  const options: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  const tls = { ca: options.ca, cert: options.cert, key: options.key, headers: options.headers ?? {} };
  const shared = new SharedArrayBuffer(4 * Object.keys(SLOT).length);
  const state = new Int32Array(shared);
  const worker = new Worker(THREAD, {
    eval: true,
    workerData: {
      server: kc.getCurrentCluster()!.server,
      path: `/api/v1/namespaces/${ns}/pods`,
      tls,
      shared,
      slot: SLOT,
    },
  });
  let failed: unknown;
  worker.once('error', (err) => (failed = err));
  const counter: PodCounter = {
    count: () => {
      if (failed !== undefined || Atomics.load(state, SLOT.failed) !== 0)
        throw new Error(`pod counter of ${ns} failed`, { cause: failed });
      return Atomics.load(state, SLOT.pods);
    },
    rewatches: () => Atomics.load(state, SLOT.rewatches),
    stop: async () => void (await worker.terminate()),
  };
  // From the first open watch on, no creation is missed.
  const deadline = Date.now() + 30_000;
  while (Atomics.load(state, SLOT.open) === 0) {
    counter.count();
    if (Date.now() > deadline) throw new Error(`pod counter of ${ns}: no watch after 30 s`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return counter;
}
