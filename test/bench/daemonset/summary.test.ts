import { describe, expect, it } from 'vitest';
import type { Subject } from '../kruise/summary.js';
import { daemonSetMedians, daemonSetRatios, type DaemonSetMeasures } from './summary.js';

function run(subject: Subject, round: number, seconds: number, rss: number, cpuMs: number): DaemonSetMeasures {
  return {
    subject,
    round,
    create: { createdSeconds: seconds / 2, readySeconds: seconds },
    inPlaceUpdate: { seconds: seconds / 4, recreated: 0 },
    rssMiB: { ready: rss - 10, afterCreate: rss, peak: rss + 5 },
    cpuMs: { create: { controller: cpuMs, 'kube-apiserver': 999 }, inPlaceUpdate: { controller: cpuMs / 2 } },
  };
}

describe('daemonSetMedians', () => {
  const runs = [
    run('kruise-qps1000', 1, 20, 80, 1000),
    run('kruise-qps1000', 2, 24, 90, 1400),
    run('kruise-qps1000', 3, 22, 70, 1200),
    run('flotilla', 1, 8, 100, 600),
    run('flotilla', 2, 12, 110, 500),
    run('kruise', 1, 60, 75, 900),
  ];

  it('takes the median of every measure per subject, the controller alone for CPU', () => {
    expect(daemonSetMedians(runs)['kruise-qps1000']).toEqual({
      runs: 3,
      createdSeconds: 11,
      createReadySeconds: 22,
      inPlaceUpdateSeconds: 5.5,
      recreated: 0,
      rssReadyMiB: 70,
      rssAfterCreateMiB: 80,
      rssPeakMiB: 85,
      cpuCreateMs: 1200,
      cpuInPlaceUpdateMs: 600,
    });
    expect(daemonSetMedians(runs).flotilla).toMatchObject({ runs: 2, createReadySeconds: 10, cpuCreateMs: 550 });
  });

  it('leaves out subjects that did not run', () => {
    expect(Object.keys(daemonSetMedians(runs.filter((r) => r.subject === 'flotilla')))).toEqual(['flotilla']);
  });

  it('divides kruise by ours for speed and ours by kruise for memory and CPU', () => {
    expect(daemonSetRatios(daemonSetMedians(runs))).toEqual({
      create: 2.2,
      inPlaceUpdate: 2.2,
      rssAfterCreate: 1.31,
      cpuCreate: 0.46,
      cpuInPlaceUpdate: 0.46,
    });
  });

  it('compares against shipped kruise when asked, and is null where a side is missing', () => {
    const m = daemonSetMedians(runs);
    expect(daemonSetRatios(m, 'kruise').create).toBe(6);
    expect(daemonSetRatios(daemonSetMedians(runs.filter((r) => r.subject !== 'flotilla'))).create).toBeNull();
  });
});
