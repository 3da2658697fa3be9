import { describe, expect, it } from 'vitest';
import { isAtLeast, ResourceVersionExpectations, ScaleExpectations } from './expectations.js';
import { FakeClock } from './testing/fake-clock.js';

function scale() {
  const clock = new FakeClock();
  const expired: [string, string[]][] = [];
  const e = new ScaleExpectations({ clock, timeoutMs: 60_000, onExpired: (k, what) => expired.push([k, what]) });
  return { e, clock, expired };
}

describe('ScaleExpectations', () => {
  it('is satisfied with nothing expected', () => {
    expect(scale().e.satisfied('ns/cs')).toBe(true);
  });

  it('stays unsatisfied until every expected creation and deletion is observed', () => {
    const { e } = scale();
    e.expectCreations('ns/cs', ['cs-a', 'cs-b']);
    e.expectDeletions('ns/cs', ['cs-old']);
    expect(e.satisfied('ns/cs')).toBe(false);
    e.creationObserved('ns/cs', 'cs-a');
    e.creationObserved('ns/cs', 'cs-b');
    expect(e.satisfied('ns/cs')).toBe(false);
    expect(e.pending('ns/cs')).toEqual({ creations: [], deletions: ['cs-old'] });
    e.deletionObserved('ns/cs', 'cs-old');
    expect(e.satisfied('ns/cs')).toBe(true);
    expect(e.pending('ns/cs')).toEqual({ creations: [], deletions: [] });
  });

  it('keeps controller keys apart and ignores observations nobody expected', () => {
    const { e } = scale();
    e.expectCreations('ns/one', ['p']);
    e.creationObserved('ns/two', 'p');
    e.creationObserved('ns/one', 'other');
    expect(e.satisfied('ns/one')).toBe(false);
    expect(e.satisfied('ns/two')).toBe(true);
  });

  it('lowers expectations for writes that failed', () => {
    const { e } = scale();
    e.expectCreations('ns/cs', ['a', 'b', 'c']);
    e.creationObserved('ns/cs', 'a');
    e.lowerExpectations('ns/cs', { creations: ['b', 'c'] });
    expect(e.satisfied('ns/cs')).toBe(true);
    e.expectDeletions('ns/cs', ['x']);
    e.lowerExpectations('ns/cs', { deletions: ['x'] });
    expect(e.satisfied('ns/cs')).toBe(true);
  });

  it('gives expectations up after the timeout and reports them', () => {
    const { e, clock, expired } = scale();
    e.expectCreations('ns/cs', ['a']);
    clock.advance(30_000);
    e.expectDeletions('ns/cs', ['b']);
    clock.advance(29_999);
    expect(e.satisfied('ns/cs')).toBe(false);
    clock.advance(1);
    expect(e.satisfied('ns/cs')).toBe(false); // 'b' is only 30 s old
    expect(expired).toEqual([['ns/cs', ['create a']]]);
    clock.advance(30_000);
    expect(e.satisfied('ns/cs')).toBe(true);
    expect(expired.at(-1)).toEqual(['ns/cs', ['delete b']]);
  });

  it('forgets a controller key entirely on delete', () => {
    const { e } = scale();
    e.expectCreations('ns/cs', ['a']);
    e.delete('ns/cs');
    expect(e.satisfied('ns/cs')).toBe(true);
  });
});

describe('ResourceVersionExpectations', () => {
  const pod = (uid: string, rv: string) => ({ metadata: { uid, resourceVersion: rv } });

  it('waits until the cache shows each written object at least at the written version', () => {
    const e = new ResourceVersionExpectations();
    e.expectUpdated('ns/cs', pod('u1', '100'));
    e.expectUpdated('ns/cs', pod('u2', '105'));
    e.observed(pod('u1', '99'));
    expect(e.isSatisfied('ns/cs')).toBe(false);
    e.observed(pod('u1', '100'));
    e.observed(pod('u2', '200'));
    expect(e.isSatisfied('ns/cs')).toBe(true);
  });

  it('keeps the newest expected version of an object', () => {
    const e = new ResourceVersionExpectations();
    e.expectUpdated('ns/cs', pod('u1', '110'));
    e.expectUpdated('ns/cs', pod('u1', '100'));
    e.observed(pod('u1', '105'));
    expect(e.isSatisfied('ns/cs')).toBe(false);
  });

  it('is met by deletion of the object and expires after the timeout', () => {
    const clock = new FakeClock();
    const expired: string[][] = [];
    const e = new ResourceVersionExpectations({ clock, timeoutMs: 1000, onExpired: (_k, w) => expired.push(w) });
    e.expectUpdated('ns/a', pod('u1', '10'));
    e.deleted(pod('u1', '5'));
    expect(e.isSatisfied('ns/a')).toBe(true);
    e.expectUpdated('ns/b', pod('u2', '10'));
    e.expectUpdated('ns/b', { metadata: {} }); // nothing to wait for without uid and version
    clock.advance(1000);
    expect(e.isSatisfied('ns/b')).toBe(true);
    expect(expired).toEqual([['u2@10']]);
  });

  it('compares decimal versions numerically and others by equality', () => {
    expect(isAtLeast('10', '9')).toBe(true);
    expect(isAtLeast('9', '10')).toBe(false);
    expect(isAtLeast('123456789012345678901', '123456789012345678900')).toBe(true);
    expect(isAtLeast('abc', 'abc')).toBe(true);
    expect(isAtLeast('abd', 'abc')).toBe(false);
  });
});
