import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadKubeCredentials } from './load.js';
import { StaticKubeConfig } from './static-config.js';

const dir = mkdtempSync(path.join(tmpdir(), 'kubeconfig-'));
const write = (name: string, user: string, cluster = ''): string => {
  const file = path.join(dir, name);
  writeFileSync(
    file,
    `current-context: x
contexts: [{ name: x, context: { cluster: c, user: u } }]
clusters: [{ name: c, cluster: { server: 'https://127.0.0.1:6443'${cluster} } }]
users: [{ name: u, user: ${user} }]
`,
  );
  return file;
};

describe('loadKubeCredentials', () => {
  it('keeps certificate and token users on the static reader, without client-node', async () => {
    const loaded = await loadKubeCredentials(write('static', '{ token: abc }'), {});
    expect(loaded.credentials).toBeInstanceOf(StaticKubeConfig);
    expect(loaded.delegatedBecause).toBeUndefined();
  });

  it('hands exec plugins and proxies to client-node, saying which field needs it', async () => {
    const exec = await loadKubeCredentials(
      write(
        'exec',
        '{ exec: { apiVersion: client.authentication.k8s.io/v1, command: /bin/true, interactiveMode: Never } }',
      ),
      {},
    );
    expect(exec.delegatedBecause).toBe('users[u].user.exec');
    expect(exec.credentials).not.toBeInstanceOf(StaticKubeConfig);
    expect(exec.credentials.getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
    const proxied = await loadKubeCredentials(
      write('proxy', '{ token: t }', ", proxy-url: 'http://127.0.0.1:3128'"),
      {},
    );
    expect(proxied.delegatedBecause).toBe('clusters[c].cluster.proxy-url');
    expect(proxied.credentials.getCurrentCluster()?.proxyUrl).toBe('http://127.0.0.1:3128');
    // Importing client-node's generated API takes seconds on a busy machine.
  }, 60_000);

  it('uses the service account inside a pod', async () => {
    const loaded = await loadKubeCredentials(undefined, {
      KUBERNETES_SERVICE_HOST: '10.0.0.1',
      KUBERNETES_SERVICE_PORT: '443',
    });
    expect(loaded.credentials.getCurrentCluster()?.server).toBe('https://10.0.0.1:443');
  });

  it('fails with a configuration error naming the file or the field', async () => {
    await expect(loadKubeCredentials(path.join(dir, 'absent'), {})).rejects.toMatchObject({
      code: 'AGENT_ERR_CONFIG',
      message: expect.stringContaining(`kubeconfig ${path.join(dir, 'absent')}: cannot read`),
    });
    await expect(loadKubeCredentials(write('bad', '{ client-key: k.key }'), {})).rejects.toThrow(
      'users[u].user.client-certificate: missing beside client-key',
    );
    await expect(loadKubeCredentials(undefined, {})).rejects.toMatchObject({ code: 'AGENT_ERR_CONFIG' });
  });
});
