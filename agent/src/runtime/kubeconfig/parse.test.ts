import { describe, expect, it } from 'vitest';
import { parseKubeconfig } from './parse.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

const doc = (over: { cluster?: string; user?: string; extra?: string } = {}): string => `
apiVersion: v1
kind: Config
current-context: main
contexts:
  - name: main
    context: { cluster: c1, user: u1 }
  - name: other
    context: { cluster: c2 }
clusters:
  - name: c1
    cluster:
${over.cluster ?? `      server: https://10.0.0.1:6443\n      certificate-authority-data: ${b64('CA')}`}
  - name: c2
    cluster: { server: 'http://127.0.0.1:8080' }
users:
  - name: u1
    user:
${over.user ?? `      client-certificate: certs/client.crt\n      client-key: /abs/client.key`}
${over.extra ?? ''}`;

describe('parseKubeconfig', () => {
  it('reads the current context: server, inline CA, files resolved against the kubeconfig directory', () => {
    const c = parseKubeconfig(doc(), '/etc/kube/config');
    expect(c.context).toBe('main');
    expect(c.cluster).toMatchObject({ name: 'c1', server: 'https://10.0.0.1:6443', insecureSkipTlsVerify: false });
    expect(c.cluster.ca).toEqual({ data: Buffer.from('CA') });
    expect(c.user).toMatchObject({
      name: 'u1',
      cert: { file: '/etc/kube/certs/client.crt' },
      key: { file: '/abs/client.key' },
    });
    expect(c.user.plugin).toBeUndefined();
  });

  it('reads a named context, with no user', () => {
    const c = parseKubeconfig(doc(), '/k', 'other');
    expect(c.cluster.server).toBe('http://127.0.0.1:8080');
    expect(c.user.name).toBe('');
  });

  it('reads tokens, token files, basic auth, impersonation, TLS options and proxies', () => {
    const c = parseKubeconfig(
      doc({
        cluster: `      server: https://k\n      insecure-skip-tls-verify: true\n      tls-server-name: api.internal\n      proxy-url: http://proxy:3128`,
        user: `      token: abc\n      tokenFile: tok\n      username: ann\n      password: pw\n      as: system:admin`,
      }),
      '/d/kc',
    );
    expect(c.cluster).toMatchObject({
      insecureSkipTlsVerify: true,
      tlsServerName: 'api.internal',
      proxyUrl: 'http://proxy:3128',
    });
    expect(c.user).toMatchObject({
      token: 'abc',
      tokenFile: '/d/tok',
      username: 'ann',
      password: 'pw',
      impersonate: 'system:admin',
    });
  });

  it('marks users whose credentials come from a plugin', () => {
    expect(
      parseKubeconfig(doc({ user: '      exec: { command: aws, apiVersion: client.authentication.k8s.io/v1 }' }), '/k')
        .user.plugin,
    ).toBe('exec');
    expect(parseKubeconfig(doc({ user: '      auth-provider: { name: oidc }' }), '/k').user.plugin).toBe(
      'auth-provider',
    );
  });

  const refused: [string, string, string][] = [
    ['not YAML', 'a: [', '(document): not YAML'],
    ['a list document', '- a', '(document): not a mapping'],
    ['no current context', 'clusters: []', 'current-context: not set'],
    ['a missing context', 'current-context: nope\ncontexts: []', 'contexts: no entry named "nope"'],
    ['contexts not a list', 'current-context: x\ncontexts: {}', 'contexts: not a list'],
    [
      'a context without cluster',
      'current-context: x\ncontexts: [{ name: x, context: {} }]',
      'contexts[x].context.cluster: required',
    ],
  ];
  it.each(refused)('refuses %s naming the field', (_why, text, message) => {
    expect(() => parseKubeconfig(text, '/k')).toThrow(`kubeconfig /k: ${message}`);
  });

  const badEntries: [string, Parameters<typeof doc>[0], string][] = [
    [
      'a server that is no URL',
      { cluster: '      server: not a url' },
      'clusters[c1].cluster.server: "not a url" is not a URL',
    ],
    [
      'a server of another scheme',
      { cluster: '      server: ftp://x' },
      'clusters[c1].cluster.server: scheme ftp: is not http or https',
    ],
    ['a missing server', { cluster: '      tls-server-name: x' }, 'clusters[c1].cluster.server: required'],
    [
      'a non-boolean insecure flag',
      { cluster: '      server: https://k\n      insecure-skip-tls-verify: "yes"' },
      'clusters[c1].cluster.insecure-skip-tls-verify: must be true or false',
    ],
    [
      'CA file and data together',
      {
        cluster: `      server: https://k\n      certificate-authority: ca.crt\n      certificate-authority-data: ${b64('x')}`,
      },
      'clusters[c1].cluster.certificate-authority-data: set together with certificate-authority; keep one',
    ],
    [
      'CA data that is not base64',
      { cluster: '      server: https://k\n      certificate-authority-data: "%%%"' },
      'clusters[c1].cluster.certificate-authority-data: not base64',
    ],
    [
      'a certificate without key',
      { user: '      client-certificate: c.crt' },
      'users[u1].user.client-key: missing beside client-certificate',
    ],
    [
      'a key without certificate',
      { user: '      client-key: c.key' },
      'users[u1].user.client-certificate: missing beside client-key',
    ],
    [
      'a password without user name',
      { user: '      password: pw' },
      'users[u1].user.username: missing beside password',
    ],
    ['a token that is not a string', { user: '      token: [1]' }, 'users[u1].user.token: must be a string'],
  ];
  it.each(badEntries)('refuses %s naming the field', (_why, over, message) => {
    expect(() => parseKubeconfig(doc(over), '/k')).toThrow(`kubeconfig /k: ${message}`);
  });

  it('refuses a context naming a cluster that is not there', () => {
    const text = 'current-context: x\ncontexts: [{ name: x, context: { cluster: gone } }]\nclusters: []';
    expect(() => parseKubeconfig(text, '/k')).toThrow('kubeconfig /k: clusters: no entry named "gone"');
  });
});
