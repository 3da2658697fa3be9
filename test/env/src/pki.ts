import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { run } from './exec.js';

/** One test CA per run; every cluster and every test webhook server trusts it. */
export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  /** PEM of the CA, for caBundle fields and TLS clients. */
  caPem: string;
  /** Serving certificate for 127.0.0.1/localhost, used by every apiserver. */
  serverCert: string;
  serverKey: string;
  saKey: string;
  saPub: string;
  tokensCsv: string;
  adminToken: string;
}

const openssl = (dir: string, args: string[]): Promise<string> => run('openssl', 'openssl', args, { cwd: dir });

/** A certificate authority: its files and PEM. */
export interface TestCa {
  dir: string;
  caCert: string;
  caKey: string;
  caPem: string;
}

/** A self-signed EC CA in `dir` (files `<file>.crt`, `<file>.key`). */
export async function createCa(dir: string, commonName: string, file = 'ca'): Promise<TestCa> {
  mkdirSync(dir, { recursive: true });
  await openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '3650',
    '-subj',
    `/CN=${commonName}`,
    '-keyout',
    `${file}.key`,
    '-out',
    `${file}.crt`,
  ]);
  const caCert = path.join(dir, `${file}.crt`);
  return { dir, caCert, caKey: path.join(dir, `${file}.key`), caPem: readFileSync(caCert, 'utf8') };
}

export async function createPki(dir: string): Promise<Pki> {
  const ca = await createCa(dir, 'flotilla-test-ca');
  const cert = await issueServingCert(ca, 'apiserver', [
    'IP:127.0.0.1',
    'DNS:localhost',
    'IP:10.0.0.1',
    'DNS:kubernetes',
    'DNS:kubernetes.default.svc',
  ]);
  await openssl(dir, ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'sa.key']);
  await openssl(dir, ['ec', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
  const adminToken = 'flotilla-admin-' + Math.random().toString(36).slice(2);
  const tokensCsv = path.join(dir, 'tokens.csv');
  writeFileSync(tokensCsv, `${adminToken},admin,admin-uid,"system:masters"\n`, { mode: 0o600 });
  return {
    dir,
    caCert: ca.caCert,
    caKey: ca.caKey,
    caPem: ca.caPem,
    serverCert: cert.cert,
    serverKey: cert.key,
    saKey: path.join(dir, 'sa.key'),
    saPub: path.join(dir, 'sa.pub'),
    tokensCsv,
    adminToken,
  };
}

/** A certificate and its key, as files and PEM. */
export interface IssuedCert {
  cert: string;
  key: string;
  certPem: string;
  keyPem: string;
}

/**
 * Issues a certificate signed by `ca` with the given subjectAltNames. `usage` is its extended key
 * usage: serving (the default), a client's, or both (a NATS route connects and accepts).
 */
export async function issueServingCert(
  ca: { dir: string; caCert: string; caKey: string },
  name: string,
  sans: string[],
  dir = ca.dir,
  usage: 'server' | 'client' | 'server+client' = 'server',
): Promise<IssuedCert> {
  mkdirSync(dir, { recursive: true });
  const ext = path.join(dir, `${name}.ext`);
  const eku = { server: 'serverAuth', client: 'clientAuth', 'server+client': 'serverAuth,clientAuth' }[usage];
  writeFileSync(ext, `subjectAltName=${sans.join(',')}\nextendedKeyUsage=${eku}\n`);
  await openssl(dir, [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
  ]);
  await openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    ca.caCert,
    '-CAkey',
    ca.caKey,
    '-CAcreateserial',
    '-days',
    '3650',
    '-extfile',
    ext,
    '-out',
    `${name}.crt`,
  ]);
  const cert = path.join(dir, `${name}.crt`);
  const key = path.join(dir, `${name}.key`);
  return { cert, key, certPem: readFileSync(cert, 'utf8'), keyPem: readFileSync(key, 'utf8') };
}
