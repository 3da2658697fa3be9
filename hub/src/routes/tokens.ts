/** /api/v1/tokens — admin-only management of API tokens (the secret is returned once). */
import { ApiToken, ApiTokenList, CreateTokenRequest, CreatedApiToken } from '@flotilla/api';
import { Type } from 'typebox';
import { newSecret, sha256 } from '../auth/tokens.js';
import { notFound } from '../errors.js';
import { principalOf } from '../plugins/auth.js';
import { recordAudit } from '../repositories/audit-repo.js';
import { insertToken, listTokens, revokeToken } from '../repositories/tokens-repo.js';
import { isWorkloadId as isUuid } from '../repositories/workloads-repo.js';
import type { Api, RouteContext } from './context.js';
import { changeErrorResponses } from './responses.js';

const errors = changeErrorResponses;

export function tokenRoutes(api: Api, ctx: RouteContext): void {
  api.get(
    '/tokens',
    { onRequest: ctx.auth('admin'), schema: { tags: ['tokens'], response: { 200: ApiTokenList, ...errors } } },
    async () => ({ items: await listTokens(ctx.db) }),
  );

  api.post(
    '/tokens',
    {
      onRequest: ctx.auth('admin'),
      schema: { tags: ['tokens'], body: CreateTokenRequest, response: { 201: CreatedApiToken, ...errors } },
    },
    async (request, reply) => {
      const actor = principalOf(request);
      const token = newSecret('flt');
      const created = await ctx.db.transaction(async (tx) => {
        const t = await insertToken(tx, { ...request.body, tokenHash: sha256(token), createdBy: actor.name });
        await recordAudit(tx, {
          actor: actor.name,
          action: 'token.create',
          targetType: 'token',
          targetId: t.id,
          details: { name: t.name, role: t.role },
        });
        return t;
      });
      return reply.status(201).send({ ...created, token });
    },
  );

  api.delete(
    '/tokens/:id',
    {
      onRequest: ctx.auth('admin'),
      schema: { tags: ['tokens'], params: Type.Object({ id: Type.String() }), response: { 200: ApiToken, ...errors } },
    },
    async (request) => {
      const actor = principalOf(request);
      const { id } = request.params;
      if (!isUuid(id)) throw notFound(`token ${id}`);
      return ctx.db.transaction(async (tx) => {
        const t = await revokeToken(tx, id);
        if (!t) throw notFound(`token ${id}`);
        await recordAudit(tx, { actor: actor.name, action: 'token.revoke', targetType: 'token', targetId: id });
        return t;
      });
    },
  );
}
