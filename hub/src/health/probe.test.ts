import { describe, expect, it } from 'vitest';
import { createProbe } from './probe.js';

describe('createProbe', () => {
  it('answers true when the attempt succeeds, false when it fails', async () => {
    expect(await createProbe(() => Promise.resolve(1), 1000)()).toBe(true);
    expect(await createProbe(() => Promise.reject(new Error('down')), 1000)()).toBe(false);
  });

  it('gives up at the deadline on an attempt that never ends, and starts no second one meanwhile', async () => {
    let attempts = 0;
    let finish: () => void = () => undefined;
    const probe = createProbe(() => {
      attempts++;
      return new Promise<void>((resolve) => {
        finish = resolve;
      });
    }, 20);
    expect(await probe()).toBe(false);
    expect(await probe()).toBe(false);
    expect(attempts).toBe(1);
    finish();
    expect(await probe()).toBe(true);
    expect(attempts).toBe(1);
    // The finished attempt is not reused: the next check is a new one.
    await new Promise((r) => setTimeout(r, 0));
    await probe();
    expect(attempts).toBe(2);
  });
});
