import { describe, expect, it } from 'vitest';
import { planLinkRepublish, type LinkState } from './link-republish.js';

const MIN = 120_000;
const link = (linkId: string | null, republishedFor: string | null, republishedAtMs: number | null): LinkState => ({
  cluster: 'a',
  linkId,
  republishedFor,
  republishedAtMs,
});

describe('planLinkRepublish', () => {
  it.each([
    ['the link already republished for', link('L1', 'L1', 0), 'none'],
    ['an agent that sends no link id', link(null, 'L1', 0), 'none'],
    ['a restarted link, never republished before', link('L2', 'L1', null), 'republish'],
    ['a restarted link, last republish longer ago than the interval', link('L2', 'L1', 1_000_000 - MIN), 'republish'],
    ['a restarted link within the interval', link('L2', 'L1', 1_000_000 - MIN + 1), 'deferred'],
  ])('%s', (_name, state, verdict) => {
    const plan = planLinkRepublish([state], 1_000_000, MIN);
    expect(
      {
        none: plan.republish.length === 0 && plan.deferred.length === 0,
        republish: plan.republish.length === 1 && plan.republish[0]!.linkId === state.linkId,
        deferred: plan.deferred.length === 1,
      }[verdict],
    ).toBe(true);
  });

  it('republishes once per interval however many links a flood of heartbeats names', () => {
    let republishedFor: string | null = 'L0';
    let republishedAtMs: number | null = null;
    let republishes = 0;
    let deferred = 0;
    // One heartbeat every 10 ms for 2 intervals, each with a fresh link id.
    for (let t = 0; t < 2 * MIN; t += 10) {
      const plan = planLinkRepublish([link(`L-${t}`, republishedFor, republishedAtMs)], t, MIN);
      deferred += plan.deferred.length;
      for (const r of plan.republish) {
        republishes++;
        republishedFor = r.linkId;
        republishedAtMs = t;
      }
    }
    expect(republishes).toBe(2);
    expect(deferred).toBe(2 * (MIN / 10) - 2);
  });
});
