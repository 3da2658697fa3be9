/**
 * How agent identities reach nats-server. The hub keeps the truth in Postgres (bcrypt hashes of
 * the agents' NATS passwords) and hands the full set to an issuer after every change; see
 * docs/adr/0002-nats-credentials.md for why a rendered authorization file plus a config reload is
 * the implementation today and NATS auth callout the production-grade successor.
 */

/** One agent's NATS identity as nats-server must accept it. */
export interface AgentIdentity {
  cluster: string;
  user: string;
  /** bcrypt hash; nats-server verifies bcrypt passwords natively. */
  passwordHash: string;
}

export interface NatsCredentialIssuer {
  /** Makes nats-server accept exactly these agent identities (besides its static users). */
  sync(identities: readonly AgentIdentity[]): Promise<void>;
}

/** For deployments whose NATS auth is managed outside the hub: does nothing. */
export const externalCredentialIssuer: NatsCredentialIssuer = {
  sync: () => Promise.resolve(),
};
