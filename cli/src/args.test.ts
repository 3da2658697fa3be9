import { describe, expect, it } from 'vitest';
import { parseCommandLine, type CommandSpec } from './args.js';
import { COMMANDS as commands } from './commands/index.js';
import { CliError } from './errors.js';

function usage(argv: string[]): CliError {
  try {
    parseCommandLine(argv, commands);
  } catch (err) {
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(2);
    return err as CliError;
  }
  throw new Error(`expected a usage error for ${argv.join(' ')}`);
}

function command(argv: string[]): {
  spec: CommandSpec<unknown>;
  positionals: string[];
  options: Record<string, unknown>;
} {
  const p = parseCommandLine(argv, commands);
  if (p.kind !== 'command') throw new Error('expected a command');
  return { spec: p.command as CommandSpec<unknown>, ...p.input };
}

describe('parseCommandLine', () => {
  it('finds the command and its arguments and flags, with global flags before or after', () => {
    const c = command(['--hub-url', 'http://h:1', 'clusters', 'list', '-l', 'env=prod', '-o', 'json']);
    expect([c.spec.group, c.spec.verb]).toEqual(['clusters', 'list']);
    expect(c.options).toMatchObject({ 'hub-url': 'http://h:1', selector: 'env=prod', output: 'json' });
    const l = command(['clusters', 'label', 'c1', 'env=prod', 'tier-', '--token=abc']);
    expect(l.positionals).toEqual(['c1', 'env=prod', 'tier-']);
    expect(l.options['token']).toBe('abc');
    expect(command(['-oyaml', 'tokens', 'list']).options['output']).toBe('yaml');
  });

  it('returns help for no command, a group, --help, and one command', () => {
    const all = parseCommandLine([], commands);
    expect(all.kind).toBe('help');
    expect(all.kind === 'help' && all.text).toContain('rollouts watch ID');
    const group = parseCommandLine(['rollouts', '--help'], commands);
    expect(group.kind === 'help' && group.text).not.toContain('clusters list');
    const one = parseCommandLine(['workloads', 'apply', '-h'], commands);
    expect(one.kind === 'help' && one.text).toContain('-f, --filename FILE');
    // A command's details follow its summary in its own help, not in the list.
    const revoke = parseCommandLine(['clusters', 'revoke', '--help'], commands);
    expect(revoke.kind === 'help' && revoke.text).toContain('Re-keying cannot be done from here');
    expect(all.kind === 'help' && all.text).not.toContain('Re-keying');
  });

  it('refuses unknown commands, flags and missing or extra arguments with exit code 2', () => {
    expect(usage(['fleet', 'list']).message).toContain('unknown command "fleet"');
    expect(usage(['clusters', 'lst']).message).toContain(
      'one of: list, get, accept, label, windows, prometheus, revoke, remove',
    );
    expect(usage(['clusters', 'get']).message).toContain('missing NAME');
    expect(usage(['clusters', 'get', 'a', 'b']).message).toContain('unexpected argument "b"');
    expect(usage(['clusters', 'list', '--bogus']).message).toContain("Unknown option '--bogus'");
    expect(usage(['--bogus', 'clusters', 'list']).message).toContain('unknown flag --bogus');
    expect(usage(['clusters', 'label', 'c1']).message).toContain('missing KEY=VALUE|KEY-...');
    expect(usage(['tokens', 'create', 'x', '--role']).message).toContain('--role');
  });
});
