/**
 * Operator mode at hub start (docs/adr/0012): the hub's own connection authenticates with its
 * HUB-account creds; a second connection, as the system-account user, talks to the account
 * resolver. The hub's account JWT is pushed first, so its exports always match this version.
 */
import { credsAuthenticator, connect, type ConnectionOptions } from '@nats-io/transport-node';
import { createAccountIssuer, type NatsAccountIssuer } from './issuer.js';
import type { NatsAuthKeys } from './keys.js';
import { createAccountResolver } from './resolver.js';

/** How the hub's own connection authenticates: its creds, else a user and password, else none. */
export function hubAuthOptions(
  keys: NatsAuthKeys | undefined,
  user: string | undefined,
  password: string | undefined,
): Partial<ConnectionOptions> {
  if (keys) return { authenticator: credsAuthenticator(keys.hubCreds) };
  return user ? { user, pass: password ?? '' } : {};
}

export interface StartedIssuer {
  accounts: NatsAccountIssuer;
  close(): Promise<void>;
}

/** Connects as the system user (same servers and TLS as the hub) and returns the account issuer. */
export async function startAccountIssuer(
  keys: NatsAuthKeys,
  connection: Pick<ConnectionOptions, 'servers' | 'tls'>,
): Promise<StartedIssuer> {
  const nc = await connect({
    ...connection,
    authenticator: credsAuthenticator(keys.systemCreds),
    name: 'flotilla-hub-system',
    maxReconnectAttempts: -1,
  });
  const accounts = createAccountIssuer({ keys, resolver: createAccountResolver(nc) });
  await accounts.pushHubAccount();
  return { accounts, close: () => nc.drain() };
}
