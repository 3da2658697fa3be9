import path from 'node:path';
import { createCa, issueServingCert, type IssuedCert, type TestCa } from './pki.js';

/**
 * The certificates a NATS deployment needs, from one CA: the client listener's serving
 * certificate (also the HTTPS monitor's), the route certificate nodes present to each other
 * (server and client use: routes are mutual TLS) and a client certificate (only the refusal
 * tests use one: Flotilla's clients authenticate with NATS credentials, not certificates).
 */
export interface NatsPki {
  dir: string;
  ca: TestCa;
  server: IssuedCert;
  route: IssuedCert;
  client: IssuedCert;
}

const LOOPBACK_SANS = ['IP:127.0.0.1', 'DNS:localhost'];

/**
 * Creates a CA and the NATS certificates in `dir`. Called twice with different names it gives
 * the harness's CA and a foreign one that nothing trusts (for the negative tests).
 */
export async function createNatsPki(dir: string, caName = 'flotilla-nats-test-ca'): Promise<NatsPki> {
  const ca = await createCa(dir, caName);
  // One after the other: openssl keeps the CA's serial number in one file.
  const server = await issueServingCert(ca, 'nats-server', LOOPBACK_SANS, path.join(dir, 'server'));
  const route = await issueServingCert(ca, 'nats-route', LOOPBACK_SANS, path.join(dir, 'route'), 'server+client');
  const client = await issueServingCert(
    ca,
    'nats-client',
    ['DNS:flotilla-test-client'],
    path.join(dir, 'client'),
    'client',
  );
  return { dir, ca, server, route, client };
}
