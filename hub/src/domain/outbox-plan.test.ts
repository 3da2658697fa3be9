import { describe, expect, it } from 'vitest';
import { planOutboxBatch } from './outbox-plan.js';

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
