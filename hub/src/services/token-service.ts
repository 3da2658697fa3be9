/**
 * API tokens: authenticating a presented secret, and their management by admins (the routes
 * require the role). A token's secret is returned once, at creation; only its sha256 is stored.
 * Creation and revocation are audited in the same transaction.
 */
import type { ApiToken, CreateTokenRequest, CreatedApiToken } from '@flotilla/api';
import { newSecret, sha256, type Principal } from '../auth/tokens.js';
import type { Db } from '../db/client.js';
import { notFound } from '../errors.js';
import { recordAudit } from '../repositories/audit-repo.js';
import { findActiveToken, insertToken, listTokens, revokeToken } from '../repositories/tokens-repo.js';
import { isWorkloadId as isUuid } from '../repositories/workloads-repo.js';

export interface TokenService {
  /** The holder of an active token with this secret, if any. */
  authenticate(secret: string): Promise<Principal | undefined>;
  list(): Promise<{ items: ApiToken[] }>;
  create(actor: Principal, body: CreateTokenRequest): Promise<CreatedApiToken>;
  revoke(actor: Principal, id: string): Promise<ApiToken>;
}

export function createTokenService(deps: { db: Db }): TokenService {
  const { db } = deps;
  return {
    authenticate: (secret) => findActiveToken(db, sha256(secret)),

    async list() {
      return { items: await listTokens(db) };
    },

    async create(actor, body) {
      const token = newSecret('flt');
      const created = await db.transaction(async (tx) => {
        const t = await insertToken(tx, { ...body, tokenHash: sha256(token), createdBy: actor.name });
        await recordAudit(tx, {
          actor: actor.name,
          action: 'token.create',
          targetType: 'token',
          targetId: t.id,
          details: { name: t.name, role: t.role },
        });
        return t;
      });
      return { ...created, token };
    },

    async revoke(actor, id) {
      if (!isUuid(id)) throw notFound(`token ${id}`);
      return db.transaction(async (tx) => {
        const t = await revokeToken(tx, id);
        if (!t) throw notFound(`token ${id}`);
        await recordAudit(tx, { actor: actor.name, action: 'token.revoke', targetType: 'token', targetId: id });
        return t;
      });
    },
  };
}
