import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { bool, duration, int, list, text } from './kinds.js';
import { addSettingOptions, settingHelp } from './options.js';
import { SettingsReader, type Flags } from './reader.js';
import type { SettingsTable } from './setting.js';

const TABLE = {
  port: { flag: 'some-port', env: ['SOME_PORT'], kind: int(1, 9), default: 5, help: 'a port' },
  wait: { flag: 'wait', kind: duration(), default: 120_000, help: 'how long' },
  ns: { flag: 'ns', env: ['NS', 'POD_NS'], kind: text('ns'), defaultHelp: 'default: --other', help: 'a namespace' },
  quiet: { flag: 'loud', negatable: true, env: ['LOUD'], kind: bool(), default: true, help: 'be quiet' },
  must: { flag: 'must', kind: text(), required: true, help: 'needed' },
  hidden: { env: ['ONLY_ENV'], kind: list(), help: 'read from the environment' },
} satisfies SettingsTable;

function command(): { cmd: Command; flags: () => Flags } {
  let got: Flags = {};
  const cmd = addSettingOptions(new Command('x'), [{ title: 'Things', settings: TABLE }])
    .exitOverride()
    .configureOutput({ writeErr: () => {}, writeOut: () => {} })
    .action((flags: Flags) => {
      got = flags;
    });
  return { cmd, flags: () => got };
}

describe('addSettingOptions', () => {
  it('describes each setting with its variables and default', () => {
    expect(settingHelp(TABLE.port)).toBe('a port ($SOME_PORT, default 5)');
    expect(settingHelp(TABLE.wait)).toBe('how long (default 2m)');
    expect(settingHelp(TABLE.ns)).toBe('a namespace ($NS, else $POD_NS, default: --other)');
    expect(settingHelp(TABLE.quiet)).toBe('be quiet ($LOUD=false)');
    expect(settingHelp(TABLE.must)).toBe('needed (required)');
    expect(settingHelp(TABLE.hidden, false)).toBe('read from the environment');
  });

  it('lists every flag under its heading, and the settings without one after the options', () => {
    const help = command().cmd.helpInformation();
    expect(help).toContain('Things options:');
    expect(help).toMatch(/--some-port <n> +a port \(\$SOME_PORT, default 5\)/);
    expect(help).toMatch(/--no-loud +be quiet/);
    expect(help).not.toContain('--hidden');
    const { cmd } = command();
    let out = '';
    cmd.configureOutput({ writeOut: (s) => (out += s) });
    expect(() => cmd.parse(['--help'], { from: 'user' })).toThrow();
    expect(out).toContain('Settings read only from the environment:\n  ONLY_ENV  read from the environment');
  });

  it('hands the flags over as given, for the reader to read', async () => {
    const { cmd, flags } = command();
    await cmd.parseAsync(['--some-port', '7', '--no-loud', '--must=m', '--ns', 'a'], { from: 'user' });
    expect(flags()).toEqual({ somePort: '7', loud: false, must: 'm', ns: 'a' });
    const reader = new SettingsReader(flags(), { SOME_PORT: '3' });
    expect(reader.read(TABLE)).toMatchObject({ port: 7, quiet: false, must: 'm', ns: 'a', wait: 120_000 });
    expect(reader.problems).toEqual([]);
  });

  it('refuses flags no table declares', async () => {
    await expect(command().cmd.parseAsync(['--bogus'], { from: 'user' })).rejects.toMatchObject({
      code: 'commander.unknownOption',
    });
  });
});
