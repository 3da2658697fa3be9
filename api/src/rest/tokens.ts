/** API tokens: bearer tokens with a role. The secret is shown once, at creation. */
import { Type, type Static } from 'typebox';

/**
 * viewer: read everything; operator: also change clusters and workloads; admin: also manage
 * tokens and read the audit log; bootstrap: may only register clusters and claim credentials.
 */
export const TokenRole = Type.Union([
  Type.Literal('viewer'),
  Type.Literal('operator'),
  Type.Literal('admin'),
  Type.Literal('bootstrap'),
]);
export type TokenRole = Static<typeof TokenRole>;

export const CreateTokenRequest = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 128 }), role: TokenRole },
  { additionalProperties: false },
);
export type CreateTokenRequest = Static<typeof CreateTokenRequest>;

export const ApiToken = Type.Object({
  id: Type.String(),
  name: Type.String(),
  role: TokenRole,
  createdAt: Type.String(),
  revokedAt: Type.Union([Type.String(), Type.Null()]),
});
export type ApiToken = Static<typeof ApiToken>;

export const CreatedApiToken = Type.Object({ ...ApiToken.properties, token: Type.String() });
export type CreatedApiToken = Static<typeof CreatedApiToken>;

export const ApiTokenList = Type.Object({ items: Type.Array(ApiToken) });
export type ApiTokenList = Static<typeof ApiTokenList>;
