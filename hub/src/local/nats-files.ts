/**
 * The local NATS server's secrets, made once per data directory and kept there (files 0600, never
 * printed): operator mode's operator JWT, the SYS and HUB accounts, the hub's two creds files and
 * its signing keys (nats/auth/setup.ts generates them), and the TLS CA agents trust. The serving
 * certificate is issued again at every start, for the addresses of that start.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createOperatorSetup } from '../nats/auth/setup.js';
import { createLocalCa, createServerCert, type CertPem } from './pki.js';

export interface NatsFiles {
  dir: string;
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  operatorJwt: string;
  systemAccount: string;
  /** Account public key → JWT, preloaded by the server's resolver. */
  preload: Record<string, string>;
  /** The hub's settings (FLOTILLA_NATS_*_FILE) pointing at these files. */
  hubEnv: Record<string, string>;
}

/** The hub's four operator-mode files: setting → file name (the hub chart's Secret keys too). */
export const SECRET_FILES = {
  FLOTILLA_NATS_CREDS_FILE: 'hub.creds',
  FLOTILLA_NATS_SYSTEM_CREDS_FILE: 'hub-system.creds',
  FLOTILLA_NATS_OPERATOR_SIGNING_KEY_FILE: 'operator-signing.nk',
  FLOTILLA_NATS_ACCOUNT_SIGNING_KEY_FILE: 'account-signing.nk',
} as const;

interface OperatorFile {
  operatorJwt: string;
  systemAccount: string;
  preload: Record<string, string>;
}

const secret = (file: string, content: string): void => writeFileSync(file, content, { mode: 0o600 });

/** Generates the operator-mode files into a scratch folder, then moves it in place: all or nothing. */
async function ensureAuth(authDir: string): Promise<void> {
  if (existsSync(path.join(authDir, 'operator.json'))) return;
  const scratch = `${authDir}.new`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { mode: 0o700 });
  const setup = await createOperatorSetup();
  const contents: Record<keyof typeof SECRET_FILES, string> = {
    FLOTILLA_NATS_CREDS_FILE: setup.hubCreds,
    FLOTILLA_NATS_SYSTEM_CREDS_FILE: setup.systemCreds,
    FLOTILLA_NATS_OPERATOR_SIGNING_KEY_FILE: setup.operatorSigningSeed,
    FLOTILLA_NATS_ACCOUNT_SIGNING_KEY_FILE: setup.accountSigningSeed,
  };
  for (const [key, name] of Object.entries(SECRET_FILES)) {
    secret(path.join(scratch, name), contents[key as keyof typeof SECRET_FILES]);
  }
  const operator: OperatorFile = {
    operatorJwt: setup.operatorJwt,
    systemAccount: setup.systemAccount,
    preload: setup.preload,
  };
  secret(path.join(scratch, 'operator.json'), JSON.stringify(operator, null, 2) + '\n');
  rmSync(authDir, { recursive: true, force: true });
  renameSync(scratch, authDir);
}

async function ensureCa(tlsDir: string): Promise<CertPem> {
  const certFile = path.join(tlsDir, 'ca.crt');
  const keyFile = path.join(tlsDir, 'ca.key');
  if (existsSync(certFile) && existsSync(keyFile)) {
    return { certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8') };
  }
  const ca = await createLocalCa('flotilla-hub local NATS CA');
  secret(keyFile, ca.keyPem);
  writeFileSync(certFile, ca.certPem, { mode: 0o644 });
  return ca;
}

/** Makes what is missing under `<dataDir>/nats` and issues a serving certificate for `hosts`. */
export async function ensureNatsFiles(dataDir: string, hosts: readonly string[]): Promise<NatsFiles> {
  const dir = path.join(dataDir, 'nats');
  const authDir = path.join(dir, 'auth');
  const tlsDir = path.join(dir, 'tls');
  mkdirSync(tlsDir, { recursive: true, mode: 0o700 });
  await ensureAuth(authDir);
  const ca = await ensureCa(tlsDir);
  const server = await createServerCert(ca, hosts);
  const serverCertFile = path.join(tlsDir, 'server.crt');
  const serverKeyFile = path.join(tlsDir, 'server.key');
  secret(serverKeyFile, server.keyPem);
  writeFileSync(serverCertFile, `${server.certPem.trim()}\n${ca.certPem.trim()}\n`, { mode: 0o644 });
  const operator = JSON.parse(readFileSync(path.join(authDir, 'operator.json'), 'utf8')) as OperatorFile;
  const hubEnv = Object.fromEntries(Object.entries(SECRET_FILES).map(([key, name]) => [key, path.join(authDir, name)]));
  return {
    dir,
    caFile: path.join(tlsDir, 'ca.crt'),
    serverCertFile,
    serverKeyFile,
    ...operator,
    hubEnv,
  };
}
