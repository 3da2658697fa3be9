/**
 * The preview of a rollout (a dry run): the plan freezePlan froze, explained. Per cluster of the
 * fleet whether it is in the plan and why (placement, state), what may hold it (offline now,
 * outside its maintenance windows), the manifest it would get and how that differs from what it
 * has; per wave when it is expected to start and end. Expected times come from a simulation of
 * the waves in which every cluster is healthy as soon as it starts and every approval is given at
 * once, so they are lower bounds: canary pauses and soak, concurrency and windows decide them.
 * Pure.
 */
import type { ManifestChange, PreviewCluster, PreviewReason, PreviewWave, RolloutPreview } from '@flotilla/api';
import { jsonDiff } from '../json-diff.js';
import { windowState, type CompiledWindow } from '../maintenance-windows.js';
import { waveSettings } from './plan.js';
import type { FrozenPlan, FrozenWave } from './types.js';

export interface PreviewFleetCluster {
  name: string;
  /** Registration state: 'pending', 'accepted' (removed clusters are not listed). */
  state: string;
  online: boolean;
  windows: readonly CompiledWindow[];
  /** What the hub sends it now (absent: nothing). */
  current?: { revision: number; manifest: Record<string, unknown> | null };
}

export interface PreviewInput {
  plan: FrozenPlan;
  fleet: readonly PreviewFleetCluster[];
  /** The manifest a cluster of the plan gets at the target revision (overrides applied). */
  manifestFor: (cluster: string) => Record<string, unknown>;
  at: number;
}

export type PreviewPlan = Pick<RolloutPreview, 'waves' | 'clusters'>;

interface Schedule {
  waves: { start: number; end: number }[];
  starts: Map<string, number>;
}

/**
 * Time a cluster of the wave takes when it is healthy at once: its canary pauses, a passing
 * analysis (the first measurement at once, the others an interval apart) and soak.
 */
const clusterMs = (w: FrozenWave): number =>
  (w.canarySteps.reduce((sum, s) => sum + (s.pauseSeconds ?? 0), 0) +
    (w.analysis ? (w.analysis.count - 1) * w.analysis.intervalSeconds : 0) +
    w.soakSeconds) *
  1000;

/** The next moment something can change: a running cluster finishes or a closed window opens. */
function nextEvent(
  running: number[],
  pending: string[],
  windowsOf: (name: string) => readonly CompiledWindow[],
  t: number,
) {
  const opens = pending.map((n) => windowState(windowsOf(n), t).opensAt).filter((x): x is number => x !== undefined);
  const all = [...running, ...opens];
  return all.length === 0 ? undefined : Math.min(...all);
}

/** One wave from `start`: clusters in order, at most maxConcurrency at once, each inside its windows. */
function simulateWave(w: FrozenWave, start: number, windowsOf: (name: string) => readonly CompiledWindow[]) {
  const duration = clusterMs(w);
  const starts = new Map<string, number>();
  let pending = [...w.members];
  let running: number[] = [];
  let t = start;
  let end = start;
  while (pending.length > 0) {
    running = running.filter((finish) => finish > t);
    for (const name of pending) {
      if (running.length >= w.maxConcurrency) break;
      if (!windowState(windowsOf(name), t).open) continue;
      starts.set(name, t);
      running.push(t + duration);
      end = Math.max(end, t + duration);
    }
    pending = pending.filter((n) => !starts.has(n));
    const next = pending.length > 0 ? nextEvent(running, pending, windowsOf, t) : undefined;
    if (next === undefined) break;
    t = next;
  }
  return { end, starts };
}

export function expectedSchedule(
  plan: FrozenPlan,
  windowsOf: (name: string) => readonly CompiledWindow[],
  at: number,
): Schedule {
  const out: Schedule = { waves: [], starts: new Map() };
  let start = at;
  for (const w of plan.waves) {
    const { end, starts } = simulateWave(w, start, windowsOf);
    out.waves.push({ start, end });
    for (const [n, t] of starts) out.starts.set(n, t);
    start = end;
  }
  return out;
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

function reasonsFor(c: PreviewFleetCluster, wave: string | undefined, plan: FrozenPlan, at: number) {
  const reasons: { reason: PreviewReason; message: string }[] = [];
  if (wave === undefined) {
    if (c.state !== 'accepted') reasons.push({ reason: 'state', message: `the cluster is ${c.state}, not accepted` });
    else reasons.push({ reason: 'selector', message: "the workload's placement does not target it" });
    return reasons;
  }
  reasons.push({ reason: 'selector', message: `the workload's placement targets it; wave "${wave}"` });
  if (!c.online) {
    const fate = plan.offlinePolicy === 'Skip' ? 'skipped' : 'failed';
    reasons.push({ reason: 'offline', message: `no heartbeat now: ${fate} at its turn unless it is back` });
  }
  const window = windowState(c.windows, at);
  if (!window.open) {
    const when =
      window.opensAt === undefined ? 'none opens within 8 years' : `the next opens at ${iso(window.opensAt)}`;
    reasons.push({ reason: 'window', message: `outside its maintenance windows now; ${when}` });
  }
  return reasons;
}

function previewCluster(input: PreviewInput, c: PreviewFleetCluster, wave: string | undefined, start?: number) {
  const manifest = wave === undefined ? null : input.manifestFor(c.name);
  const diff: ManifestChange[] = manifest ? jsonDiff(c.current?.manifest ?? undefined, manifest) : [];
  const out: PreviewCluster = {
    name: c.name,
    included: wave !== undefined,
    wave: wave ?? null,
    reasons: reasonsFor(c, wave, input.plan, input.at),
    expectedStartAt: iso(start),
    currentRevision: c.current?.revision ?? null,
    manifest,
    diff,
  };
  return out;
}

function previewWave(
  w: FrozenWave,
  times: { start: number; end: number },
  prePull: FrozenPlan['prePull'] | undefined,
): PreviewWave {
  return {
    ...waveSettings(w),
    canarySteps: w.canarySteps.map((s) => ({ partition: s.partition, pauseSeconds: s.pauseSeconds ?? 0 })),
    expectedStartAt: new Date(times.start).toISOString(),
    expectedEndAt: new Date(times.end).toISOString(),
    ...(prePull ? { prePull } : {}),
  };
}

export function previewPlan(input: PreviewInput): PreviewPlan {
  const byName = new Map(input.fleet.map((c) => [c.name, c]));
  const schedule = expectedSchedule(input.plan, (n) => byName.get(n)?.windows ?? [], input.at);
  const waveOf = new Map(input.plan.waves.flatMap((w) => w.members.map((m) => [m, w.name] as const)));
  const members = input.plan.waves.flatMap((w) => w.members);
  const rest = input.fleet.filter((c) => !waveOf.has(c.name)).sort((a, b) => (a.name < b.name ? -1 : 1));
  const clusters = [
    ...members.map((m) => {
      const c = byName.get(m) ?? { name: m, state: 'accepted', online: false, windows: [] };
      return previewCluster(input, c, waveOf.get(m), schedule.starts.get(m));
    }),
    ...rest.map((c) => previewCluster(input, c, undefined)),
  ];
  // Every wave but the first is pre-pulled (nothing soaks before the first).
  const waves = input.plan.waves.map((w, i) =>
    previewWave(w, schedule.waves[i]!, i > 0 ? input.plan.prePull : undefined),
  );
  return { waves, clusters };
}
