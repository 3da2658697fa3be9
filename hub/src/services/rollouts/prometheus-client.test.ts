import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { accessOf } from './prometheus-client.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'flotilla-prometheus-access-'));
writeFileSync(path.join(dir, 'token'), 't0ken\n');
writeFileSync(path.join(dir, 'username'), 'flotilla\n');
writeFileSync(path.join(dir, 'password'), ' s3cret:with colon \n');
writeFileSync(path.join(dir, 'bad-username'), 'a:b');
writeFileSync(path.join(dir, 'ca.pem'), '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n');
const url = 'https://prom:9090';

describe("access to a cluster's Prometheus, by reference", () => {
  it('needs nothing without references', async () => {
    expect(await accessOf({ url }, undefined)).toEqual({});
  });

  it('reads a bearer token, or basic auth as Authorization: Basic, trimmed like Prometheus does', async () => {
    expect(await accessOf({ url, tokenRef: 'token' }, dir)).toEqual({ authorization: 'Bearer t0ken' });
    const basic = await accessOf({ url, basicAuth: { usernameRef: 'username', passwordRef: 'password' } }, dir);
    expect(basic).toEqual({ authorization: `Basic ${Buffer.from('flotilla:s3cret:with colon').toString('base64')}` });
  });

  it('reads the CA bundle', async () => {
    const access = await accessOf({ url, caRef: 'ca.pem' }, dir);
    expect(access).toEqual({ ca: expect.stringContaining('BEGIN CERTIFICATE') });
  });

  it('names the reference, never the content, when a file is missing or unusable', async () => {
    const missing = { url, basicAuth: { usernameRef: 'username', passwordRef: 'nope' } };
    expect(await accessOf(missing, dir)).toEqual({
      error: 'basic-auth password "nope" is not readable in FLOTILLA_PROMETHEUS_SECRETS_DIR',
    });
    expect(await accessOf({ url, caRef: 'ca.pem' }, undefined)).toEqual({
      error: 'CA bundle "ca.pem" given, but FLOTILLA_PROMETHEUS_SECRETS_DIR is not set',
    });
    const colon = await accessOf({ url, basicAuth: { usernameRef: 'bad-username', passwordRef: 'password' } }, dir);
    expect(colon).toEqual({ error: 'basic-auth username "bad-username" contains ":"' });
    expect(JSON.stringify(colon)).not.toContain('s3cret');
  });
});
