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

export async function createPki(dir: string): Promise<Pki> {
  mkdirSync(dir, { recursive: true });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(dir, [
    'req',
    '-x509',
    ...ec,
    '-days',
    '3650',
    '-subj',
    '/CN=flotilla-test-ca',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
  ]);
  const cert = await issueServingCert(
    { dir, caCert: path.join(dir, 'ca.crt'), caKey: path.join(dir, 'ca.key') },
    'apiserver',
    ['IP:127.0.0.1', 'DNS:localhost', 'IP:10.0.0.1', 'DNS:kubernetes', 'DNS:kubernetes.default.svc'],
  );
  await openssl(dir, ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'sa.key']);
  await openssl(dir, ['ec', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
  const adminToken = 'flotilla-admin-' + Math.random().toString(36).slice(2);
  const tokensCsv = path.join(dir, 'tokens.csv');
  writeFileSync(tokensCsv, `${adminToken},admin,admin-uid,"system:masters"\n`, { mode: 0o600 });
  return {
    dir,
    caCert: path.join(dir, 'ca.crt'),
    caKey: path.join(dir, 'ca.key'),
    caPem: readFileSync(path.join(dir, 'ca.crt'), 'utf8'),
    serverCert: cert.cert,
    serverKey: cert.key,
    saKey: path.join(dir, 'sa.key'),
    saPub: path.join(dir, 'sa.pub'),
    tokensCsv,
    adminToken,
  };
}

/** Issues a serving certificate signed by the test CA with the given subjectAltNames. */
export async function issueServingCert(
  ca: { dir: string; caCert: string; caKey: string },
  name: string,
  sans: string[],
  dir = ca.dir,
): Promise<{ cert: string; key: string; certPem: string; keyPem: string }> {
  mkdirSync(dir, { recursive: true });
  const ext = path.join(dir, `${name}.ext`);
  writeFileSync(ext, `subjectAltName=${sans.join(',')}\nextendedKeyUsage=serverAuth\n`);
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
