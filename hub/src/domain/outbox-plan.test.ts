import { describe, expect, it } from 'vitest';
import { createHandoffCache, planOutboxBatch } from './outbox-plan.js';

describe('planOutboxBatch', () => {
  it('publishes the newest row per subject in id order and marks every row', () => {
    const rows = [
      { id: 7, subject: 'a', v: 'a3' },
      { id: 2, subject: 'a', v: 'a1' },
      { id: 3, subject: 'b', v: 'b1' },
      { id: 5, subject: 'a', v: 'a2' },
      { id: 6, subject: 'c', v: 'c1' },
    ];
    const plan = planOutboxBatch(rows);
    expect(plan.publish.map((r) => r.v)).toEqual(['b1', 'c1', 'a3']);
    expect(plan.markSent).toEqual([2, 3, 5, 6, 7]);
  });

  it('handles an empty batch', () => {
    expect(planOutboxBatch([])).toEqual({ publish: [], markSent: [] });
  });
});

describe('createHandoffCache', () => {
  const row = (id: number): { id: number; subject: string } => ({ id, subject: `s${id}` });

  it('serves held rows and names the ids to load', () => {
    const cache = createHandoffCache(10);
    cache.add([row(3), row(4)], 100);
    const { held, missing } = cache.take([1, 2, 3, 4]);
    expect([...held.keys()]).toEqual([3, 4]);
    expect(missing).toEqual([1, 2]);
  });

  it('forgets published rows and older held rows another replica sent, and reports handoff times', () => {
    const cache = createHandoffCache(10);
    cache.add([row(2)], 50);
    cache.add([row(5), row(6)], 100);
    cache.add([row(9)], 200);
    // Row 2 never came up as unsent again: published elsewhere; 9 is newer than the batch.
    expect(cache.settle([4, 5, 6])).toEqual([100]);
    expect(cache.size).toBe(1);
    expect(cache.take([9]).missing).toEqual([]);
  });

  it('refuses rows beyond its bound (they are read from the table instead)', () => {
    const cache = createHandoffCache(2);
    expect(cache.add([row(1), row(2)], 0)).toBe(true);
    expect(cache.add([row(3)], 0)).toBe(false);
    expect(cache.take([3]).missing).toEqual([3]);
    cache.clear();
    expect(cache.size).toBe(0);
  });
});
