import { describe, expect, it } from 'vitest';
import { pullReference, toNodeImageRef } from './nodeimage.js';

const digest = `sha256:${'a'.repeat(64)}`;

describe('toNodeImageRef', () => {
  it.each([
    ['nginx', 'nginx', 'latest'],
    ['nginx:1.25', 'nginx', '1.25'],
    ['docker.io/library/nginx:1.25', 'nginx', '1.25'],
    ['index.docker.io/library/nginx', 'nginx', 'latest'],
    ['docker.io/user/app:v1', 'user/app', 'v1'],
    ['library/a/b:v1', 'library/a/b', 'v1'],
    ['127.0.0.1:5000/demo/tiny:v1', '127.0.0.1:5000/demo/tiny', 'v1'],
    ['localhost/demo:v2', 'localhost/demo', 'v2'],
    ['quay.io/org/img', 'quay.io/org/img', 'latest'],
    [`nginx@${digest}`, 'nginx', digest],
    [`reg.example.com/app:v1@${digest}`, 'reg.example.com/app', digest],
  ])('%s → %s : %s', (image, name, tag) => {
    expect(toNodeImageRef(image)).toEqual({ ok: true, name, tag });
  });

  it('rejects what is no image reference, with a reason', () => {
    expect(toNodeImageRef('Not An Image')).toMatchObject({ ok: false, reason: expect.any(String) });
    expect(toNodeImageRef('')).toMatchObject({ ok: false });
  });
});

describe('pullReference', () => {
  it('joins tags with a colon and digests with an at sign', () => {
    expect(pullReference('127.0.0.1:5000/demo/tiny', 'v1')).toEqual({ ok: true, ref: '127.0.0.1:5000/demo/tiny:v1' });
    expect(pullReference('nginx', digest)).toEqual({ ok: true, ref: `nginx@${digest}` });
  });

  it('names the bad reference when a hand-edited NodeImage holds nonsense', () => {
    const r = pullReference('no such/image!', 'v1');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toContain('"no such/image!:v1"');
  });
});
