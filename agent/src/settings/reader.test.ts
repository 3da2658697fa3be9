import { describe, expect, it } from 'vitest';
import { bool, int, list, text } from './kinds.js';
import { SettingsReader, settingName, type ConfigHost } from './reader.js';
import type { SettingsTable } from './setting.js';

const host: ConfigHost = { hostname: () => 'node-a', fileExists: () => true, readFile: () => '' };

const TABLE = {
  port: { flag: 'some-port', env: ['SOME_PORT', 'OTHER_PORT'], kind: int(1, 9), default: 5, help: 'a port' },
  name: { flag: 'some-name', kind: text(), help: 'a name' },
  items: { flag: 'items', env: ['ITEMS'], kind: list(), default: ['*'], help: 'items' },
  quiet: { flag: 'loud', negatable: true, env: ['LOUD'], kind: bool(), default: true, help: 'be quiet' },
  must: { env: ['MUST'], kind: text(), required: true, help: 'required' },
} satisfies SettingsTable;

function read(flags: Record<string, string | boolean>, env: Record<string, string>) {
  const reader = new SettingsReader(flags, env, host);
  return { values: reader.read(TABLE), problems: reader.problems, reader };
}

describe('SettingsReader', () => {
  it('takes the flag, else the variables in order, else the default', () => {
    expect(read({ somePort: '1' }, { SOME_PORT: '2', OTHER_PORT: '3', MUST: 'x' }).values.port).toBe(1);
    expect(read({}, { SOME_PORT: '2', OTHER_PORT: '3', MUST: 'x' }).values.port).toBe(2);
    expect(read({}, { OTHER_PORT: '3', MUST: 'x' }).values.port).toBe(3);
    expect(read({}, { MUST: 'x' }).values).toEqual({ port: 5, name: undefined, items: ['*'], quiet: true, must: 'x' });
  });

  it('trims, and counts a blank text as not given unless the kind reads it', () => {
    expect(read({ somePort: ' ' }, { SOME_PORT: '', OTHER_PORT: ' 4 ', MUST: 'x' }).values.port).toBe(4);
    expect(read({ someName: '  n ' }, { MUST: 'x' }).values.name).toBe('n');
    expect(read({}, { ITEMS: '', MUST: 'x' }).values.items).toEqual([]);
    expect(read({ items: 'a' }, { ITEMS: '', MUST: 'x' }).values.items).toEqual(['a']);
  });

  it('reads a --no-* switch as false only when given, and its variable otherwise', () => {
    expect(read({ loud: true }, { MUST: 'x' }).values.quiet).toBe(true);
    expect(read({ loud: false }, { LOUD: 'true', MUST: 'x' }).values.quiet).toBe(false);
    expect(read({ loud: true }, { LOUD: 'false', MUST: 'x' }).values.quiet).toBe(false);
  });

  it('names the flag and the variable the text came from in every problem, and keeps the default', () => {
    const { values, problems } = read({ loud: true }, { OTHER_PORT: '10', LOUD: 'no' });
    expect(values.port).toBe(5);
    expect(problems).toEqual([
      '--some-port (OTHER_PORT): must be an integer 1-9, got "10"',
      '--loud (LOUD): must be true or false, got "no"',
      'MUST: required',
    ]);
    expect(read({ somePort: '0' }, { MUST: 'x' }).problems).toEqual([
      '--some-port (SOME_PORT): must be an integer 1-9, got "0"',
    ]);
  });

  it('gives every configuration its own copy of a default', () => {
    const a = read({}, { MUST: 'x' }).values.items;
    a.push('changed');
    expect(read({}, { MUST: 'x' }).values.items).toEqual(['*']);
  });

  it('tells whether a setting is given, records checks, and fails naming every problem', () => {
    const { reader } = read({ someName: 'n' }, {});
    expect(reader.given(TABLE.name)).toBe(true);
    expect(reader.given(TABLE.port)).toBe(false);
    reader.problem(TABLE.port, 'must be odd');
    expect(() => reader.check('AGENT_ERR_CONFIG', 'invalid: ')).toThrow(
      expect.objectContaining({
        code: 'AGENT_ERR_CONFIG',
        message: 'invalid: MUST: required; --some-port (SOME_PORT): must be odd',
      }),
    );
    expect(() => read({}, { MUST: 'x' }).reader.check('AGENT_ERR_CONFIG')).not.toThrow();
  });

  it('names a setting by its flag and first variable', () => {
    expect(settingName(TABLE.port)).toBe('--some-port (SOME_PORT)');
    expect(settingName(TABLE.port, 'OTHER_PORT')).toBe('--some-port (OTHER_PORT)');
    expect(settingName(TABLE.name)).toBe('--some-name');
    expect(settingName(TABLE.must)).toBe('MUST');
  });
});
