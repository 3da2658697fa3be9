import { decode } from '@nats-io/jwt';
import { createAccount, createOperator, createUser } from '@nats-io/nkeys';
import { describe, expect, it } from 'vitest';
import { agentPermissions, clusterServiceImports } from '@flotilla/api';
import { agentUserJwt, clusterAccountJwt, deleteAccountsRequest, hubAccountJwt } from './claims.js';

interface AccountClaims {
  imports: { subject: string; local_subject: string; account: string; type: string }[];
  exports: { subject: string; response_type?: string }[];
  signing_keys: string[];
  revocations?: Record<string, number>;
  limits: { conn: number; streams: number; disk_storage: number; exports: number; disallow_bearer: boolean };
}

describe('operator-mode claims', () => {
  const operatorSigner = createOperator();
  const hub = createAccount();
  const userSigner = createAccount();
  const account = createAccount().getPublicKey();

  it('signs a cluster account that imports only its own services and trusts the user signing key', async () => {
    const jwt = await clusterAccountJwt(
      { cluster: 'a', accountKey: account, revocations: { UOLD: 100 } },
      { hubAccount: hub.getPublicKey(), operatorSigner, userSigner: userSigner.getPublicKey() },
    );
    const c = decode<AccountClaims>(jwt);
    expect(c.iss).toBe(operatorSigner.getPublicKey());
    expect(c.sub).toBe(account);
    expect(c.nats.imports?.map((i) => [i.subject, i.local_subject])).toEqual(
      clusterServiceImports('a').map((i) => [i.subject, i.localSubject]),
    );
    expect(c.nats.imports?.every((i) => i.account === hub.getPublicKey() && i.type === 'service')).toBe(true);
    expect(c.nats.signing_keys).toEqual([userSigner.getPublicKey()]);
    expect(c.nats.revocations).toEqual({ UOLD: 100 });
    expect(c.nats.limits).toMatchObject({ streams: 0, disk_storage: 0, exports: 0, disallow_bearer: true });
  });

  it('exports the consumer pull as a stream response from the hub’s account', async () => {
    const c = decode<AccountClaims>(await hubAccountJwt(hub, operatorSigner));
    const next = c.nats.exports?.find((e) => e.subject === '$JS.API.CONSUMER.MSG.NEXT.DESIRED.*');
    expect(next?.response_type).toBe('Stream');
  });

  it('issues a user JWT for the agent’s key with its permissions and an expiry', async () => {
    const user = createUser().getPublicKey();
    const nowMs = 1_800_000_000_000;
    const issued = await agentUserJwt({ cluster: 'a', accountKey: account }, user, {
      userSigner,
      ttlSeconds: 3600,
      nowMs,
    });
    const c = decode<{
      pub: { allow: string[] };
      sub: { allow: string[] };
      issuer_account: string;
      bearer_token: boolean;
    }>(issued.jwt);
    expect(c.sub).toBe(user);
    expect(c.iss).toBe(userSigner.getPublicKey());
    expect(c.nats.issuer_account).toBe(account);
    expect(c.nats.pub?.allow).toEqual(agentPermissions('a').publish.allow);
    expect(c.nats.sub?.allow).toEqual(agentPermissions('a').subscribe.allow);
    expect(c.nats.bearer_token).toBe(false);
    expect(c.exp).toBe(nowMs / 1000 + 3600);
    expect(issued).toMatchObject({ id: c.jti, expiresAt: new Date(nowMs + 3600_000) });
  });

  it('self-signs an account deletion with the operator signing key', async () => {
    const c = decode<{ accounts: string[] }>(await deleteAccountsRequest([account], operatorSigner));
    expect(c.iss).toBe(c.sub);
    expect(c.iss).toBe(operatorSigner.getPublicKey());
    expect(c.nats.accounts).toEqual([account]);
  });
});
