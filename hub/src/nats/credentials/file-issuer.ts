/**
 * Issuer that writes an authorization include file for nats-server and asks it to reload. The
 * nats-server config includes the file (`include "flotilla-auth.conf"`); the write is atomic
 * (temp file + rename), and an unchanged file causes no reload. Calls are serialized.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { HubError } from '../../errors.js';
import type { AgentIdentity, NatsCredentialIssuer } from './issuer.js';
import { renderAuthorization, type StaticNatsUser } from './render.js';

export interface FileIssuerOptions {
  file: string;
  staticUsers: readonly StaticNatsUser[];
  /** Makes nats-server re-read its config (SIGHUP to its pid, or `nats-server --signal reload`). */
  reload: () => Promise<void>;
}

export function createFileCredentialIssuer(opts: FileIssuerOptions): NatsCredentialIssuer {
  let chain: Promise<void> = Promise.resolve();
  const write = async (identities: readonly AgentIdentity[]): Promise<void> => {
    const content = renderAuthorization(opts.staticUsers, identities);
    const previous = await readFile(opts.file, 'utf8').catch(() => undefined);
    if (previous === content) return;
    const tmp = `${opts.file}.${process.pid}.tmp`;
    try {
      await writeFile(tmp, content, { mode: 0o600 });
      await rename(tmp, opts.file);
      await opts.reload();
    } catch (cause) {
      throw new HubError('HUB_ERR_UNAVAILABLE', `cannot update NATS authorization in ${opts.file}`, { cause });
    }
  };
  return {
    sync(identities) {
      const next = chain.then(() => write(identities));
      chain = next.catch(() => undefined);
      return next;
    },
  };
}

/** Reload through the pid file nats-server writes (`pid_file` in its config). */
export function signalReloadFromPidFile(pidFile: string): () => Promise<void> {
  return async () => {
    const pid = Number((await readFile(pidFile, 'utf8')).trim());
    if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no valid pid in ${pidFile}`);
    process.kill(pid, 'SIGHUP');
  };
}
