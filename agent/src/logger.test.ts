import { describe, expect, it } from 'vitest';
import { createRootLogger } from './logger.js';

describe('root logger', () => {
  it('redacts tokens, passwords and credentials wherever they are logged', () => {
    const lines: string[] = [];
    const log = createRootLogger('info', { write: (line: string) => void lines.push(line) });
    log.info({ token: 't0p', user: { name: 'a', password: 'pw' }, headers: { authorization: 'Bearer x' } }, 'one');
    log.child({ credentials: { user: 'u', pass: 'p' } }).info({ nats: { pass: 'p2' } }, 'two');
    const text = lines.join('');
    for (const secret of ['t0p', '"pw"', 'Bearer x', '"p"', 'p2']) expect(text).not.toContain(secret);
    expect(text).toContain('[redacted]');
    expect(text).toContain('"name":"a"');
    log.debug('not at info');
    expect(lines).toHaveLength(2);
  });
});
