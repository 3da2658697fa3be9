import { describe, expect, it } from 'vitest';
import { HubError } from '../errors.js';
import { decodeContinue, encodeContinue, type KeyPart } from './pagination.js';

const token = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

function refusal(raw: string, kinds: readonly KeyPart[]): HubError | undefined {
  try {
    decodeContinue(raw, kinds);
    return undefined;
  } catch (err) {
    return err as HubError;
  }
}

describe('decodeContinue', () => {
  it('round-trips the keys lists issue', () => {
    expect(decodeContinue(encodeContinue(['CloneSet', 'apps', 'web']), ['string', 'string', 'string'])).toEqual([
      'CloneSet',
      'apps',
      'web',
    ]);
    expect(decodeContinue(encodeContinue([41]), ['int32'])).toEqual([41]);
    const rolloutKey = ['2026-01-02T03:04:05.678Z', '0b7d6c1e-1f2a-4c3b-9d8e-7f6a5b4c3d2e'];
    expect(decodeContinue(encodeContinue(rolloutKey), ['timestamp', 'uuid'])).toEqual(rolloutKey);
    expect(decodeContinue(undefined, ['id'])).toBeUndefined();
    expect(decodeContinue('', ['id'])).toBeUndefined();
  });

  it.each<[string, unknown, readonly KeyPart[]]>([
    ['revision 2^31', [2 ** 31], ['int32']],
    ['revision 1e20', [1e20], ['int32']],
    ['negative revision', [-1], ['int32']],
    ['revision as a string', ['abc'], ['int32']],
    ['fractional id', [1.5], ['id']],
    ['id beyond 2^53', [2 ** 60], ['id']],
    ['audit id as a string', ['1 or 1=1'], ['id']],
    ['a timestamp that is not one', ['yesterday', '0b7d6c1e-1f2a-4c3b-9d8e-7f6a5b4c3d2e'], ['timestamp', 'uuid']],
    ['an impossible date', ['2026-13-45T99:99:99Z', '0b7d6c1e-1f2a-4c3b-9d8e-7f6a5b4c3d2e'], ['timestamp', 'uuid']],
    ['a uuid that is not one', ['2026-01-02T03:04:05.678Z', 'x'], ['timestamp', 'uuid']],
    ['a NUL in a name', ['a\u0000b'], ['string']],
    ['an object for a name', [{}], ['string']],
    ['too few parts', ['a'], ['string', 'string']],
    ['not an array', { a: 1 }, ['string']],
  ])('refuses %s with a 400 on continue', (_what, value, kinds) => {
    const err = refusal(token(value), kinds);
    expect(err).toBeInstanceOf(HubError);
    expect(err?.statusCode).toBe(400);
    expect(err?.details).toEqual([{ path: 'continue', message: 'is not a token this API issued' }]);
  });

  it('refuses text that is not base64url JSON', () => {
    expect(refusal('%%%not-base64', ['string'])?.statusCode).toBe(400);
  });
});
