// The bench's side of the load thread (load-worker.ts): runs open loops there and returns their
// results.
import { Worker } from 'node:worker_threads';
import type { H2Target, StreamResult } from './load.js';
import type { FromLoadThread, LoadThreadInit, ToLoadThread } from './load-protocol.js';
import type { PodStream } from './pods.js';

export interface LoadThread {
  openLoop(namespace: string, seconds: number, streams: PodStream[]): Promise<StreamResult[]>;
  /** HTTP/2 connections the thread opened to the apiserver. */
  connections(): number;
  close(): Promise<void>;
}

export async function startLoadThread(target: H2Target): Promise<LoadThread> {
  const init: LoadThreadInit = { target };
  const worker = new Worker(new URL('./load-worker.mjs', import.meta.url), {
    workerData: init,
    execArgv: [...process.execArgv.filter((a) => !a.startsWith('--conditions')), '--conditions=@flotilla/source'],
  });
  const pending = new Map<number, { resolve: (r: StreamResult[]) => void; reject: (e: Error) => void }>();
  let connections = 0;
  let nextId = 0;
  let onClosed = (): void => {};
  const ready = new Promise<void>((resolve, reject) => {
    worker.on('message', (m: FromLoadThread) => {
      if (m.type === 'ready') resolve();
      else if (m.type === 'closed') onClosed();
      else if (m.type === 'done') {
        connections = m.connections;
        pending.get(m.id)?.resolve(m.results);
        pending.delete(m.id);
      } else if (m.id === undefined) reject(new Error(`load thread: ${m.message}`));
      else {
        pending.get(m.id)?.reject(new Error(`load thread: ${m.message}`));
        pending.delete(m.id);
      }
    });
    worker.on('error', (err) => {
      reject(err);
      for (const p of pending.values()) p.reject(err);
      pending.clear();
    });
  });
  await ready;
  const send = (m: ToLoadThread): void => worker.postMessage(m);
  return {
    openLoop: (namespace, seconds, streams) =>
      new Promise<StreamResult[]>((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve, reject });
        send({ type: 'run', id, namespace, seconds, streams });
      }),
    connections: () => connections,
    close: async () => {
      const closed = new Promise<void>((resolve) => (onClosed = resolve));
      send({ type: 'close' });
      await Promise.race([closed, new Promise((r) => setTimeout(r, 2000))]);
      await worker.terminate();
    },
  };
}
