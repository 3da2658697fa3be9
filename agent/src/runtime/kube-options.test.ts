import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { kubeOptionsApplier } from './kube-options.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A kubeconfig whose CA and client certificate live in files, as in-cluster or kubelet-style. */
function fileBased(): { kc: KubeConfig; dir: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kube-options-'));
  dirs.push(dir);
  writeFileSync(path.join(dir, 'ca.crt'), 'ca-1');
  writeFileSync(path.join(dir, 'tls.crt'), 'cert-1');
  writeFileSync(path.join(dir, 'tls.key'), 'key-1');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://10.0.0.1', caFile: path.join(dir, 'ca.crt') }],
    users: [
      {
        name: 'u',
        token: 'token-1',
        certFile: path.join(dir, 'tls.crt'),
        keyFile: path.join(dir, 'tls.key'),
        impersonateUser: 'someone',
      },
      { name: 'v', token: 'other-user' },
    ],
    contexts: [
      { name: 'ctx', cluster: 'c', user: 'u' },
      { name: 'other', cluster: 'c', user: 'v' },
    ],
    currentContext: 'ctx',
  });
  return { kc, dir };
}

async function applied(applier: ReturnType<typeof kubeOptionsApplier>): Promise<https.RequestOptions> {
  const opts: https.RequestOptions = { method: 'GET', headers: { Accept: 'application/json' } };
  await applier.apply(opts);
  return opts;
}

describe('kubeOptionsApplier', () => {
  it('reads the TLS files once per refresh period and applies the token on every request', async () => {
    const { kc, dir } = fileBased();
    let t = 0;
    const applier = kubeOptionsApplier(kc, 10_000, () => t);
    const full = vi.spyOn(kc, 'applyToHTTPSOptions');
    const first = await applied(applier);
    expect(first).toMatchObject({
      method: 'GET',
      headers: { Accept: 'application/json', Authorization: 'Bearer token-1' },
    });
    expect(first.headers).toMatchObject({ 'Impersonate-User': 'someone' });
    expect(first.agent).toBeUndefined();
    expect(String(first.ca)).toBe('ca-1');
    expect(String(first.cert)).toBe('cert-1');

    // The token rotates; the files too, but they are only read again after the refresh period.
    (kc.users[0] as { token?: string }).token = 'token-2';
    writeFileSync(path.join(dir, 'ca.crt'), 'ca-2');
    t = 9_999;
    const second = await applied(applier);
    expect(second.headers).toMatchObject({ Authorization: 'Bearer token-2', 'Impersonate-User': 'someone' });
    expect(String(second.ca)).toBe('ca-1');
    expect((second.key as Buffer).toString()).toBe('key-1');
    expect(full).toHaveBeenCalledTimes(1);

    t = 10_000;
    expect(String((await applied(applier)).ca)).toBe('ca-2');
    expect(full).toHaveBeenCalledTimes(2);
  });

  it('applies everything again as soon as the current context changes', async () => {
    const { kc } = fileBased();
    const applier = kubeOptionsApplier(kc, 10_000, () => 0);
    await applied(applier);
    kc.setCurrentContext('other');
    const opts = await applied(applier);
    expect(opts.headers).toMatchObject({ Authorization: 'Bearer other-user' });
    expect(opts.headers).not.toHaveProperty('Impersonate-User');
    expect(opts.cert).toBeUndefined();
  });

  it('applies everything on every request with a refresh period of 0', async () => {
    const { kc } = fileBased();
    const applier = kubeOptionsApplier(kc, 0, () => 0);
    const full = vi.spyOn(kc, 'applyToHTTPSOptions');
    await applied(applier);
    await applied(applier);
    expect(full).toHaveBeenCalledTimes(2);
  });
});
