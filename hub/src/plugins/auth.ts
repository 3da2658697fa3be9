/**
 * Bearer-token authentication, role checks and request rate limits. Routes declare the role they
 * need with `onRequest: requireRole(...)`, so a caller is authenticated before its body is read
 * or validated: an anonymous caller never learns anything about the request's shape.
 * No token or an unknown/revoked one is 401; a token whose role is too small is 403; a caller
 * over its rate is 429 with Retry-After. The principal is attached to the request for auditing.
 */
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { TokenRole } from '@flotilla/api';
import { roleSatisfies, type Principal } from '../auth/tokens.js';
import { HubError } from '../errors.js';
import type { TokenService } from '../services/token-service.js';
import type { RateLimiter } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

const BEARER = /^Bearer\s+(\S+)$/i;

export type RequireRole = (role: TokenRole) => onRequestAsyncHookHandler;

export function createAuth(tokens: Pick<TokenService, 'authenticate'>, limiter: RateLimiter): RequireRole {
  return (role) =>
    async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
      const match = BEARER.exec(request.headers.authorization ?? '');
      if (!match) {
        limiter.admitAnonymous(request.ip);
        throw new HubError('HUB_ERR_UNAUTHORIZED', 'a bearer token is required');
      }
      const principal = await tokens.authenticate(match[1]!);
      if (!principal) {
        limiter.admitAnonymous(request.ip);
        throw new HubError('HUB_ERR_UNAUTHORIZED', 'the token is unknown or revoked');
      }
      limiter.admitToken(principal, request.ip);
      if (!roleSatisfies(principal.role, role)) {
        throw new HubError('HUB_ERR_FORBIDDEN', `this needs the ${role} role; the token has ${principal.role}`);
      }
      request.principal = principal;
    };
}

/**
 * For requests authenticated by an agent's key signature (renew, re-key): the service checks the
 * signature; here the caller's address is charged like an unauthenticated request, so a flood of
 * forged signatures is refused before it costs a transaction.
 */
export function limitSigned(limiter: RateLimiter): onRequestAsyncHookHandler {
  return function limitSignedRequest(request: FastifyRequest): Promise<void> {
    limiter.admitAnonymous(request.ip);
    return Promise.resolve();
  };
}

/** The authenticated principal; routes behind requireRole always have one. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new HubError('HUB_ERR_UNAUTHORIZED', 'not authenticated');
  return request.principal;
}
