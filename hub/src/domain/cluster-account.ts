/**
 * A cluster's NATS account as Postgres holds it (docs/adr/0012-nats-decentralized-auth.md):
 * public keys and revocations only, from which the hub signs the account JWT at any time.
 */

export interface ClusterAccount {
  cluster: string;
  /** The account's public key (`A…`); nobody holds its seed. */
  accountKey: string;
  /** User public keys (or `*`) → unix seconds: JWTs issued at or before are refused. */
  revocations: Record<string, number>;
}

/**
 * The revocations still worth carrying: an entry older than the credential TTL only refuses JWTs
 * that have expired anyway. Pure.
 */
export function liveRevocations(
  revocations: Record<string, number>,
  nowSeconds: number,
  ttlSeconds: number,
): Record<string, number> {
  return Object.fromEntries(Object.entries(revocations).filter(([, at]) => at > nowSeconds - ttlSeconds));
}

/** The revocations after revoking `userKey` now (older entries past the TTL dropped). */
export function revokeUserKey(
  revocations: Record<string, number>,
  userKey: string,
  nowSeconds: number,
  ttlSeconds: number,
): Record<string, number> {
  return { ...liveRevocations(revocations, nowSeconds, ttlSeconds), [userKey]: nowSeconds };
}
