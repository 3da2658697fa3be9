/**
 * What `flotilla-hub nats-setup` writes and prints, as pure functions: the files of a new
 * operator-mode setup (relative path → contents) and the closing text with the kubectl commands.
 * The text names files only; no creds, seed or JWT is ever part of it.
 */
import path from 'node:path';
import type { OperatorInstall } from '../nats/auth/setup.js';
import { operatorModeLines } from '../nats/auth/server-config.js';
import type { NatsSetupOptions } from './nats-setup-args.js';
import { SECRET_FILES } from './nats-files.js';

export const HUB_DIR = 'hub';
export const SERVER_CONFIG = path.join('nats-server', 'flotilla-operator.conf');
export const OPERATOR_IDENTITY = path.join('offline', 'operator-identity.nk');
/** The Secrets the printed commands create (the hub chart's README uses the first). */
export const HUB_SECRET = 'flotilla-nats-auth';
export const NATS_SECRET = 'flotilla-nats-operator';

/** The nats-server config fragment: operator mode, the same on every node. */
export function renderServerConfig(install: OperatorInstall, resolverDir: string): string {
  return [
    '# Operator mode for Flotilla (docs/adr/0012), made by `flotilla-hub nats-setup`. The same on',
    '# every node of the NATS cluster: include it from each nats-server config by a relative path',
    '# (`include ../flotilla-operator/flotilla-operator.conf`). The resolver keeps the account JWTs',
    "# the hub pushes; its folder must be on the node's persistent volume.",
    ...operatorModeLines(install.setup, resolverDir),
    '',
  ].join('\n');
}

/** Every file to write, relative to the output directory. */
export function setupFiles(install: OperatorInstall, resolverDir: string): Map<string, string> {
  const s = install.setup;
  const hub: Record<keyof typeof SECRET_FILES, string> = {
    FLOTILLA_NATS_CREDS_FILE: s.hubCreds,
    FLOTILLA_NATS_SYSTEM_CREDS_FILE: s.systemCreds,
    FLOTILLA_NATS_OPERATOR_SIGNING_KEY_FILE: s.operatorSigningSeed,
    FLOTILLA_NATS_ACCOUNT_SIGNING_KEY_FILE: s.accountSigningSeed,
  };
  const files = new Map<string, string>();
  for (const [key, name] of Object.entries(SECRET_FILES)) {
    files.set(path.join(HUB_DIR, name), withNewline(hub[key as keyof typeof SECRET_FILES]));
  }
  files.set(SERVER_CONFIG, renderServerConfig(install, resolverDir));
  files.set(OPERATOR_IDENTITY, withNewline(install.operatorIdentitySeed));
  return files;
}

const withNewline = (s: string): string => (s.endsWith('\n') ? s : `${s}\n`);

/** Quotes a word for a POSIX shell when it needs it. */
export function shellQuote(word: string): string {
  return /^[\w./:=@%+,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The closing text: where things are, the kubectl commands, and the identity key's fate. */
export function renderNextSteps(o: NatsSetupOptions): string {
  const file = (rel: string): string => path.join(o.outDir, rel);
  const hubFiles = Object.values(SECRET_FILES).map(
    (name) => `    --from-file=${shellQuote(`${name}=${file(path.join(HUB_DIR, name))}`)}`,
  );
  const conf = path.basename(SERVER_CONFIG);
  return [
    `Wrote a new NATS operator-mode setup to ${o.outDir} (directory 0700, files 0600; nothing secret is printed).`,
    '',
    "The hub's Secret (the hub chart's nats.auth.existingSecret):",
    `  kubectl -n ${o.namespace} create secret generic ${HUB_SECRET} \\`,
    hubFiles.join(' \\\n'),
    '',
    'The nats-server config fragment, the same on every node of the NATS install: mount this Secret',
    "in each server pod and include the file by a path relative to the server's config file",
    `(nats-server takes no absolute include path), e.g. \`include ../flotilla-operator/${conf}\`.`,
    `Each node keeps the account JWTs in ${o.resolverDir}, which must be on its persistent volume:`,
    `  kubectl -n ${o.natsNamespace} create secret generic ${NATS_SECRET} \\`,
    `    --from-file=${shellQuote(`${conf}=${file(SERVER_CONFIG)}`)}`,
    '',
    `Move ${file(OPERATOR_IDENTITY)} offline now and delete it here:`,
    "the operator's identity key is needed only to sign a new operator JWT (rotating the operator",
    'signing key), never by a server or the hub, and must not end up in a cluster.',
    '',
  ].join('\n');
}
