import { describe, expect, it } from 'vitest';
import { renewalDelayMs } from './credential-renewal.js';

const jwtWith = (claims: Record<string, number>): string =>
  `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;

describe('renewalDelayMs', () => {
  it('renews at 2/3 of the lifetime, at once when that has passed', () => {
    const iat = 1_000_000;
    const jwt = jwtWith({ iat, exp: iat + 3 * 3600 });
    expect(renewalDelayMs(jwt, iat * 1000)).toBe(2 * 3600_000);
    expect(renewalDelayMs(jwt, (iat + 2 * 3600) * 1000)).toBe(0);
    expect(renewalDelayMs(jwt, (iat + 4 * 3600) * 1000)).toBe(0);
  });

  it('looks again within 6 hours for a long-lived JWT', () => {
    const iat = 1_000_000;
    expect(renewalDelayMs(jwtWith({ iat, exp: iat + 30 * 86_400 }), iat * 1000)).toBe(6 * 3600_000);
  });
});
