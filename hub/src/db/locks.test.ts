import { describe, expect, it } from 'vitest';
import { LOCK_KEYS } from './locks.js';

describe('advisory lock keys', () => {
  it('are distinct, so no lock can wait on another', () => {
    const keys = Object.values(LOCK_KEYS).map(String);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
