/** API tokens: lookup by hash for authentication, creation, listing and revocation. */
import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import type { ApiToken, TokenRole } from '@flotilla/api';
import type { DbOrTx } from '../db/client.js';
import { isUniqueViolation } from '../db/errors.js';
import { apiTokens } from '../db/schema/index.js';
import { conflict } from '../errors.js';

export interface Principal {
  tokenId: string;
  name: string;
  role: TokenRole;
}

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

/** Makes a configured token valid (creating or re-keying it by name); used for seed tokens. */
export async function upsertSeedToken(
  db: DbOrTx,
  t: { name: string; role: TokenRole; tokenHash: string },
): Promise<void> {
  await db
    .insert(apiTokens)
    .values({ ...t, createdBy: 'config' })
    .onConflictDoUpdate({
      target: apiTokens.name,
      set: { tokenHash: t.tokenHash, role: t.role, revokedAt: sql`null` },
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
