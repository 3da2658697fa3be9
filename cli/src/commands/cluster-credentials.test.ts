import { describe, expect, it } from 'vitest';
import { credentialText, keyText } from './cluster-credentials.js';

const KEY = 'UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4';

describe('keyText', () => {
  it('shortens the public key, says <revoked> for an accepted cluster without one, - otherwise', () => {
    expect(keyText({ publicKey: KEY, state: 'accepted', acceptedAt: '2026-01-01T00:00:00Z' })).toBe('UDXU4RCS…CNF4');
    expect(keyText({ publicKey: null, state: 'accepted', acceptedAt: '2026-01-01T00:00:00Z' })).toBe('<revoked>');
    expect(keyText({ publicKey: null, state: 'removed', acceptedAt: '2026-01-01T00:00:00Z' })).toBe('-');
    expect(keyText({ publicKey: undefined, state: 'pending', acceptedAt: null })).toBe('-');
  });
});

describe('credentialText', () => {
  const now = new Date('2026-01-01T12:00:00Z');
  it('says when the JWT expires, or how long ago it did; - when none was issued', () => {
    expect(credentialText({ credentialsIssued: true, credentialExpiresAt: '2026-01-02T04:30:00Z' }, now)).toBe(
      'in 16h',
    );
    expect(credentialText({ credentialsIssued: true, credentialExpiresAt: '2026-01-01T11:55:00Z' }, now)).toBe(
      'expired 5m ago',
    );
    expect(credentialText({ credentialsIssued: true, credentialExpiresAt: '2026-01-01T12:00:30Z' }, now)).toBe(
      'in 30s',
    );
    expect(credentialText({ credentialsIssued: false, credentialExpiresAt: '2026-01-02T00:00:00Z' }, now)).toBe('-');
    expect(credentialText({ credentialsIssued: true, credentialExpiresAt: null }, now)).toBe('-');
  });
});
