// Messages between the bench and its load thread (load-thread.ts, load-worker.ts).
import type { H2Target, StreamResult } from './load.js';
import type { PodStream } from './pods.js';

export interface LoadThreadInit {
  target: H2Target;
}

export type ToLoadThread =
  { type: 'run'; id: number; namespace: string; seconds: number; streams: PodStream[] } | { type: 'close' };

export type FromLoadThread =
  | { type: 'ready' }
  | { type: 'done'; id: number; results: StreamResult[]; connections: number }
  | { type: 'failed'; id?: number; message: string }
  | { type: 'closed' };
