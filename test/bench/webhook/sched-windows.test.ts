import { describe, expect, it } from 'vitest';
import { gcContrast, SchedWindows } from './sched-windows.js';

const MS = 1_000_000;
const at = (ms: number): number => 5_000_000_000 + ms * MS;
const move = (ms: number, g: number, from: string, to: string): string =>
  `M=1 P=0 G=${g} StateTransition Time=${at(ms)} GoID=${g} ${from}->${to} Reason=""`;
const gc = (ms: number, edge: 'RangeBegin' | 'RangeEnd'): string =>
  `M=1 P=0 G=9 ${edge} Time=${at(ms)} Name="GC concurrent mark phase" Scope=global`;

function fold(lines: string[], windowMs = 100): SchedWindows {
  const folder = new SchedWindows(windowMs);
  folder.line(`M=-1 P=-1 G=-1 Sync Time=${at(0)} N=1`);
  for (const l of lines) folder.line(l);
  return folder;
}

describe('SchedWindows', () => {
  it('splits a running stretch over the windows it covers', () => {
    const [first, second] = fold([move(50, 7, 'Runnable', 'Running'), move(130, 7, 'Running', 'Waiting')]).windows();
    expect(first).toMatchObject({ atS: 0, runningShare: 0.5 });
    expect(second).toMatchObject({ atS: 0.1, runningShare: 0.3 });
  });

  it('charges a run-queue wait to the window where the goroutine finally ran', () => {
    const windows = fold([
      move(90, 7, 'Waiting', 'Runnable'),
      move(125, 7, 'Runnable', 'Running'),
      move(126, 7, 'Running', 'Waiting'),
      move(140, 8, 'Waiting', 'Runnable'),
      move(141, 8, 'Runnable', 'Running'),
    ]).windows();
    expect(windows.find((w) => w.atS === 0.1)).toMatchObject({ wakeups: 2, maxWaitMs: 35, meanWaitMs: 18 });
  });

  it('counts no interval whose start it did not see', () => {
    // The trace began with goroutine 7 already running: its first transition has no start.
    const windows = fold([move(40, 7, 'Running', 'Waiting'), move(60, 7, 'Runnable', 'Running')]).windows();
    expect(windows.every((w) => w.runningShare === 0 && w.wakeups === 0)).toBe(true);
  });

  it('places GC mark phases, and skips stack lines', () => {
    const windows = fold([gc(150, 'RangeBegin'), '\truntime.gcStart @ 0x1', gc(320, 'RangeEnd')]).windows();
    expect(windows.map((w) => [w.atS, w.gcMarkShare])).toEqual([
      [0.1, 0.5],
      [0.2, 1],
      [0.3, 0.2],
    ]);
  });

  it('contrasts waits inside and outside mark phases', () => {
    const windows = fold([
      gc(100, 'RangeBegin'),
      move(110, 7, 'Waiting', 'Runnable'),
      move(140, 7, 'Runnable', 'Running'),
      gc(200, 'RangeEnd'),
      move(300, 8, 'Waiting', 'Runnable'),
      move(302, 8, 'Runnable', 'Running'),
    ]).windows();
    const contrast = gcContrast(windows);
    expect(contrast.inGcMark).toMatchObject({ windows: 1, maxWaitMsMax: 30 });
    expect(contrast.outsideGcMark.maxWaitMsMax).toBe(2);
  });
});
