import { describe, expect, it } from 'vitest';
import { liveRevocations, revokeUserKey } from './cluster-account.js';

describe('cluster account revocations', () => {
  it('adds the revoked key and drops entries older than the credential TTL', () => {
    const now = 1_000_000;
    const before = { UOLD: now - 100_000, URECENT: now - 10 };
    expect(liveRevocations(before, now, 86_400)).toEqual({ URECENT: now - 10 });
    expect(revokeUserKey(before, 'UNEW', now, 86_400)).toEqual({ URECENT: now - 10, UNEW: now });
  });
});
