import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  desiredFilter,
  desiredSubject,
  heartbeatSubject,
  parseDesiredSubject,
  parseHeartbeatSubject,
  parseStatusSubject,
  statusSubject,
} from './subjects.js';

describe('protocol subjects', () => {
  it.each([
    [{ kind: 'CloneSet', namespace: 'apps', name: 'web' }, 'flotilla.desired.c1.CloneSet.apps.web'],
    [{ kind: 'CloneSet', namespace: 'team.a', name: 'web.v2' }, 'flotilla.desired.c1.CloneSet.team_a.web_v2'],
    [{ kind: 'SidecarSet', namespace: '', name: 'logging' }, 'flotilla.desired.c1.SidecarSet._.logging'],
  ])('encodes %o reversibly', (key, subject) => {
    expect(desiredSubject('c1', key)).toBe(subject);
    expect(parseDesiredSubject(subject)).toEqual({ cluster: 'c1', ...key });
    const status = statusSubject('c1', key);
    expect(parseStatusSubject(status)).toEqual({ cluster: 'c1', ...key });
    expect(parseDesiredSubject(status)).toBeUndefined();
  });

  it.each([
    'flotilla.desired.c1.CloneSet.apps',
    'flotilla.desired.C1.CloneSet.apps.web',
    'flotilla.desired.c1.CloneSet.apps.web.extra',
    'flotilla.desired.c1.Clone-Set.apps.web',
    'flotilla.desired.c1.CloneSet.Apps.web',
    'other.desired.c1.CloneSet.apps.web',
    // Only `_` stands for the empty namespace: one object, one subject.
    'flotilla.desired.c1.SidecarSet..logging',
  ])('rejects %s', (subject) => {
    expect(parseDesiredSubject(subject)).toBeUndefined();
    expect(parseStatusSubject(subject.replace('.desired.', '.status.'))).toBeUndefined();
  });

  it('parses only what it builds: parse then build gives the same subject', () => {
    const token = fc.constantFrom('', '_', 'a', 'a_b', 'a-b', 'A', '_a', 'a_', '__', 'web');
    const subject = fc
      .tuple(
        fc.constantFrom('desired', 'status'),
        fc.constantFrom('c1', 'C1', ''),
        fc.constantFrom('CloneSet', 'x-y'),
        token,
        token,
      )
      .map((t) => `flotilla.${t.join('.')}`);
    fc.assert(
      fc.property(subject, (s) => {
        const desired = parseDesiredSubject(s);
        if (desired) expect(desiredSubject(desired.cluster, desired)).toBe(s);
        const status = parseStatusSubject(s);
        if (status) expect(statusSubject(status.cluster, status)).toBe(s);
      }),
      { numRuns: 500, seed: 7 },
    );
  });

  it('refuses to build subjects from names that would break the grammar', () => {
    expect(() => desiredSubject('c1.evil', { kind: 'CloneSet', namespace: 'a', name: 'b' })).toThrow();
    expect(() => desiredSubject('c1', { kind: 'CloneSet', namespace: 'a', name: '>' })).toThrow();
    expect(() => desiredFilter('*')).toThrow();
  });

  it('parses heartbeats', () => {
    expect(parseHeartbeatSubject(heartbeatSubject('edge-7'))).toBe('edge-7');
    expect(parseHeartbeatSubject('flotilla.heartbeat.a.b')).toBeUndefined();
  });
});
