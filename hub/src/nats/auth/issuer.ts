/**
 * The hub's NATS account issuer (operator mode, docs/adr/0012-nats-decentralized-auth.md):
 * creates and pushes cluster accounts, signs agents' user JWTs, revokes and deletes accounts.
 * Postgres holds the truth (ClusterAccount); every call here is idempotent, so hub replicas may
 * call it at the same time and the link reconciler may repeat it.
 */
import { createAccount } from '@nats-io/nkeys';
import { agentUserJwt, clusterAccountJwt, deleteAccountsRequest, hubAccountJwt, type IssuedUser } from './claims.js';
import type { ClusterAccount } from '../../domain/cluster-account.js';
import type { NatsAuthKeys } from './keys.js';
import type { AccountResolver } from './resolver.js';

export interface NatsAccountIssuer {
  /** A new account key for a cluster; only its public key exists anywhere. */
  newAccountKey(): string;
  /** Makes every NATS node hold the cluster's account as given (imports, revocations). */
  pushAccount(a: ClusterAccount): Promise<void>;
  /** A user JWT for the agent's public key in the cluster's account. */
  signUser(a: ClusterAccount, userKey: string): Promise<IssuedUser>;
  /** Refuses every user of the account, then deletes it: its connections close on every node. */
  removeAccount(a: ClusterAccount): Promise<void>;
  /** Deletes accounts by public key (accounts the resolver holds that Postgres does not know). */
  deleteAccounts(accountKeys: readonly string[]): Promise<void>;
  /** Account public keys the resolver holds. */
  listAccounts(): Promise<string[]>;
  /** Pushes the hub's own account (its exports follow this hub version). */
  pushHubAccount(): Promise<void>;
}

export interface AccountIssuerDeps {
  keys: NatsAuthKeys;
  resolver: AccountResolver;
  nowMs?: () => number;
}

export function createAccountIssuer(deps: AccountIssuerDeps): NatsAccountIssuer {
  const { keys, resolver } = deps;
  const now = deps.nowMs ?? Date.now;
  const signKeys = {
    hubAccount: keys.hubAccount,
    operatorSigner: keys.operatorSigner,
    userSigner: keys.userSigner.getPublicKey(),
  };
  const push = async (a: ClusterAccount): Promise<void> => resolver.update(await clusterAccountJwt(a, signKeys));
  const deleteAccounts = async (accountKeys: readonly string[]): Promise<void> => {
    if (accountKeys.length > 0) await resolver.remove(await deleteAccountsRequest(accountKeys, keys.operatorSigner));
  };
  return {
    newAccountKey: () => createAccount().getPublicKey(),
    pushAccount: push,
    signUser: (a, userKey) =>
      agentUserJwt(a, userKey, { userSigner: keys.userSigner, ttlSeconds: keys.credentialTtlSeconds, nowMs: now() }),
    async removeAccount(a) {
      // A node that misses the deletion (down at the time) still refuses every user it knew.
      await push({ ...a, revocations: { ...a.revocations, '*': Math.floor(now() / 1000) } });
      await deleteAccounts([a.accountKey]);
    },
    deleteAccounts,
    listAccounts: () => resolver.list(),
    async pushHubAccount() {
      await resolver.update(await hubAccountJwt(keys.hubAccount, keys.operatorSigner));
    },
  };
}
