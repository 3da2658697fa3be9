import { describe, expect, it } from 'vitest';
import {
  ceilingRatios,
  median,
  medians,
  ratios,
  schedule,
  type CeilingMeasures,
  type ControllerMeasures,
  type ControllerSubject,
} from './summary.js';

function run(subject: ControllerSubject, round: number, scale: number, rss: number, cpu: number): ControllerMeasures {
  return {
    subject,
    round,
    scaleUp: { createdSeconds: scale / 2, readySeconds: scale },
    inPlaceUpdate: { seconds: scale * 2 },
    scaleDown: { seconds: 1 },
    rssMiB: { idle: rss, afterScaleUp: rss + 20, peak: rss + 30 },
    idleCpuCores: cpu,
  };
}

describe('median', () => {
  it('takes the middle value, or the mean of the two middle ones', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('refuses no values', () => {
    expect(() => median([])).toThrow('median of no values');
  });
});

describe('ratios', () => {
  const runs = [
    run('kruise-qps1000', 1, 20, 80, 0.005),
    run('kruise-qps1000', 2, 30, 90, 0.007),
    run('kruise-qps1000', 3, 25, 70, 0.006),
    run('flotilla', 1, 10, 140, 0.03),
    run('flotilla', 2, 12.5, 160, 0.02),
    run('flotilla', 3, 11, 120, 0.04),
    run('kruise', 1, 60, 75, 0.005),
  ];

  it('gives medians per subject, only for subjects that ran', () => {
    const m = medians(runs);
    expect(m['kruise-qps1000']).toMatchObject({
      runs: 3,
      scaleUpReadySeconds: 25,
      rssIdleMiB: 80,
      idleCpuCores: 0.006,
    });
    expect(m.flotilla).toMatchObject({
      runs: 3,
      scaleUpReadySeconds: 11,
      inPlaceUpdateSeconds: 22,
      rssAfterScaleUpMiB: 160,
    });
    expect(m.kruise?.runs).toBe(1);
  });

  it('divides kruise by ours for speed and ours by kruise for weight', () => {
    expect(ratios(medians(runs))).toEqual({
      scaleUp: 2.27,
      inPlaceUpdate: 2.27,
      rssIdle: 1.75,
      rssAfterScaleUp: 1.6,
      idleCpu: 5,
    });
  });

  it('is null where a side did not run or the divisor is zero', () => {
    const onlyOurs = ratios(medians(runs.filter((r) => r.subject === 'flotilla')));
    expect(onlyOurs.scaleUp).toBeNull();
    const idleZero = ratios(medians([run('kruise-qps1000', 1, 20, 80, 0), run('flotilla', 1, 10, 140, 0.03)]));
    expect(idleZero.idleCpu).toBeNull();
    expect(idleZero.scaleUp).toBe(2);
  });
});

/** A ceiling run: scale-up ready in `scale` s (seen in half), update in 2 × `scale`, scale-down in 1 s. */
function ceiling(round: number, scale: number): CeilingMeasures {
  return {
    subject: 'ceiling',
    round,
    scaleUp: { createdSeconds: scale / 2, readySeconds: scale },
    inPlaceUpdate: { seconds: scale * 2 },
    scaleDown: { seconds: 1 },
  };
}

describe('the ceiling', () => {
  const runs = [
    run('kruise-qps1000', 1, 20, 80, 0.005),
    run('flotilla', 1, 10, 140, 0.03),
    ceiling(1, 8),
    ceiling(2, 6),
    ceiling(3, 10),
  ];

  it("gets medians of its times only, and leaves the controllers' medians as they were", () => {
    const m = medians(runs);
    expect(m.ceiling).toEqual({
      runs: 3,
      scaleUpCreatedSeconds: 4,
      scaleUpReadySeconds: 8,
      inPlaceUpdateSeconds: 16,
      scaleDownSeconds: 1,
    });
    expect(m.flotilla).toEqual(medians(runs.filter((r) => r.subject === 'flotilla')).flotilla);
    expect(ratios(m)).toEqual(ratios(medians(runs.filter((r) => r.subject !== 'ceiling'))));
  });

  it("divides each controller's times by the ceiling's", () => {
    expect(ceilingRatios(medians(runs))).toEqual({
      'kruise-qps1000': { scaleUpCreated: 2.5, scaleUp: 2.5, inPlaceUpdate: 2.5, scaleDown: 1 },
      flotilla: { scaleUpCreated: 1.25, scaleUp: 1.25, inPlaceUpdate: 1.25, scaleDown: 1 },
    });
  });

  it('gives no ratios without a ceiling run, and null where its time is zero', () => {
    expect(ceilingRatios(medians(runs.filter((r) => r.subject !== 'ceiling')))).toEqual({});
    const instant = { ...ceiling(1, 8), scaleDown: { seconds: 0 } };
    expect(ceilingRatios(medians([run('flotilla', 1, 10, 140, 0.03), instant])).flotilla?.scaleDown).toBeNull();
  });
});

describe('schedule', () => {
  it('alternates the subjects within each round, the ceiling last', () => {
    expect(schedule(2).map((r) => `${r.round}:${r.subject}`)).toEqual([
      '1:kruise',
      '1:kruise-qps1000',
      '1:flotilla',
      '1:ceiling',
      '2:kruise',
      '2:kruise-qps1000',
      '2:flotilla',
      '2:ceiling',
    ]);
  });

  it('runs only the subjects given, in their order', () => {
    expect(schedule(1, ['ceiling', 'flotilla']).map((r) => r.subject)).toEqual(['ceiling', 'flotilla']);
  });

  it('refuses a round count that is not a positive integer', () => {
    expect(() => schedule(0)).toThrow('rounds must be a positive integer, got 0');
  });
});
