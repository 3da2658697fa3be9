// The pods the webhook bench creates: gated (no scheduler or kwok work), labelled for the two
// SidecarSets, or opted out of the webhook by its objectSelector.
import type { Stream } from './load.js';

export function benchPod(i: number, phase: string, optOut: boolean): Record<string, unknown> {
  return {
    metadata: {
      name: `${phase}-${i}`,
      labels: { app: 'bench', ...(optOut ? { 'flotilla.io/webhook': 'disabled' } : {}) },
    },
    spec: {
      schedulingGates: [{ name: 'flotilla.io/bench' }],
      containers: [{ name: 'main', image: 'registry.local/app:v1', env: [{ name: 'LOG_LEVEL', value: 'info' }] }],
    },
  };
}

/** One open-loop stream of bench pods, as plain data (it crosses to the load thread). */
export interface PodStream {
  rate: number;
  /** Name prefix of the stream's pods. */
  phase: string;
  optOut: boolean;
}

/** The open loop's streams for these pod streams. */
export function openLoopStreams(streams: readonly PodStream[]): Stream[] {
  return streams.map((s) => ({ rate: s.rate, pod: (i: number) => benchPod(i, s.phase, s.optOut) }));
}
