import { describe, expect, it } from 'vitest';
import {
  SIGNED_REQUEST_WINDOW_MS,
  newAgentKey,
  parseNkeyAuthorization,
  publicKeyOfSeed,
  signRequest,
  verifySignedRequest,
} from './signed-request.js';

const parts = { method: 'POST', path: '/api/v1/clusters/a/credentials/renew', body: {} };
const now = 1_800_000_000_000;

describe('signed credential requests', () => {
  const key = newAgentKey();
  const header = signRequest(key.seed, parts, now);
  const expect0 = { publicKey: key.publicKey, lastTs: now - 5000, now };

  it('verifies a request signed with the stored key', () => {
    expect(publicKeyOfSeed(key.seed)).toBe(key.publicKey);
    expect(parseNkeyAuthorization(header)).toMatchObject({ key: key.publicKey, ts: now });
    expect(verifySignedRequest(header, parts, expect0)).toEqual({ ok: true, ts: now });
  });

  it.each([
    ['another path', { ...parts, path: '/api/v1/clusters/b/credentials/renew' }],
    ['another method', { ...parts, method: 'PUT' }],
    ['another body', { ...parts, body: { publicKey: newAgentKey().publicKey } }],
  ])('refuses a signature moved to %s', (_name, moved) => {
    expect(verifySignedRequest(header, moved, expect0)).toEqual({ ok: false, reason: 'signature' });
  });

  it('refuses another key, a replay, a clock outside the window and malformed headers', () => {
    const other = newAgentKey();
    expect(verifySignedRequest(signRequest(other.seed, parts, now), parts, expect0).ok).toBe(false);
    expect(verifySignedRequest(header, parts, { ...expect0, lastTs: now })).toEqual({ ok: false, reason: 'replay' });
    expect(verifySignedRequest(header, parts, { ...expect0, now: now + SIGNED_REQUEST_WINDOW_MS + 1 })).toEqual({
      ok: false,
      reason: 'clock',
    });
    for (const bad of [undefined, '', 'Bearer x', 'Flotilla-NKey key=U, ts=1, sig=x', header.replace('ts=', 'ts=x')]) {
      expect(verifySignedRequest(bad, parts, expect0)).toEqual({ ok: false, reason: 'malformed' });
    }
    const sig = header.slice(header.indexOf('sig=') + 4);
    const flipped = header.replace(sig, (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
    expect(verifySignedRequest(flipped, parts, expect0)).toEqual({ ok: false, reason: 'signature' });
  });
});
