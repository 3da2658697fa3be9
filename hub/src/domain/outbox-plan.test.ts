import { describe, expect, it } from 'vitest';
import {
  createHandoffCache,
  planOutboxBatch,
  refusalRetryMs,
  settleOutboxBatch,
  type PublishOutcome,
} from './outbox-plan.js';

describe('planOutboxBatch', () => {
  it('publishes the newest row per subject in id order', () => {
    const rows = [
      { id: 7, subject: 'a', v: 'a3' },
      { id: 2, subject: 'a', v: 'a1' },
      { id: 3, subject: 'b', v: 'b1' },
      { id: 5, subject: 'a', v: 'a2' },
      { id: 6, subject: 'c', v: 'c1' },
    ];
    expect(planOutboxBatch(rows).publish.map((r) => r.v)).toEqual(['b1', 'c1', 'a3']);
  });

  it('handles an empty batch', () => {
    expect(planOutboxBatch([])).toEqual({ publish: [] });
  });
});

describe('refusalRetryMs', () => {
  const backoff = { baseMs: 1000, maxMs: 30_000 };

  it.each([
    [0, 1000],
    [1, 2000],
    [4, 16_000],
    [5, 30_000],
    [1000, 30_000],
    [-1, 1000],
  ])('after %i earlier refusals waits %i ms', (refusals, ms) => {
    expect(refusalRetryMs(refusals, backoff)).toBe(ms);
  });
});

describe('settleOutboxBatch', () => {
  const backoff = { baseMs: 1000, maxMs: 30_000 };
  const row = (id: number, subject: string, attempts = 0) => ({ id, subject, attempts });
  const acked: PublishOutcome = { result: 'acked' };
  const tooLarge: PublishOutcome = {
    result: 'refused',
    reason: 'message_size',
    detail: 'message size exceeds maximum allowed',
  };

  it('step 1/3: a refused message holds back only its own row; the rest are sent', () => {
    const published = [row(1, 'x.a'), row(2, 'x.big'), row(3, 'y.a')];
    const s = settleOutboxBatch(published, [acked, tooLarge, acked], backoff);
    expect(s.acked).toEqual([
      { id: 1, subject: 'x.a' },
      { id: 3, subject: 'y.a' },
    ]);
    expect(s.refused).toEqual([
      {
        id: 2,
        subject: 'x.big',
        reason: 'message_size',
        detail: 'message size exceeds maximum allowed',
        retryMs: 1000,
      },
    ]);
    expect(s.unacked).toEqual([]);
  });

  it('step 2/3: the same row refused again waits longer', () => {
    const s = settleOutboxBatch([row(2, 'x.big', 3)], [tooLarge], backoff);
    expect(s.refused[0]!.retryMs).toBe(8000);
  });

  it('step 3/3: a message without an answer is neither sent nor held back', () => {
    const s = settleOutboxBatch([row(2, 'x.big', 3), row(4, 'z')], [acked, { result: 'unacked' }], backoff);
    expect(s).toEqual({ acked: [{ id: 2, subject: 'x.big' }], refused: [], unacked: [4] });
  });

  it('refuses to pair outcomes with the wrong rows', () => {
    expect(() => settleOutboxBatch([row(1, 'a')], [], backoff)).toThrow(/0 outcomes for 1/);
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
