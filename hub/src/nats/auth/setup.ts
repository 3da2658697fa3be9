/**
 * Install-time generation of an operator-mode NATS setup (docs/adr/0012): the operator, its
 * signing key, the SYS and HUB accounts, the hub's two users and the cluster user signing key.
 * The result feeds nats-server's config (operator JWT, system account, resolver preload) and the
 * hub's secret files. createOperatorSetup() drops the operator's identity seed: after this it is
 * needed only to re-sign the operator JWT (a new signing key). createOperatorInstall() also
 * returns it, for `flotilla-hub nats-setup`, which writes it apart for the installer to keep
 * offline.
 */
import { encodeOperator, encodeUser, fmtCreds } from '@nats-io/jwt';
import { createAccount, createOperator, createUser, fromSeed, type KeyPair } from '@nats-io/nkeys';
import { hubAccountJwt, systemAccountJwt } from './claims.js';
import type { NatsAuthKeys } from './keys.js';

export interface OperatorSetup {
  operatorJwt: string;
  /** The SYS account's public key (`system_account`). */
  systemAccount: string;
  hubAccount: string;
  /** Account public key → JWT, for `resolver_preload`. */
  preload: Record<string, string>;
  /** Creds file contents of the hub's users in HUB and SYS. */
  hubCreds: string;
  systemCreds: string;
  /** Seeds for the hub's signing-key files. */
  operatorSigningSeed: string;
  accountSigningSeed: string;
}

const text = (b: Uint8Array): string => new TextDecoder().decode(b);

async function userCreds(name: string, account: KeyPair): Promise<string> {
  const user = createUser();
  return text(fmtCreds(await encodeUser(name, user, account), user));
}

/** A setup plus the operator's identity seed (`SO…`), which is never part of the hub's files. */
export interface OperatorInstall {
  setup: OperatorSetup;
  operatorIdentitySeed: string;
}

export async function createOperatorSetup(name = 'flotilla'): Promise<OperatorSetup> {
  return (await createOperatorInstall(name)).setup;
}

export async function createOperatorInstall(name = 'flotilla'): Promise<OperatorInstall> {
  const operator = createOperator();
  const operatorSigner = createOperator();
  const sys = createAccount();
  const hub = createAccount();
  const accountSigner = createAccount();
  const operatorJwt = await encodeOperator(name, operator, {
    signing_keys: [operatorSigner.getPublicKey()],
    system_account: sys.getPublicKey(),
  });
  const setup: OperatorSetup = {
    operatorJwt,
    systemAccount: sys.getPublicKey(),
    hubAccount: hub.getPublicKey(),
    preload: {
      [sys.getPublicKey()]: await systemAccountJwt(sys, operatorSigner),
      [hub.getPublicKey()]: await hubAccountJwt(hub, operatorSigner),
    },
    hubCreds: await userCreds('flotilla-hub', hub),
    systemCreds: await userCreds('flotilla-hub-system', sys),
    operatorSigningSeed: text(operatorSigner.getSeed()),
    accountSigningSeed: text(accountSigner.getSeed()),
  };
  return { setup, operatorIdentitySeed: text(operator.getSeed()) };
}

/** The keys a hub holds, straight from a setup (tests; a deployment reads files: keys.ts). */
export function keysOfSetup(setup: OperatorSetup, credentialTtlSeconds = 86_400): NatsAuthKeys {
  const enc = new TextEncoder();
  return {
    operatorSigner: fromSeed(enc.encode(setup.operatorSigningSeed)),
    userSigner: fromSeed(enc.encode(setup.accountSigningSeed)),
    hubAccount: setup.hubAccount,
    systemAccount: setup.systemAccount,
    hubCreds: enc.encode(setup.hubCreds),
    systemCreds: enc.encode(setup.systemCreds),
    credentialTtlSeconds,
  };
}
