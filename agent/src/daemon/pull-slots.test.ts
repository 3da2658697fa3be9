import { describe, expect, it } from 'vitest';
import { PullSlots } from './pull-slots.js';

describe('PullSlots', () => {
  it('without a limit, every pull gets a slot at once', () => {
    const slots = new PullSlots(undefined);
    for (let i = 0; i < 100; i++) expect(slots.tryAcquire()).toBeDefined();
  });

  it('with a limit of 2, a third pull waits and gets the first slot given back, in order', async () => {
    const slots = new PullSlots(2);
    const a = slots.tryAcquire()!;
    slots.tryAcquire();
    expect(slots.tryAcquire()).toBeUndefined();
    const order: string[] = [];
    const c = slots.acquire(new AbortController().signal).then((r) => (order.push('c'), r));
    const d = slots.acquire(new AbortController().signal).then((r) => (order.push('d'), r));
    expect(slots.waiting()).toBe(2);
    a();
    a(); // twice gives back once
    const releaseC = await c;
    expect(order).toEqual(['c']);
    expect(slots.waiting()).toBe(1);
    releaseC!();
    expect(await d).toBeDefined();
    expect(order).toEqual(['c', 'd']);
  });

  it('a pull aborted while waiting leaves the line without a slot', async () => {
    const slots = new PullSlots(1);
    const first = slots.tryAcquire()!;
    const abort = new AbortController();
    const waiting = slots.acquire(abort.signal);
    abort.abort();
    expect(await waiting).toBeUndefined();
    expect(slots.waiting()).toBe(0);
    first();
    expect(slots.tryAcquire()).toBeDefined();
  });
});
