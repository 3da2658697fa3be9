/**
 * The hub's operator-mode secrets, read from files once at start: the operator signing key (signs
 * account JWTs and account deletions), the cluster user signing key (signs agents' user JWTs) and
 * the creds files of its own HUB and SYS users. Each is checked for its kind; errors name the
 * setting, never the content. Nothing here is ever logged.
 */
import { readFileSync } from 'node:fs';
import { fromSeed, type KeyPair } from '@nats-io/nkeys';
import { HubError } from '../../errors.js';

/** The files, as config.ts reads them from the environment. */
export interface NatsAuthFiles {
  /** FLOTILLA_NATS_CREDS_FILE: the hub's user in the HUB account. */
  credsFile: string;
  /** FLOTILLA_NATS_SYSTEM_CREDS_FILE: the hub's user in the system account. */
  systemCredsFile: string;
  /** FLOTILLA_NATS_OPERATOR_SIGNING_KEY_FILE: an operator signing seed (`SO…`). */
  operatorSigningKeyFile: string;
  /** FLOTILLA_NATS_ACCOUNT_SIGNING_KEY_FILE: the cluster user signing seed (`SA…`). */
  accountSigningKeyFile: string;
  /** FLOTILLA_AGENT_CREDENTIAL_TTL_SECONDS: lifetime of an agent's user JWT. */
  credentialTtlSeconds: number;
}

export interface NatsAuthKeys {
  operatorSigner: KeyPair;
  userSigner: KeyPair;
  /** The HUB account's public key (the issuer of the hub's own user). */
  hubAccount: string;
  /** The system account's public key (the issuer of the hub's system user). */
  systemAccount: string;
  /** Contents of the creds files, for the hub's two connections. */
  hubCreds: Uint8Array;
  systemCreds: Uint8Array;
  credentialTtlSeconds: number;
}

function read(file: string, setting: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (cause) {
    throw new HubError('HUB_ERR_CONFIG', `${setting}: cannot read ${file}`, { cause });
  }
}

function seedOf(file: string, setting: string, kind: 'O' | 'A'): KeyPair {
  const text = read(file, setting).trim();
  try {
    const kp = fromSeed(new TextEncoder().encode(text));
    if (kp.getPublicKey().startsWith(kind)) return kp;
  } catch {
    // Reported below without the content.
  }
  throw new HubError(
    'HUB_ERR_CONFIG',
    `${setting}: ${file} does not hold an ${kind === 'O' ? 'operator' : 'account'} seed`,
  );
}

const JWT_IN_CREDS = /-----BEGIN NATS USER JWT-----\s*([A-Za-z0-9_.-]+)\s*------END NATS USER JWT------/;

/** The account a creds file's user belongs to (its JWT's issuer_account, else its issuer). */
function accountOfCreds(text: string, setting: string, file: string): string {
  const jwt = JWT_IN_CREDS.exec(text)?.[1];
  const body = jwt?.split('.')[1];
  if (!body) throw new HubError('HUB_ERR_CONFIG', `${setting}: ${file} is not a NATS creds file`);
  const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as {
    iss?: string;
    nats?: { issuer_account?: string };
  };
  const account = claims.nats?.issuer_account ?? claims.iss ?? '';
  if (!account.startsWith('A')) throw new HubError('HUB_ERR_CONFIG', `${setting}: ${file} holds no account user`);
  return account;
}

export function loadNatsAuthKeys(files: NatsAuthFiles): NatsAuthKeys {
  const hubCreds = read(files.credsFile, 'FLOTILLA_NATS_CREDS_FILE');
  const systemCreds = read(files.systemCredsFile, 'FLOTILLA_NATS_SYSTEM_CREDS_FILE');
  return {
    systemAccount: accountOfCreds(systemCreds, 'FLOTILLA_NATS_SYSTEM_CREDS_FILE', files.systemCredsFile),
    operatorSigner: seedOf(files.operatorSigningKeyFile, 'FLOTILLA_NATS_OPERATOR_SIGNING_KEY_FILE', 'O'),
    userSigner: seedOf(files.accountSigningKeyFile, 'FLOTILLA_NATS_ACCOUNT_SIGNING_KEY_FILE', 'A'),
    hubAccount: accountOfCreds(hubCreds, 'FLOTILLA_NATS_CREDS_FILE', files.credsFile),
    hubCreds: new TextEncoder().encode(hubCreds),
    systemCreds: new TextEncoder().encode(systemCreds),
    credentialTtlSeconds: files.credentialTtlSeconds,
  };
}
