// Pod creates for the webhook bench, sent open-loop (one every 1/rate s whatever the answers).
import http2 from 'node:http2';
import type https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeRest } from '../../../agent/src/runtime/rest.js';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { round } from './metrics.js';

export type CreatePod = (namespace: string, body: Record<string, unknown>) => Promise<void>;

/** Where and as whom the HTTP/2 client creates: plain data, so a load thread can get it too. */
export interface H2Target {
  server: string;
  /** PEM. */
  ca?: string;
  cert?: string;
  key?: string;
  headers: Record<string, string>;
}

export async function h2Target(kc: KubeConfig): Promise<H2Target> {
  const options: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  const pem = (v: unknown): string | undefined =>
    v === undefined ? undefined : Buffer.isBuffer(v) ? v.toString('utf8') : (v as string);
  return {
    server: kc.getCurrentCluster()!.server,
    ca: pem(options.ca),
    cert: pem(options.cert),
    key: pem(options.key),
    headers: { ...((options.headers ?? {}) as Record<string, string>) },
  };
}

/**
 * Creates over HTTP/2, as client-go (the ReplicaSet, Job and CloneSet controllers) talks to the
 * apiserver: many creates share a connection, and another connection opens only when every open
 * one carries as many streams as the apiserver allows (it announces 100), as Go's HTTP/2
 * transport does; waiting for a free stream instead would hold creates back and close the loop.
 * An HTTP/1.1 client needs one connection per create in flight: once answers slow down it opens
 * more, and the TLS handshakes on both sides slow the apiserver further, so the load generator
 * itself turns a slowdown into a collapse.
 */
export async function http2Creator(
  target: H2Target,
): Promise<{ create: CreatePod; close: () => void; connections: () => number }> {
  const { server, headers } = target;
  const sessions: { session: http2.ClientHttp2Session; active: number }[] = [];
  let opened = 0;
  const connect = async (): Promise<(typeof sessions)[number]> => {
    const session = http2.connect(server, { ca: target.ca, cert: target.cert, key: target.key });
    session.on('error', () => undefined);
    const entry = { session, active: 0 };
    // Counted before the handshake, so creates sent meanwhile do not each open one more.
    sessions.push(entry);
    opened++;
    await new Promise<void>((resolve, reject) => {
      session.once('remoteSettings', () => resolve());
      session.once('error', reject);
    });
    return entry;
  };
  const pick = async (): Promise<(typeof sessions)[number]> => {
    const free = sessions.find((s) => s.active < (s.session.remoteSettings.maxConcurrentStreams ?? 100));
    return free ?? connect();
  };
  await connect();
  const create: CreatePod = async (namespace, body) => {
    const entry = await pick();
    entry.active++;
    try {
      await new Promise<void>((resolve, reject) => {
        const stream = entry.session.request({
          ...headers,
          ':method': 'POST',
          ':path': resourcePath(Resources.pods, namespace),
          'content-type': 'application/json',
          accept: 'application/json',
        });
        let status = 0;
        let text = '';
        stream.setEncoding('utf8');
        stream.on('response', (h) => (status = Number(h[':status'])));
        stream.on('data', (chunk: string) => (text += chunk));
        stream.on('end', () =>
          status >= 200 && status < 300 ? resolve() : reject(new Error(`HTTP ${status}: ${text.slice(0, 300)}`)),
        );
        stream.on('error', reject);
        stream.end(JSON.stringify(body));
      });
    } finally {
      entry.active--;
    }
  };
  return {
    create,
    close: () => {
      for (const s of sessions) s.session.close();
    },
    connections: () => opened,
  };
}

/** Creates over HTTP/1.1 keep-alive connections without a cap (`--client=h1`). */
export function http1Creator(rest: KubeRest): CreatePod {
  return async (namespace, body) => {
    await rest.request({ method: 'POST', path: resourcePath(Resources.pods, namespace), body });
  };
}

export interface Stream {
  /** Creates per second. */
  rate: number;
  pod(i: number): Record<string, unknown>;
}

export interface StreamResult {
  latencies: number[];
  /** When each answered create was sent, in s from the start, beside its latency. */
  sentAt: number[];
  /** How late each create (answered or not) left against its schedule, in ms: the load generator's own delay. */
  lateMs: number[];
  failures: number;
  firstError?: string;
  achievedRate: number;
  /** When the loop started, in ms since the epoch: with `sentAt`, a send on the wall clock. */
  startEpochMs: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Runs the streams side by side for `seconds`, each open-loop at its own rate; latencies in ms.
 * Streams that share the seconds see the same apiserver and machine, so their difference is the
 * difference of their pods, not of the moment they ran.
 */
export async function openLoop(
  create: CreatePod,
  namespace: string,
  seconds: number,
  streams: readonly Stream[],
): Promise<StreamResult[]> {
  const results = streams.map((): StreamResult => ({
    latencies: [],
    sentAt: [],
    lateMs: [],
    failures: 0,
    achievedRate: 0,
    startEpochMs: 0,
  }));
  const inFlight: Promise<void>[] = [];
  const schedule = streams.flatMap((s, k) =>
    Array.from({ length: Math.round(s.rate * seconds) }, (_, i) => ({ at: (i * 1000) / s.rate, k, i })),
  );
  schedule.sort((a, b) => a.at - b.at);
  const t0 = performance.now();
  for (const r of results) r.startEpochMs = performance.timeOrigin + t0;
  for (const { at, k, i } of schedule) {
    const wait = t0 + at - performance.now();
    if (wait > 0) await sleep(wait);
    const started = performance.now();
    const r = results[k]!;
    r.lateMs.push(started - (t0 + at));
    inFlight.push(
      create(namespace, streams[k]!.pod(i)).then(
        () => {
          r.latencies.push(performance.now() - started);
          r.sentAt.push((started - t0) / 1000);
        },
        (err: unknown) => {
          r.failures++;
          r.firstError ??= err instanceof Error ? err.message : String(err);
        },
      ),
    );
  }
  const sendSeconds = (performance.now() - t0) / 1000;
  await Promise.all(inFlight);
  for (const [k, r] of results.entries())
    r.achievedRate = round(Math.round(streams[k]!.rate * seconds) / sendSeconds, 1);
  return results;
}
