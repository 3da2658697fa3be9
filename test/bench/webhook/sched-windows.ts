// The apiserver's CPU, GC mark phases and goroutine run-queue waits per short window, from a Go
// execution trace (`--apiserver-trace=<file>`), to see whether the webhook calls over 10 ms sit in
// moments when the one-core apiserver is saturated (and by what) or are spread over the phase.
// Reads the text of `go tool trace -d=parsed <file>` (one event a line; the indented stack lines
// are skipped):
//   go tool trace -d=parsed /tmp/apiserver.trace | npx tsx test/bench/webhook/sched-windows.ts [--window-ms=100] [--all]
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { round } from './metrics.js';

/** One window of the trace, shares of the window's length (1 = one P busy all the window). */
export interface SchedWindow {
  /** Window start, seconds since the trace's first event. */
  atS: number;
  /** Goroutines running on a P. */
  runningShare: number;
  /** The GC's concurrent mark phase. */
  gcMarkShare: number;
  /** Goroutines that went from runnable to running in the window. */
  wakeups: number;
  meanWaitMs: number;
  /** The longest a goroutine waited runnable before it ran (attributed to the window it ran in). */
  maxWaitMs: number;
}

const TIME = /\bTime=(\d+)/;
const TRANSITION = /\bTime=(\d+) GoID=(\d+) (\w+)->(\w+)/;

interface Accumulator {
  runningNs: number;
  gcNs: number;
  wakeups: number;
  waitNs: number;
  maxWaitNs: number;
}

/**
 * Folds trace events into fixed windows. Busy time is split across the windows it spans, so a
 * goroutine holding the P for 30 ms counts in each window it covered, not only where it started.
 */
export class SchedWindows {
  private readonly windowNs: number;
  private originNs: number | undefined;
  private readonly acc = new Map<number, Accumulator>();
  private readonly goroutines = new Map<string, { state: string; sinceNs: number }>();
  private gcMarkSinceNs: number | undefined;

  constructor(windowMs = 100) {
    this.windowNs = windowMs * 1e6;
  }

  line(text: string): void {
    if (text.startsWith(' ') || text.startsWith('\t')) return;
    const time = TIME.exec(text);
    if (!time) return;
    const now = Number(time[1]);
    this.originNs ??= now;
    if (text.includes('StateTransition') && text.includes('GoID=')) {
      const m = TRANSITION.exec(text);
      if (m) this.transition(m[2]!, m[3]!, m[4]!, Number(m[1]));
    } else if (text.includes('GC concurrent mark phase')) {
      if (text.includes('RangeBegin') || text.includes('RangeActive')) this.gcMarkSinceNs ??= now;
      else if (text.includes('RangeEnd') && this.gcMarkSinceNs !== undefined) {
        this.spread(this.gcMarkSinceNs, now, 'gcNs');
        this.gcMarkSinceNs = undefined;
      }
    }
  }

  windows(): SchedWindow[] {
    return [...this.acc.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, a]) => ({
        atS: round((index * this.windowNs) / 1e9, 3),
        runningShare: round(a.runningNs / this.windowNs, 3),
        gcMarkShare: round(a.gcNs / this.windowNs, 3),
        wakeups: a.wakeups,
        meanWaitMs: round(a.wakeups === 0 ? 0 : a.waitNs / a.wakeups / 1e6, 3),
        maxWaitMs: round(a.maxWaitNs / 1e6, 3),
      }));
  }

  private transition(goroutine: string, from: string, to: string, now: number): void {
    const before = this.goroutines.get(goroutine);
    // The state the trace says it leaves must be the one we saw it enter; otherwise (the trace
    // started mid-flight) the interval is unknown and is not counted.
    if (before && before.state === from) {
      if (from === 'Running') this.spread(before.sinceNs, now, 'runningNs');
      if (from === 'Runnable' && to === 'Running') {
        const a = this.window(now);
        const waited = now - before.sinceNs;
        a.wakeups += 1;
        a.waitNs += waited;
        a.maxWaitNs = Math.max(a.maxWaitNs, waited);
      }
    }
    this.goroutines.set(goroutine, { state: to, sinceNs: now });
  }

  private spread(fromNs: number, toNs: number, field: 'runningNs' | 'gcNs'): void {
    let at = fromNs;
    while (at < toNs) {
      const index = this.index(at);
      const end = Math.min(toNs, this.originNs! + (index + 1) * this.windowNs);
      this.window(at)[field] += end - at;
      at = end;
    }
  }

  private index(ns: number): number {
    return Math.floor((ns - this.originNs!) / this.windowNs);
  }

  private window(ns: number): Accumulator {
    const index = this.index(ns);
    let a = this.acc.get(index);
    if (!a) {
      a = { runningNs: 0, gcNs: 0, wakeups: 0, waitNs: 0, maxWaitNs: 0 };
      this.acc.set(index, a);
    }
    return a;
  }
}

/** Busy share, GC share and waits: inside and outside the mark phases, over the whole trace. */
export function gcContrast(
  windows: SchedWindow[],
): Record<
  'inGcMark' | 'outsideGcMark',
  { windows: number; runningShare: number; maxWaitMsP50: number; maxWaitMsMax: number }
> {
  const part = (ws: SchedWindow[]) => {
    const waits = ws.map((w) => w.maxWaitMs).sort((a, b) => a - b);
    return {
      windows: ws.length,
      runningShare: round(ws.reduce((s, w) => s + w.runningShare, 0) / Math.max(1, ws.length), 3),
      maxWaitMsP50: waits[Math.floor(waits.length / 2)] ?? 0,
      maxWaitMsMax: waits.at(-1) ?? 0,
    };
  };
  return {
    inGcMark: part(windows.filter((w) => w.gcMarkShare >= 0.5)),
    outsideGcMark: part(windows.filter((w) => w.gcMarkShare === 0)),
  };
}

async function main(): Promise<void> {
  const windowMs = Number(process.argv.find((a) => a.startsWith('--window-ms='))?.slice(12) ?? 100);
  const all = process.argv.includes('--all');
  const folder = new SchedWindows(windowMs);
  for await (const text of createInterface({ input: process.stdin, crlfDelay: Infinity })) folder.line(text);
  const windows = folder.windows();
  console.log('at (s)  running  GC mark  wake-ups  mean wait (ms)  max wait (ms)');
  for (const w of windows) {
    // Without --all, only the windows worth reading: a mark phase or a goroutine kept waiting.
    if (!all && w.gcMarkShare === 0 && w.maxWaitMs < 8) continue;
    console.log(
      `${w.atS.toFixed(1).padStart(6)}  ${w.runningShare.toFixed(2).padStart(7)}  ${w.gcMarkShare.toFixed(2).padStart(7)}  ${String(w.wakeups).padStart(8)}  ${w.meanWaitMs.toFixed(2).padStart(14)}  ${w.maxWaitMs.toFixed(1).padStart(13)}`,
    );
  }
  console.log(JSON.stringify(gcContrast(windows)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) void main();
