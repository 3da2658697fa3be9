import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, redactUrl } from './logger.js';

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

describe('redactUrl', () => {
  it('keeps the path and query keys, never a query value', () => {
    expect(redactUrl('/api/v1/clusters?token=flt_secret&limit=5&flag')).toBe(
      '/api/v1/clusters?token=[redacted]&limit=[redacted]&flag',
    );
    expect(redactUrl('/api/v1/clusters')).toBe('/api/v1/clusters');
    expect(redactUrl('/x?')).toBe('/x?');
  });
});
