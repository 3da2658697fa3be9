/**
 * Harness ports are unique across the processes of a run: two processes asking at the same time
 * never get the same port, and neither does one process asking many times.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freePort } from '@flotilla/test';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const COUNT = 150;

describe('freePort', () => {
  it('hands out distinct ports to this process and to another one asking at the same time', async () => {
    const script = `import { freePort } from './test/env/src/ports.ts';
      const out = []; for (let i = 0; i < ${COUNT}; i++) out.push(await freePort());
      console.log(JSON.stringify(out));`;
    const other = promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
    });
    const mine: number[] = [];
    for (let i = 0; i < COUNT; i++) mine.push(await freePort());
    const theirs = JSON.parse((await other).stdout) as number[];
    expect(new Set(mine).size).toBe(COUNT);
    expect(new Set(theirs).size).toBe(COUNT);
    expect(mine.filter((p) => theirs.includes(p))).toEqual([]);
  });
});
