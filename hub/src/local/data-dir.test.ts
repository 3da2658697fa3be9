import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DATA_DIR_LAYOUT,
  checkLayout,
  lockDataDir,
  lockPid,
  parseVersionFile,
  prepareDataDir,
  stampDataDir,
} from './data-dir.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'flotilla-data-dir-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('layout version', () => {
  it('a new directory, the same layout, an older one', () => {
    expect(checkLayout(undefined, '/d')).toBe('new');
    expect(checkLayout({ layout: DATA_DIR_LAYOUT }, '/d')).toBe('same');
    if (DATA_DIR_LAYOUT > 1) expect(checkLayout({ layout: DATA_DIR_LAYOUT - 1 }, '/d')).toBe('older');
  });

  it('refuses a directory a newer version wrote, naming it', () => {
    expect(() => checkLayout({ layout: DATA_DIR_LAYOUT + 1 }, '/srv/hub')).toThrow(
      `data directory /srv/hub was written by a newer flotilla-hub (layout ${DATA_DIR_LAYOUT + 1}; this version reads up to ${DATA_DIR_LAYOUT})`,
    );
  });

  it('a version file that is not ours is an error naming the file', () => {
    expect(parseVersionFile('{"layout": 3}', 'f')).toEqual({ layout: 3 });
    for (const text of ['', 'nope', '{"layout": "1"}', '{"layout": 0}']) {
      expect(() => parseVersionFile(text, '/d/flotilla-hub.version')).toThrow(
        '/d/flotilla-hub.version is not a flotilla-hub version file',
      );
    }
  });

  it('prepareDataDir creates the directory private, and stampDataDir makes it "same"', () => {
    const dir = path.join(root, 'a', 'hub');
    expect(prepareDataDir(dir, false)).toBe('new');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    stampDataDir(dir);
    expect(prepareDataDir(dir, true)).toBe('same');
    expect(statSync(dir).mode & 0o777).toBe(0o711);
    writeFileSync(path.join(dir, 'flotilla-hub.version'), JSON.stringify({ layout: DATA_DIR_LAYOUT + 1 }));
    expect(() => prepareDataDir(dir, false)).toThrow('was written by a newer flotilla-hub');
  });
});

describe('lock', () => {
  it('lockPid reads a pid and nothing else', () => {
    expect(lockPid('123\n')).toBe(123);
    expect(lockPid('')).toBeUndefined();
    expect(lockPid('x')).toBeUndefined();
    expect(lockPid('-4')).toBeUndefined();
  });

  it('holds the directory: a second lock is refused while the holder lives, naming its pid', () => {
    const lock = lockDataDir(root);
    expect(readFileSync(path.join(root, 'hub.lock'), 'utf8')).toBe(`${process.pid}\n`);
    writeFileSync(path.join(root, 'hub.lock'), '4242\n');
    expect(() => lockDataDir(root, (pid) => pid === 4242)).toThrow(
      `data directory ${root} is in use by another flotilla-hub (pid 4242)`,
    );
    // A refused command never removes the holder's lock.
    expect(readFileSync(path.join(root, 'hub.lock'), 'utf8')).toBe('4242\n');
    lock.release();
    expect(readFileSync(path.join(root, 'hub.lock'), 'utf8')).toBe('4242\n');
  });

  it('takes over a stale lock whose process is gone, and release removes it', () => {
    writeFileSync(path.join(root, 'hub.lock'), '4242\n');
    const lock = lockDataDir(root, () => false);
    expect(readFileSync(path.join(root, 'hub.lock'), 'utf8')).toBe(`${process.pid}\n`);
    lock.release();
    expect(() => statSync(path.join(root, 'hub.lock'))).toThrow();
  });
});
