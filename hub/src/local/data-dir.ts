/**
 * The local hub's data directory: created private to its owner, stamped with the layout version
 * that wrote it (a newer layout is refused: this version might misread it), and locked by one
 * running `flotilla-hub` at a time (a lock file with its pid; a lock whose process is gone is
 * stale and taken over).
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { HubError } from '../errors.js';
import { processAlive } from './child.js';

/** Bumped when the directory's layout changes in a way older versions cannot read. */
export const DATA_DIR_LAYOUT = 1;
const VERSION_FILE = 'flotilla-hub.version';
const LOCK_FILE = 'hub.lock';

export interface DataDirVersion {
  layout: number;
}

/** 'new' for an unstamped directory, 'same' or 'older' (readable), or a refusal naming the directory. */
export function checkLayout(found: DataDirVersion | undefined, dir: string): 'new' | 'same' | 'older' {
  if (found === undefined) return 'new';
  if (found.layout > DATA_DIR_LAYOUT) {
    throw new HubError(
      'HUB_ERR_CONFIG',
      `data directory ${dir} was written by a newer flotilla-hub (layout ${found.layout}; this version reads up to ${DATA_DIR_LAYOUT}): upgrade flotilla-hub, or use another --data-dir`,
    );
  }
  return found.layout === DATA_DIR_LAYOUT ? 'same' : 'older';
}

/** Parses the version file's text; a file that is not ours is an error naming it. */
export function parseVersionFile(text: string, file: string): DataDirVersion {
  try {
    const parsed = JSON.parse(text) as { layout?: unknown };
    if (Number.isInteger(parsed.layout) && (parsed.layout as number) > 0) return { layout: parsed.layout as number };
  } catch {
    // Reported below.
  }
  throw new HubError('HUB_ERR_CONFIG', `${file} is not a flotilla-hub version file (expected {"layout": <n>})`);
}

function readVersion(dir: string): DataDirVersion | undefined {
  const file = path.join(dir, VERSION_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new HubError('HUB_ERR_CONFIG', `cannot read ${file}`, { cause: err });
  }
  return parseVersionFile(text, file);
}

/**
 * Creates the directory (mode 0700; 0711 when `traversable`, so the postgres system user a root
 * hub runs its database as can reach its own folder inside) and checks its layout.
 */
export function prepareDataDir(dir: string, traversable: boolean): 'new' | 'same' | 'older' {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (traversable) chmodSync(dir, 0o711);
  } catch (err) {
    throw new HubError('HUB_ERR_CONFIG', `cannot create the data directory ${dir}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return checkLayout(readVersion(dir), dir);
}

/** Stamps the directory with this version's layout (after the lock is held). */
export function stampDataDir(dir: string): void {
  writeFileSync(path.join(dir, VERSION_FILE), JSON.stringify({ layout: DATA_DIR_LAYOUT }) + '\n', { mode: 0o600 });
}

export interface DataDirLock {
  release(): void;
}

/** The pid a lock file holds, or undefined for anything else (a torn write). */
export function lockPid(text: string): number | undefined {
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

function readLockPid(file: string): number | undefined {
  try {
    return lockPid(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

function inUse(dir: string, pid: number): HubError {
  return new HubError(
    'HUB_ERR_CONFLICT',
    `data directory ${dir} is in use by another flotilla-hub (pid ${pid}); stop that one first, or give this one another --data-dir`,
  );
}

/** Takes the directory's lock, or refuses while the process holding it runs. */
export function lockDataDir(dir: string, alive: (pid: number) => boolean = processAlive): DataDirLock {
  const file = path.join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return {
        release() {
          // Only our own lock: a second command that was refused never removes it.
          if (readLockPid(file) === process.pid) rmSync(file, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new HubError('HUB_ERR_CONFIG', `cannot write the lock file ${file}: ${(err as Error).message}`);
      }
    }
    const holder = readLockPid(file);
    if (holder !== undefined && holder !== process.pid && alive(holder)) throw inUse(dir, holder);
    // Stale: the process that wrote it is gone.
    rmSync(file, { force: true });
  }
  throw new HubError('HUB_ERR_CONFLICT', `cannot take the lock ${file}: another flotilla-hub keeps taking it`);
}
