import type https from 'node:https';
import { describe, expect, it } from 'vitest';
import type { KubeconfigContext } from './parse.js';
import { inClusterContext, StaticKubeConfig, TOKEN_FILE_REREAD_MS } from './static-config.js';

function files(initial: Record<string, string>) {
  const content = { ...initial };
  const reads: string[] = [];
  const readFile = (file: string): Buffer => {
    reads.push(file);
    const v = content[file];
    if (v === undefined) throw new Error(`ENOENT ${file}`);
    return Buffer.from(v);
  };
  return { content, reads, readFile };
}

const context = (
  over: Partial<KubeconfigContext['user']> = {},
  cluster: Partial<KubeconfigContext['cluster']> = {},
): KubeconfigContext => ({
  context: 'main',
  cluster: { name: 'c', server: 'https://k:6443', insecureSkipTlsVerify: false, ca: { file: '/ca' }, ...cluster },
  user: { name: 'u', ...over },
});

describe('StaticKubeConfig', () => {
  it('fills CA, client certificate and key, re-reading their files on every call', async () => {
    const fs = files({ '/ca': 'CA1', '/c.crt': 'CERT1', '/c.key': 'KEY1' });
    const kc = new StaticKubeConfig(context({ cert: { file: '/c.crt' }, key: { file: '/c.key' } }), {
      readFile: fs.readFile,
    });
    const first: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(first);
    expect(first).toMatchObject({ ca: Buffer.from('CA1'), cert: Buffer.from('CERT1'), key: Buffer.from('KEY1') });
    expect(first.rejectUnauthorized).toBeUndefined();
    expect(first.headers).toBeUndefined();
    fs.content['/c.crt'] = 'CERT2';
    const second: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(second);
    expect(second.cert).toEqual(Buffer.from('CERT2'));
  });

  it('keeps the same cluster and user objects, so callers can cache by identity', () => {
    const kc = new StaticKubeConfig(context(), { readFile: files({}).readFile });
    expect(kc.getCurrentCluster()).toBe(kc.getCurrentCluster());
    expect(kc.getCurrentUser()).toBe(kc.getCurrentUser());
    expect(kc.getCurrentCluster()).toMatchObject({ server: 'https://k:6443' });
  });

  it('re-reads a token file once a minute and trims it', async () => {
    const fs = files({ '/ca': 'CA', '/tok': 'T1\n' });
    let now = 1_000;
    const kc = new StaticKubeConfig(context({ tokenFile: '/tok' }), { readFile: fs.readFile, now: () => now });
    const auth = async (): Promise<unknown> => {
      const o: https.RequestOptions = {};
      await kc.applyAuthorizationHeader(o);
      return (o.headers as Record<string, unknown> | undefined)?.['Authorization'];
    };
    expect(await auth()).toBe('Bearer T1');
    fs.content['/tok'] = 'T2';
    now += TOKEN_FILE_REREAD_MS - 1;
    expect(await auth()).toBe('Bearer T1');
    now += 1;
    expect(await auth()).toBe('Bearer T2');
    expect(fs.reads.filter((f) => f === '/tok')).toHaveLength(2);
  });

  it('applies a static token, basic auth, impersonation and the TLS options', async () => {
    const kc = new StaticKubeConfig(
      context(
        { token: 'abc', username: 'ann', password: 'pw', impersonate: 'bob' },
        { insecureSkipTlsVerify: true, tlsServerName: 'api', ca: undefined },
      ),
      { readFile: files({}).readFile },
    );
    const o: https.RequestOptions = { headers: { Accept: 'application/json' } };
    await kc.applyToHTTPSOptions(o);
    expect(o).toMatchObject({
      rejectUnauthorized: false,
      servername: 'api',
      auth: 'ann:pw',
      headers: { Accept: 'application/json', Authorization: 'Bearer abc', 'Impersonate-User': 'bob' },
    });
    expect(o.ca).toBeUndefined();
  });

  it('fails naming the file when a credential file is gone', async () => {
    const kc = new StaticKubeConfig(context(), { readFile: files({}).readFile });
    await expect(kc.applyToHTTPSOptions({})).rejects.toThrow('ENOENT /ca');
  });
});

describe('inClusterContext', () => {
  it('points at the service host over https with the mounted CA and token', () => {
    expect(inClusterContext({ KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, '/sa')).toEqual({
      context: 'in-cluster',
      cluster: {
        name: 'in-cluster',
        server: 'https://10.96.0.1:443',
        ca: { file: '/sa/ca.crt' },
        insecureSkipTlsVerify: false,
      },
      user: { name: 'service-account', tokenFile: '/sa/token' },
    });
  });

  it('brackets IPv6 hosts and speaks http on the insecure ports', () => {
    expect(
      inClusterContext({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }).cluster.server,
    ).toBe('https://[fd00::1]:443');
    expect(inClusterContext({ KUBERNETES_SERVICE_HOST: 'k', KUBERNETES_SERVICE_PORT: '8080' }).cluster.server).toBe(
      'http://k:8080',
    );
  });

  it('needs the service host and port', () => {
    expect(() => inClusterContext({ KUBERNETES_SERVICE_HOST: 'k' })).toThrow(
      'KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT',
    );
  });
});
