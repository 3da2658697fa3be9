import { describe, expect, it } from 'vitest';
import { FakeClock } from './testing/fake-clock.js';
import { WorkQueue, type QueueMetrics } from './workqueue.js';
import { ItemExponentialRateLimiter, MaxOfRateLimiter, TokenBucketRateLimiter } from './rate-limiter.js';

class RecordingMetrics implements QueueMetrics {
  depth = 0;
  adds = 0;
  retries = 0;
  durations: number[] = [];
  setDepth(depth: number): void {
    this.depth = depth;
  }
  incAdds(): void {
    this.adds++;
  }
  incRetries(): void {
    this.retries++;
  }
  observeWorkDuration(seconds: number): void {
    this.durations.push(seconds);
  }
}

function newQueue(clock = new FakeClock()): { q: WorkQueue; clock: FakeClock; metrics: RecordingMetrics } {
  const metrics = new RecordingMetrics();
  const rateLimiter = new ItemExponentialRateLimiter(5, 1_000_000);
  return { q: new WorkQueue({ clock, metrics, rateLimiter }), clock, metrics };
}

describe('WorkQueue', () => {
  it('hands out keys in FIFO order and de-duplicates keys that are queued', async () => {
    const { q, metrics } = newQueue();
    q.add('ns/a');
    q.add('ns/b');
    q.add('ns/a');
    expect(q.len()).toBe(2);
    expect(metrics.depth).toBe(2);
    expect(metrics.adds).toBe(2);
    expect(await q.get()).toBe('ns/a');
    expect(await q.get()).toBe('ns/b');
    expect(q.len()).toBe(0);
  });

  it('never hands out a key while it is processing; a re-add is queued once after done', async () => {
    const { q } = newQueue();
    q.add('ns/a');
    const key = await q.get();
    q.add('ns/a');
    q.add('ns/a');
    expect(q.len()).toBe(0);
    let second: string | undefined;
    void q.get().then((k) => (second = k));
    await Promise.resolve();
    expect(second).toBeUndefined();
    q.done(key!);
    await Promise.resolve();
    expect(second).toBe('ns/a');
    expect(q.len()).toBe(0);
  });

  it('does not re-queue a processed key that was not added again', async () => {
    const { q } = newQueue();
    q.add('ns/a');
    q.done((await q.get())!);
    expect(q.len()).toBe(0);
    expect(q.processing()).toBe(0);
  });

  it('resolves a waiting get() when a key arrives, one key per getter', async () => {
    const { q } = newQueue();
    const first = q.get();
    const second = q.get();
    q.add('ns/a');
    q.add('ns/b');
    expect(await first).toBe('ns/a');
    expect(await second).toBe('ns/b');
  });

  it('addAfter makes keys ready in due order and keeps the earliest time for a waiting key', async () => {
    const { q, clock } = newQueue();
    q.addAfter('ns/slow', 30);
    q.addAfter('ns/fast', 10);
    q.addAfter('ns/mid', 20);
    q.addAfter('ns/slow', 50); // later than the one already waiting: ignored
    q.addAfter('ns/mid', 5); // earlier: moves forward
    clock.advance(9);
    expect(q.len()).toBe(1);
    clock.advance(100);
    expect([await q.get(), await q.get(), await q.get()]).toEqual(['ns/mid', 'ns/fast', 'ns/slow']);
    expect(clock.pending()).toBe(0);
  });

  it('addAfter with a non-positive delay adds at once', () => {
    const { q } = newQueue();
    q.addAfter('ns/a', 0);
    expect(q.len()).toBe(1);
  });

  it('backs off rate-limited retries exponentially per key until forget', async () => {
    const { q, clock, metrics } = newQueue();
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = clock.now();
      q.addRateLimited('ns/a');
      for (let waited = 0; q.len() === 0 && waited < 10_000; waited++) clock.advance(1);
      delays.push(clock.now() - t0);
      q.done((await q.get())!);
    }
    expect(delays).toEqual([5, 10, 20, 40, 80]);
    expect(q.numRequeues('ns/a')).toBe(5);
    expect(metrics.retries).toBe(5);
    q.forget('ns/a');
    expect(q.numRequeues('ns/a')).toBe(0);
    expect(q.numRequeues('ns/other')).toBe(0);
  });

  it('hands out nothing after shutDown and resolves waiting getters with undefined', async () => {
    const { q, clock } = newQueue();
    const waiting = q.get();
    q.shutDown();
    expect(await waiting).toBeUndefined();
    q.add('ns/a');
    q.addAfter('ns/b', 10);
    q.addRateLimited('ns/c');
    clock.advance(1000);
    expect(q.len()).toBe(0);
    expect(await q.get()).toBeUndefined();
    expect(q.isShuttingDown()).toBe(true);
  });

  it('drops delayed keys on shutDown', () => {
    const { q, clock } = newQueue();
    q.addAfter('ns/a', 10);
    q.shutDown();
    expect(clock.pending()).toBe(0);
  });

  it('shutDownWithDrain waits for keys in flight and does not re-queue dirty ones', async () => {
    const { q, clock, metrics } = newQueue();
    q.add('ns/a');
    q.add('ns/b');
    const a = (await q.get())!;
    q.add('ns/a');
    let drained = false;
    const drain = q.shutDownWithDrain().then(() => (drained = true));
    await Promise.resolve();
    expect(drained).toBe(false);
    expect(await q.get()).toBeUndefined();
    clock.advance(250);
    q.done(a);
    await drain;
    expect(drained).toBe(true);
    expect(q.len()).toBe(0);
    expect(metrics.durations).toEqual([0.25]);
  });

  it('shutDownWithDrain resolves at once when nothing is in flight', async () => {
    const { q } = newQueue();
    await expect(q.shutDownWithDrain()).resolves.toBeUndefined();
  });

  it('ignores done() for a key that was never handed out', () => {
    const { q } = newQueue();
    q.done('ns/unknown');
    expect(q.processing()).toBe(0);
  });
});

describe('rate limiters', () => {
  it('item exponential grows from the base and stops at the cap', () => {
    const rl = new ItemExponentialRateLimiter(5, 1_000_000);
    const delays = Array.from({ length: 30 }, () => rl.when('k'));
    expect(delays.slice(0, 4)).toEqual([5, 10, 20, 40]);
    expect(delays[17]).toBe(5 * 2 ** 17);
    expect(delays[18]).toBe(1_000_000);
    expect(delays.at(-1)).toBe(1_000_000);
    for (let i = 0; i < 2000; i++) rl.when('k');
    expect(rl.when('k')).toBe(1_000_000);
    expect(rl.when('other')).toBe(5);
  });

  it('token bucket allows a burst, then spaces retries at qps, and refills over time', () => {
    const clock = new FakeClock();
    const rl = new TokenBucketRateLimiter(10, 3, clock);
    expect([rl.when('a'), rl.when('b'), rl.when('c')]).toEqual([0, 0, 0]);
    expect(rl.when('d')).toBeCloseTo(100);
    expect(rl.when('e')).toBeCloseTo(200);
    clock.advance(1000);
    // 10 tokens refilled, capped at the burst of 3, minus the 2 reserved ahead
    expect(rl.when('f')).toBe(0);
  });

  it('max-of takes the longest delay and forgets in every limiter', () => {
    const clock = new FakeClock();
    const rl = new MaxOfRateLimiter(new ItemExponentialRateLimiter(5, 1000), new TokenBucketRateLimiter(1, 1, clock));
    expect(rl.when('a')).toBe(5);
    expect(rl.when('a')).toBeCloseTo(1000);
    expect(rl.numRequeues('a')).toBe(2);
    rl.forget('a');
    expect(rl.numRequeues('a')).toBe(0);
  });
});
