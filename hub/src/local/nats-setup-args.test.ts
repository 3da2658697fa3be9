import { describe, expect, it } from 'vitest';
import { parseCommand } from './args.js';
import { NATS_SETUP_USAGE, parseNatsSetup } from './nats-setup-args.js';

describe('parseNatsSetup', () => {
  it('defaults: resolver in /data/resolver, Secrets in flotilla and nats; --out resolved', () => {
    expect(parseNatsSetup(['--out', 'setup'])).toEqual({
      outDir: `${process.cwd()}/setup`,
      resolverDir: '/data/resolver',
      namespace: 'flotilla',
      natsNamespace: 'nats',
    });
  });

  it('takes every flag', () => {
    expect(
      parseNatsSetup(['--out', '/s', '--resolver-dir', '/nats/jwt', '--namespace', 'hub', '--nats-namespace', 'msg']),
    ).toEqual({ outDir: '/s', resolverDir: '/nats/jwt', namespace: 'hub', natsNamespace: 'msg' });
  });

  it('refuses a missing or empty --out, a relative --resolver-dir, a bad namespace, unknown flags', () => {
    expect(() => parseNatsSetup([])).toThrow('--out is required (see --help)');
    expect(() => parseNatsSetup(['--out', ' '])).toThrow('--out must not be empty');
    expect(() => parseNatsSetup(['--out', '/s', '--resolver-dir', 'jwt'])).toThrow(
      '--resolver-dir must be an absolute path, got "jwt"',
    );
    expect(() => parseNatsSetup(['--out', '/s', '--namespace', 'Not_A_Name'])).toThrow(
      '--namespace must be a Kubernetes namespace name, got "Not_A_Name"',
    );
    expect(() => parseNatsSetup(['--out', '/s', '--nats-namespace', ''])).toThrow('--nats-namespace must be');
    expect(() => parseNatsSetup(['--out', '/s', '--port', '1'])).toThrow(/nats-setup: .*--port.*\(see --help\)/);
  });

  it('is the `nats-setup` subcommand of flotilla-hub, with its own help', () => {
    expect(parseCommand(['nats-setup', '--out', '/s'], {})).toEqual({
      kind: 'nats-setup',
      options: { outDir: '/s', resolverDir: '/data/resolver', namespace: 'flotilla', natsNamespace: 'nats' },
    });
    expect(parseCommand(['nats-setup', '--help'], {})).toEqual({ kind: 'help', usage: NATS_SETUP_USAGE });
    expect(NATS_SETUP_USAGE).toContain('operator-identity.nk');
  });
});
