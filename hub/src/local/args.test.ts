import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCommand, USAGE, type LocalOptions } from './args.js';

const run = (argv: string[], env: Record<string, string> = {}): LocalOptions => {
  const parsed = parseCommand(argv, env, '/home/ann', false);
  if (parsed.kind !== 'run') throw new Error(`expected run, got ${parsed.kind}`);
  return parsed.options;
};

describe('parseCommand', () => {
  it('defaults: ~/.flotilla/hub, loopback, 8080 and 4222, advertised as the listen address', () => {
    expect(run([])).toEqual({
      dataDir: '/home/ann/.flotilla/hub',
      host: '127.0.0.1',
      port: 8080,
      natsPort: 4222,
      advertise: '127.0.0.1',
      newAdminToken: false,
    });
  });

  it('takes every flag, and resolves a relative data directory', () => {
    const o = run([
      '--data-dir',
      'data',
      '--host',
      '10.0.0.5',
      '--port',
      '0',
      '--nats-port',
      '14222',
      '--advertise',
      'hub.lan',
      '--new-admin-token',
    ]);
    expect(o).toEqual({
      dataDir: path.resolve('data'),
      host: '10.0.0.5',
      port: 0,
      natsPort: 14222,
      advertise: 'hub.lan',
      newAdminToken: true,
    });
  });

  it('reads its defaults from the environment; a flag wins over it', () => {
    const env = { FLOTILLA_HUB_DATA_DIR: '/srv/hub', FLOTILLA_HUB_HOST: '10.1.1.1', FLOTILLA_HUB_PORT: '9000' };
    expect(run([], env)).toMatchObject({ dataDir: '/srv/hub', host: '10.1.1.1', port: 9000, advertise: '10.1.1.1' });
    expect(run(['--port', '9100', '--data-dir', '/x'], env)).toMatchObject({ dataDir: '/x', port: 9100 });
  });

  it('root keeps its data in /var/lib/flotilla-hub (PostgreSQL runs as the postgres user there)', () => {
    const parsed = parseCommand([], {}, '/root', true);
    expect(parsed).toMatchObject({ kind: 'run', options: { dataDir: '/var/lib/flotilla-hub' } });
  });

  it('advertises the hostname when listening on every address', () => {
    expect(run(['--host', '0.0.0.0']).advertise).toBe(os.hostname());
  });

  it('help and version', () => {
    expect(parseCommand(['-h'], {})).toEqual({ kind: 'help', usage: USAGE });
    expect(parseCommand(['--help'], {})).toEqual({ kind: 'help', usage: USAGE });
    expect(parseCommand(['--version'], {})).toEqual({ kind: 'version' });
  });

  it.each([
    [['--port', 'abc'], '--port must be an integer between 0 and 65535, got "abc"'],
    [['--port', '70000'], '--port must be an integer between 0 and 65535, got "70000"'],
    [['--nats-port', '0'], '--nats-port must be an integer between 1 and 65535, got "0"'],
    [['--data-dir', ' '], '--data-dir must not be empty'],
    [['--advertise', ''], '--advertise must not be empty'],
    [['--bogus'], "Unknown option '--bogus'"],
    [['serve'], 'serve'],
  ])('refuses %j, naming the flag', (argv, message) => {
    expect(() => parseCommand(argv, {})).toThrow(message);
  });

  it('names the variable when the environment is wrong', () => {
    expect(() => parseCommand([], { FLOTILLA_HUB_PORT: 'x' })).toThrow(
      'FLOTILLA_HUB_PORT must be an integer between 0 and 65535, got "x"',
    );
  });
});
