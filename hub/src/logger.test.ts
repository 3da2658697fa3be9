import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';

describe('createLogger', () => {
  it('redacts secrets wherever they appear', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const log = createLogger('info', sink);
    log.info(
      {
        req: { headers: { authorization: 'Bearer flt_secret-token' } },
        creds: { password: 'nats-password', token: 'flt_other' },
        registrationSecret: 'flreg_x',
      },
      'hello',
    );
    const out = lines.join('');
    for (const secret of ['flt_secret-token', 'nats-password', 'flt_other', 'flreg_x']) {
      expect(out).not.toContain(secret);
    }
    expect(out).toContain('[redacted]');
  });
});
