import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { formatFieldError } from '../validation/field-error.js';
import { defaultKruiseObject, type KruiseObject, validateKruiseObject } from './validate.js';

const testdata = join(import.meta.dirname, 'testdata');
const read = (dir: string): Array<[string, string]> =>
  readdirSync(join(testdata, dir))
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => [f, readFileSync(join(testdata, dir, f), 'utf8')]);

interface Expectation {
  path: string;
  message: string;
}

/** `# expect-path:` / `# expect-message:` comment pairs at the top of an invalid manifest. */
function expectations(text: string): Expectation[] {
  const paths = [...text.matchAll(/^# expect-path: (.*)$/gm)].map((m) => (m[1] ?? '').trim());
  const messages = [...text.matchAll(/^# expect-message: (.*)$/gm)].map((m) => (m[1] ?? '').trim());
  expect(paths.length, 'every expect-path needs an expect-message').toBe(messages.length);
  return paths.map((path, i) => ({ path, message: messages[i] ?? '' }));
}

const valid = read('valid');
const invalid = read('invalid');

describe('manifests written as in the OpenKruise documentation', () => {
  it('cover every kind with at least 15 manifests', () => {
    expect(valid.length).toBeGreaterThanOrEqual(15);
    const kinds = new Set(valid.map(([, text]) => (parse(text) as { kind: string }).kind));
    expect([...kinds].sort()).toEqual([
      'BroadcastJob',
      'CloneSet',
      'ContainerRecreateRequest',
      'DaemonSet',
      'ImagePullJob',
      'NodeImage',
      'PodUnavailableBudget',
      'SidecarSet',
      'StatefulSet',
      'WorkloadSpread',
    ]);
  });

  it.each(valid)('%s is accepted unchanged', (_file, text) => {
    expect(validateKruiseObject(parse(text)).map(formatFieldError)).toEqual([]);
  });

  it.each(valid)('%s stays valid after defaulting, and defaulting twice changes nothing', (_file, text) => {
    const defaulted = defaultKruiseObject(parse(text) as KruiseObject);
    expect(validateKruiseObject(defaulted).map(formatFieldError)).toEqual([]);
    expect(defaultKruiseObject(defaulted)).toEqual(defaulted);
  });
});

describe('invalid manifests', () => {
  it('number at least 25, each with an expected field path and message', () => {
    expect(invalid.length).toBeGreaterThanOrEqual(25);
    for (const [file, text] of invalid) expect(expectations(text).length, file).toBeGreaterThan(0);
  });

  it('hold at least 10 for each kind the agent added after CloneSet (issue #25)', () => {
    const perKind = new Map<string, number>();
    for (const [, text] of invalid) {
      const kind = (parse(text) as { kind?: string }).kind ?? '';
      perKind.set(kind, (perKind.get(kind) ?? 0) + 1);
    }
    for (const kind of ['DaemonSet', 'StatefulSet', 'BroadcastJob', 'ContainerRecreateRequest']) {
      expect(perKind.get(kind) ?? 0, kind).toBeGreaterThanOrEqual(10);
    }
  });

  it.each(invalid)('%s is rejected at the expected field with a readable message', (_file, text) => {
    const errors = validateKruiseObject(parse(text));
    for (const { path, message } of expectations(text)) {
      const atPath = errors.filter((e) => e.path === path);
      expect(atPath.map(formatFieldError), `errors: ${errors.map(formatFieldError).join('; ')}`).not.toEqual([]);
      expect(
        atPath.some((e) => e.message.includes(message)),
        `${path} ∌ ${message}; got ${atPath.map((e) => e.message).join('; ')}`,
      ).toBe(true);
    }
  });
});
