import { describe, expect, it } from 'vitest';
import { registryAuths, type PullSecret } from './auth.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

function dockerConfigJson(name: string, auths: Record<string, unknown>): PullSecret {
  return {
    metadata: { namespace: 'cfg', name },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) },
  };
}

describe('registryAuths', () => {
  it('matches the registry host and port and decodes the auth field', () => {
    const secret = dockerConfigJson('s', {
      '127.0.0.1:5000': { auth: b64('alice:pa:ss') },
      'other.example.com': { username: 'bob', password: 'x' },
    });
    expect(registryAuths([secret], '127.0.0.1:5000/demo/app:v1')).toEqual({
      auths: [{ username: 'alice', password: 'pa:ss' }],
      problems: [],
    });
    expect(registryAuths([secret], '127.0.0.1:5001/demo/app:v1').auths).toEqual([]);
  });

  it('knows Docker Hub under all its names, and familiar image names live there', () => {
    const secret = dockerConfigJson('hub', { 'https://index.docker.io/v1/': { username: 'u', password: 'p' } });
    expect(registryAuths([secret], 'nginx:1.25').auths).toHaveLength(1);
    expect(registryAuths([secret], 'docker.io/library/nginx:1.25').auths).toHaveLength(1);
    expect(registryAuths([secret], 'quay.io/nginx:1').auths).toHaveLength(0);
  });

  it('puts entries with a longer path prefix first and skips prefixes that do not apply', () => {
    const secret = dockerConfigJson('s', {
      'reg.example.com': { username: 'any', password: '1' },
      'reg.example.com/team/app': { username: 'exact', password: '2' },
      'reg.example.com/other': { username: 'nope', password: '3' },
    });
    expect(registryAuths([secret], 'reg.example.com/team/app:v1').auths.map((a) => a.username)).toEqual([
      'exact',
      'any',
    ]);
  });

  it('reads the legacy .dockercfg format', () => {
    const legacy: PullSecret = {
      metadata: { namespace: 'cfg', name: 'old' },
      data: { '.dockercfg': b64(JSON.stringify({ 'reg.example.com': { username: 'u', password: 'p' } })) },
    };
    expect(registryAuths([legacy], 'reg.example.com/app').auths).toEqual([{ username: 'u', password: 'p' }]);
  });

  it('reports unreadable secrets instead of failing, and keeps the good ones', () => {
    const bad: PullSecret = {
      metadata: { namespace: 'cfg', name: 'bad' },
      data: { '.dockerconfigjson': b64('{oops') },
    };
    const empty: PullSecret = { metadata: { namespace: 'cfg', name: 'empty' }, data: { token: 'x' } };
    const good = dockerConfigJson('good', { 'reg.example.com': { username: 'u', password: 'p' } });
    const { auths, problems } = registryAuths([bad, empty, good], 'reg.example.com/app:v1');
    expect(auths).toHaveLength(1);
    expect(problems).toEqual([
      { secret: 'cfg/bad', reason: '.dockerconfigjson is not valid base64-encoded JSON' },
      { secret: 'cfg/empty', reason: 'has neither .dockerconfigjson nor .dockercfg' },
    ]);
  });
});
