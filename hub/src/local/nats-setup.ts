/**
 * `flotilla-hub nats-setup --out DIR`: generates a new operator-mode setup and writes it into a
 * new directory, all or nothing. The files go into a scratch directory beside DIR first, which is
 * then renamed to DIR: an interrupted run leaves no half setup behind, and a DIR that is not empty
 * (an earlier setup, perhaps in use) is never touched.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { HubError } from '../errors.js';
import { createOperatorInstall } from '../nats/auth/setup.js';
import type { NatsSetupOptions } from './nats-setup-args.js';
import { renderNextSteps, setupFiles } from './nats-setup-files.js';

/** Refuses an existing file or non-empty directory at `dir`. */
function checkOutDir(dir: string): void {
  let stat;
  try {
    stat = statSync(dir);
  } catch {
    return;
  }
  if (!stat.isDirectory()) throw new HubError('HUB_ERR_CONFIG', `--out ${dir} exists and is not a directory`);
  if (readdirSync(dir).length > 0) {
    throw new HubError(
      'HUB_ERR_CONFIG',
      `--out ${dir} already exists and is not empty; nats-setup makes a new operator and never overwrites ` +
        'an earlier setup (servers and a hub may be using it): give a new directory',
    );
  }
}

function writeAll(dir: string, files: Map<string, string>): void {
  for (const [rel, content] of files) {
    const file = path.join(dir, rel);
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, content, { mode: 0o600, flag: 'wx' });
    // The modes hold whatever the umask is.
    chmodSync(file, 0o600);
    chmodSync(path.dirname(file), 0o700);
  }
}

/** Writes the setup into `o.outDir`; returns the text to print (no secrets in it). */
export async function runNatsSetup(o: NatsSetupOptions): Promise<string> {
  checkOutDir(o.outDir);
  const parent = path.dirname(o.outDir);
  mkdirSync(parent, { recursive: true });
  const install = await createOperatorInstall();
  const scratch = mkdtempSync(path.join(parent, `.${path.basename(o.outDir)}.partial-`));
  try {
    chmodSync(scratch, 0o700);
    writeAll(scratch, setupFiles(install, o.resolverDir));
    checkOutDir(o.outDir);
    // Replaces only a missing or empty directory (rename fails on a non-empty one).
    renameSync(scratch, o.outDir);
  } catch (err) {
    rmSync(scratch, { recursive: true, force: true });
    throw err;
  }
  return renderNextSteps(o);
}
