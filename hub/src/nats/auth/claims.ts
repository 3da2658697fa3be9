/**
 * The JWTs of operator mode (docs/adr/0012-nats-decentralized-auth.md), built from api's account
 * declarations: cluster accounts (signed by the operator signing key), agent users (signed by the
 * cluster user signing key every cluster account lists), the hub's and system accounts, and the
 * self-signed request that deletes accounts from the resolver.
 */
import { agentNatsUser, agentPermissions, clusterServiceImports, hubServiceExports } from '@flotilla/api';
import { encodeAccount, encodeGeneric, encodeUser, type Account } from '@nats-io/jwt';
import type { KeyPair } from '@nats-io/nkeys';
import type { ClusterAccount } from '../../domain/cluster-account.js';

/** Limits of a cluster account: one agent leader (two during a handover), no JetStream, no exports. */
const CLUSTER_LIMITS = {
  conn: 4,
  subs: 1000,
  leaf: 0,
  data: -1,
  payload: -1,
  imports: -1,
  exports: 0,
  wildcards: true,
  disallow_bearer: true,
  mem_storage: 0,
  disk_storage: 0,
  streams: 0,
  consumer: 0,
};

const UNLIMITED = { conn: -1, subs: -1, leaf: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true };
const JETSTREAM = { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 };

export function clusterAccountJwt(
  a: ClusterAccount,
  keys: { hubAccount: string; operatorSigner: KeyPair; userSigner: string },
): Promise<string> {
  const claims: Partial<Account> = {
    limits: CLUSTER_LIMITS,
    imports: clusterServiceImports(a.cluster).map((i) => ({
      name: i.name,
      subject: i.subject,
      local_subject: i.localSubject,
      account: keys.hubAccount,
      type: 'service' as const,
    })),
    signing_keys: [keys.userSigner],
    ...(Object.keys(a.revocations).length > 0 ? { revocations: a.revocations } : {}),
  };
  return encodeAccount(`cluster-${a.cluster}`, a.accountKey, claims, { signer: keys.operatorSigner });
}

/** The hub's account: JetStream, and the services cluster accounts import. */
export function hubAccountJwt(hubAccount: KeyPair | string, operatorSigner: KeyPair): Promise<string> {
  return encodeAccount(
    'HUB',
    hubAccount,
    {
      limits: { ...UNLIMITED, ...JETSTREAM },
      exports: hubServiceExports().map((e) => ({
        name: e.name,
        subject: e.subject,
        type: 'service' as const,
        ...(e.responseType ? { response_type: e.responseType } : {}),
      })),
    },
    { signer: operatorSigner },
  );
}

export function systemAccountJwt(systemAccount: KeyPair | string, operatorSigner: KeyPair): Promise<string> {
  return encodeAccount('SYS', systemAccount, { limits: UNLIMITED }, { signer: operatorSigner });
}

export interface IssuedUser {
  jwt: string;
  /** The JWT's id (jti). */
  id: string;
  expiresAt: Date;
}

/** The agent's user JWT: its permissions, not usable as a bearer token, expiring after `ttlSeconds`. */
export async function agentUserJwt(
  a: Pick<ClusterAccount, 'cluster' | 'accountKey'>,
  userKey: string,
  o: { userSigner: KeyPair; ttlSeconds: number; nowMs: number },
): Promise<IssuedUser> {
  const perms = agentPermissions(a.cluster);
  const exp = Math.floor(o.nowMs / 1000) + o.ttlSeconds;
  const jwt = await encodeUser(
    agentNatsUser(a.cluster),
    userKey,
    a.accountKey,
    { pub: perms.publish, sub: perms.subscribe, bearer_token: false },
    { signer: o.userSigner, exp },
  );
  const body = JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as { jti: string };
  return { jwt, id: body.jti, expiresAt: new Date(exp * 1000) };
}

/** The request body of `$SYS.REQ.CLAIMS.DELETE`: self-signed by an operator (signing) key. */
export function deleteAccountsRequest(accounts: readonly string[], operatorSigner: KeyPair): Promise<string> {
  return encodeGeneric('delete-accounts', operatorSigner, 'generic', { accounts: [...accounts] });
}
