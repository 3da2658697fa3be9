/**
 * Seeds the configured admin and bootstrap tokens (hashed) so a fresh hub can be used at all.
 * Seeding never brings a revoked token back; see seedToken.
 */
import { sha256 } from './auth/tokens.js';
import type { Db } from './db/client.js';
import { seedToken } from './repositories/tokens-repo.js';

export async function seedTokens(
  db: Db,
  tokens: { admin: string | undefined; bootstrap: string | undefined },
): Promise<void> {
  if (tokens.admin) await seedToken(db, { name: 'config-admin', role: 'admin', tokenHash: sha256(tokens.admin) });
  if (tokens.bootstrap) {
    await seedToken(db, { name: 'config-bootstrap', role: 'bootstrap', tokenHash: sha256(tokens.bootstrap) });
  }
}
