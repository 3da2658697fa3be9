/**
 * Bearer-token authentication and role checks. Routes declare the role they need with
 * `preHandler: requireRole(...)`; the principal is attached to the request for auditing.
 * No token or an unknown/revoked one is 401; a token whose role is too small is 403.
 */
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { TokenRole } from '@flotilla/api';
import { roleSatisfies, sha256 } from '../auth/tokens.js';
import type { Db } from '../db/client.js';
import { HubError } from '../errors.js';
import { findActiveToken, type Principal } from '../repositories/tokens-repo.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

const BEARER = /^Bearer\s+(\S+)$/i;

export type RequireRole = (role: TokenRole) => preHandlerAsyncHookHandler;

export function createAuth(db: Db): RequireRole {
  return (role) =>
    async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
      const match = BEARER.exec(request.headers.authorization ?? '');
      if (!match) throw new HubError('HUB_ERR_UNAUTHORIZED', 'a bearer token is required');
      const principal = await findActiveToken(db, sha256(match[1]!));
      if (!principal) throw new HubError('HUB_ERR_UNAUTHORIZED', 'the token is unknown or revoked');
      if (!roleSatisfies(principal.role, role)) {
        throw new HubError('HUB_ERR_FORBIDDEN', `this needs the ${role} role; the token has ${principal.role}`);
      }
      request.principal = principal;
    };
}

/** The authenticated principal; routes behind requireRole always have one. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new HubError('HUB_ERR_UNAUTHORIZED', 'not authenticated');
  return request.principal;
}
