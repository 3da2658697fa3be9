/** API tokens: lookup by hash for authentication, creation, listing and revocation. */
import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import type { ApiToken, TokenRole } from '@flotilla/api';
import type { Principal } from '../auth/tokens.js';
import type { Db, DbOrTx } from '../db/client.js';
import { lockSeeding } from '../db/locks.js';
import { apiTokens } from '../db/schema/index.js';
import { conflict, isUniqueViolation } from '../errors.js';

type Row = typeof apiTokens.$inferSelect;

function toApi(row: Row): ApiToken {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    createdAt: row.createdAt.toISOString(),
    revokedAt: row.revokedAt?.toISOString() ?? null,
  };
}

export async function findActiveToken(db: DbOrTx, tokenHash: string): Promise<Principal | undefined> {
  const [row] = await db
    .select({ id: apiTokens.id, name: apiTokens.name, role: apiTokens.role })
    .from(apiTokens)
    .where(and(eq(apiTokens.tokenHash, tokenHash), isNull(apiTokens.revokedAt)))
    .limit(1);
  return row ? { tokenId: row.id, name: row.name, role: row.role } : undefined;
}

export async function insertToken(
  db: DbOrTx,
  t: { name: string; role: TokenRole; tokenHash: string; createdBy: string },
): Promise<ApiToken> {
  try {
    const [row] = await db.insert(apiTokens).values(t).returning();
    return toApi(row!);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`a token named ${JSON.stringify(t.name)} already exists`);
    throw err;
  }
}

/** What seeding one configured token did. */
export type SeedOutcome = 'present' | 'created' | 'replaced';

/**
 * Seeds a configured token. A token whose hash is already stored is left exactly as it is, so a
 * revoked seed stays revoked across restarts. A new value under the same name is a new token:
 * the row holding the name is renamed `<name>@<id prefix>` and revoked (the configuration no
 * longer holds its value), then the new token takes the name.
 */
export async function seedToken(db: Db, t: { name: string; role: TokenRole; tokenHash: string }): Promise<SeedOutcome> {
  return db.transaction(async (tx) => {
    await lockSeeding(tx);
    const [present] = await tx
      .select({ id: apiTokens.id })
      .from(apiTokens)
      .where(eq(apiTokens.tokenHash, t.tokenHash))
      .limit(1);
    if (present) return 'present';
    const [previous] = await tx
      .update(apiTokens)
      .set({
        name: sql`${apiTokens.name} || '@' || left(${apiTokens.id}::text, 8)`,
        revokedAt: sql`coalesce(${apiTokens.revokedAt}, now())`,
      })
      .where(eq(apiTokens.name, t.name))
      .returning({ id: apiTokens.id });
    await tx.insert(apiTokens).values({ ...t, createdBy: 'config' });
    return previous ? 'replaced' : 'created';
  });
}

export async function listTokens(db: DbOrTx): Promise<ApiToken[]> {
  const rows = await db.select().from(apiTokens).orderBy(asc(apiTokens.createdAt), asc(apiTokens.id));
  return rows.map(toApi);
}

export async function revokeToken(db: DbOrTx, id: string): Promise<ApiToken | undefined> {
  const [row] = await db
    .update(apiTokens)
    .set({ revokedAt: sql`coalesce(${apiTokens.revokedAt}, now())` })
    .where(eq(apiTokens.id, id))
    .returning();
  return row ? toApi(row) : undefined;
}
