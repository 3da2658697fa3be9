import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findOnPath, hostPort, localAddress, natsServerBinary, renderNatsConfig } from './nats.js';

describe('addresses', () => {
  it('brackets IPv6 addresses and reaches wildcards over loopback', () => {
    expect(hostPort('127.0.0.1', 4222)).toBe('127.0.0.1:4222');
    expect(hostPort('hub.lan', 8080)).toBe('hub.lan:8080');
    expect(hostPort('::1', 4222)).toBe('[::1]:4222');
    expect(localAddress('0.0.0.0')).toBe('127.0.0.1');
    expect(localAddress('::')).toBe('::1');
    expect(localAddress('10.0.0.5')).toBe('10.0.0.5');
  });
});

describe('renderNatsConfig', () => {
  it('TLS listener, JetStream and the resolver in the data directory, operator mode with its preload', () => {
    const text = renderNatsConfig({
      host: '127.0.0.1',
      port: 14222,
      dir: '/data/nats',
      files: {
        caFile: '/data/nats/tls/ca.crt',
        serverCertFile: '/data/nats/tls/server.crt',
        serverKeyFile: '/data/nats/tls/server.key',
        operatorJwt: 'eyJop',
        systemAccount: 'ASYS',
        preload: { ASYS: 'eyJsys', AHUB: 'eyJhub' },
      },
    });
    expect(text).toContain('listen: "127.0.0.1:14222"');
    expect(text).toContain(
      'tls { cert_file: "/data/nats/tls/server.crt", key_file: "/data/nats/tls/server.key", ca_file: "/data/nats/tls/ca.crt", timeout: 5 }',
    );
    expect(text).toContain('jetstream { store_dir: "/data/nats/jetstream" }');
    expect(text).toContain('operator: "eyJop"');
    expect(text).toContain('system_account: ASYS');
    expect(text).toContain('resolver { type: full, dir: "/data/nats/jwt", allow_delete: true, interval: "2m" }');
    expect(text).toContain('  AHUB: "eyJhub"');
    expect(text).toContain('pid_file: "/data/nats/nats-server.pid"');
  });
});

describe('natsServerBinary', () => {
  it('finds the first executable on PATH', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'flotilla-path-'));
    try {
      const plain = path.join(dir, 'a');
      const exec = path.join(dir, 'b');
      mkdirSync(plain);
      mkdirSync(exec);
      writeFileSync(path.join(plain, 'nats-server'), '');
      writeFileSync(path.join(exec, 'nats-server'), '#!/bin/sh\n');
      chmodSync(path.join(exec, 'nats-server'), 0o755);
      expect(findOnPath('nats-server', `${plain}:${exec}`)).toBe(path.join(exec, 'nats-server'));
      expect(natsServerBinary(`${plain}:${exec}`)).toBe(path.join(exec, 'nats-server'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names the program when it is missing, and the way around it', () => {
    expect(() => natsServerBinary('/nonexistent')).toThrow(/^nats-server was not found on PATH: .*set NATS_URL/);
    expect(() => natsServerBinary(undefined)).toThrow('nats-server was not found on PATH');
  });
});
