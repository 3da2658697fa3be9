/**
 * Who acts, and how API tokens are made and checked. Secrets are random 256-bit values; only
 * sha256 is stored.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { TokenRole } from '@flotilla/api';

/** The holder of a valid API token: named in audit entries, limited by its role. */
export interface Principal {
  tokenId: string;
  name: string;
  role: TokenRole;
}

export function newSecret(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

export function sha256(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function secretMatches(secret: string, hash: string): boolean {
  const a = Buffer.from(sha256(secret), 'hex');
  const b = Buffer.from(hash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

const RANK: Record<TokenRole, number> = { bootstrap: 0, viewer: 1, operator: 2, admin: 3 };

/**
 * Whether a token's role covers the role a route needs. `bootstrap` is not on the ladder: it
 * satisfies only routes that ask for `bootstrap` explicitly (admins may do those too).
 */
export function roleSatisfies(have: TokenRole, need: TokenRole): boolean {
  if (need === 'bootstrap') return have === 'bootstrap' || have === 'admin';
  if (have === 'bootstrap') return false;
  return RANK[have] >= RANK[need];
}
