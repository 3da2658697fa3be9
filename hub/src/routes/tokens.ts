/** /api/v1/tokens — admin-only management of API tokens (the secret is returned once). */
import { ApiToken, ApiTokenList, CreateTokenRequest, CreatedApiToken } from '@flotilla/api';
import { Type } from 'typebox';
import { principalOf } from '../plugins/auth.js';
import type { Api, RouteContext } from './context.js';
import { changeErrorResponses } from './responses.js';

const errors = changeErrorResponses;
const tags = ['tokens'];

export function tokenRoutes(api: Api, ctx: RouteContext): void {
  api.get(
    '/tokens',
    { onRequest: ctx.auth('admin'), schema: { tags, response: { 200: ApiTokenList, ...errors } } },
    async () => ctx.tokens.list(),
  );

  api.post(
    '/tokens',
    {
      onRequest: ctx.auth('admin'),
      schema: { tags, body: CreateTokenRequest, response: { 201: CreatedApiToken, ...errors } },
    },
    async (request, reply) => reply.status(201).send(await ctx.tokens.create(principalOf(request), request.body)),
  );

  api.delete(
    '/tokens/:id',
    {
      onRequest: ctx.auth('admin'),
      schema: { tags, params: Type.Object({ id: Type.String() }), response: { 200: ApiToken, ...errors } },
    },
    async (request) => ctx.tokens.revoke(principalOf(request), request.params.id),
  );
}
