/**
 * `flotilla-hub nats-setup`'s command line, parsed without side effects; every error names the
 * flag. The usage text says what is written where, and why the operator's identity key is kept
 * apart from everything a cluster holds.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { HubError } from '../errors.js';

export interface NatsSetupOptions {
  /** The new directory everything is written into. */
  outDir: string;
  /** Where every nats-server keeps the account JWTs (its persistent volume). */
  resolverDir: string;
  /** Namespace of the hub's Secret (the hub chart's release namespace). */
  namespace: string;
  /** Namespace of the nats-server config Secret (the NATS install's). */
  natsNamespace: string;
}

export const NATS_SETUP_USAGE = `Usage: flotilla-hub nats-setup --out DIR [options]

Generates a new NATS operator-mode setup (docs/adr/0012) for a cluster install of the hub and
writes it into DIR, which must be new or empty (directory 0700, files 0600). Nothing secret is
printed; at the end it prints the kubectl commands that turn the files into Secrets.

  DIR/hub/                      the hub's four files, named as the hub chart's Secret expects:
                                hub.creds, hub-system.creds, operator-signing.nk,
                                account-signing.nk (nats.auth.existingSecret)
  DIR/nats-server/flotilla-operator.conf
                                operator JWT, system_account, a full resolver and the SYS and
                                HUB accounts preloaded: include it in every nats-server's config
                                by a path relative to that config file (nats-server refuses an
                                absolute include path)
  DIR/offline/operator-identity.nk
                                the operator's identity key. Move it offline (a password manager,
                                an offline disk) and delete it here: it is the root of the NATS
                                trust, no server or hub needs it, and it must not sit in a
                                cluster. It is kept rather than thrown away because it alone signs
                                a new operator JWT, which rotating the operator signing key needs;
                                without it a rotation means a whole new setup.

Options:
  --out DIR              the directory to create (required; refused when it is not empty)
  --resolver-dir DIR     where each nats-server keeps the account JWTs, on its persistent volume
                         (default /data/resolver)
  --namespace NS         namespace of the hub's Secret in the printed commands (default flotilla)
  --nats-namespace NS    namespace of the nats-server config Secret (default nats)
  -h, --help             show this help
`;

const FLAGS = {
  out: { type: 'string' },
  'resolver-dir': { type: 'string' },
  namespace: { type: 'string' },
  'nats-namespace': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** A Kubernetes namespace name (RFC 1123 label). */
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

function namespaceOf(raw: string | undefined, flag: string, fallback: string): string {
  if (raw === undefined) return fallback;
  if (!NAMESPACE.test(raw)) {
    throw new HubError('HUB_ERR_CONFIG', `${flag} must be a Kubernetes namespace name, got ${JSON.stringify(raw)}`);
  }
  return raw;
}

function required(raw: string | undefined, flag: string): string {
  if (raw === undefined) throw new HubError('HUB_ERR_CONFIG', `${flag} is required (see --help)`);
  if (raw.trim() === '') throw new HubError('HUB_ERR_CONFIG', `${flag} must not be empty`);
  return raw.trim();
}

/** Parses the arguments after `nats-setup`; undefined means --help. */
export function parseNatsSetup(argv: string[]): NatsSetupOptions | undefined {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: FLAGS, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new HubError('HUB_ERR_CONFIG', `nats-setup: ${(err as Error).message} (see --help)`);
  }
  if (values.help) return undefined;
  const resolverDir =
    values['resolver-dir'] === undefined ? '/data/resolver' : required(values['resolver-dir'], '--resolver-dir');
  if (!path.isAbsolute(resolverDir)) {
    // nats-server resolves a relative one against its working directory, which a pod does not fix.
    throw new HubError('HUB_ERR_CONFIG', `--resolver-dir must be an absolute path, got ${JSON.stringify(resolverDir)}`);
  }
  return {
    outDir: path.resolve(required(values.out, '--out')),
    resolverDir,
    namespace: namespaceOf(values.namespace, '--namespace', 'flotilla'),
    natsNamespace: namespaceOf(values['nats-namespace'], '--nats-namespace', 'nats'),
  };
}
