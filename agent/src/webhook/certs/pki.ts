/**
 * Issuing the webhook's certificates with @peculiar/x509 on Node's WebCrypto (Node has no API to
 * issue X.509 certificates): a self-signed CA and serving certificates it signs, ECDSA P-256 with
 * SHA-256. Keys travel as PKCS#8 PEM. Nothing here logs or returns key material except to the caller.
 */
import './reflect-polyfill.js';
import { webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';
import { AgentError } from '../../errors.js';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const crypto = webcrypto;
x509.cryptoProvider.set(crypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
/** Certificates start a little in the past so clocks that lag behind ours still accept them. */
export const BACKDATE_MS = 5 * 60_000;

export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

/** What a stored certificate says about itself. */
export interface CertInfo {
  notBefore: number;
  notAfter: number;
  /** DNS names and IP addresses of the SAN extension. */
  hosts: string[];
  /** Hex serial number. */
  serial: string;
  subject: string;
  issuer: string;
}

function randomSerial(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0]! &= 0x7f; // positive
  return Buffer.from(bytes).toString('hex');
}

async function exportKey(key: CryptoKey): Promise<string> {
  const der = await crypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

async function importSigningKey(keyPem: string): Promise<CryptoKey> {
  try {
    const der = x509.PemConverter.decodeFirst(keyPem);
    return await crypto.subtle.importKey('pkcs8', der, ALGORITHM, false, ['sign']);
  } catch (err) {
    throw new AgentError('WEBHOOK_ERR_CERT_PARSE', 'the CA private key cannot be read', { cause: err });
  }
}

const newKeys = (): Promise<CryptoKeyPair> => crypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);

/** A self-signed CA valid from now (minus a small backdate) for `validityMs`. */
export async function createCa(commonName: string, now: number, validityMs: number): Promise<KeyPairPem> {
  try {
    const keys = await newKeys();
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: randomSerial(),
      name: `CN=${commonName}`,
      notBefore: new Date(now - BACKDATE_MS),
      notAfter: new Date(now + validityMs),
      keys,
      signingAlgorithm: ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    return { certPem: cert.toString('pem'), keyPem: await exportKey(keys.privateKey) };
  } catch (err) {
    throw new AgentError('WEBHOOK_ERR_CERT_ISSUE', `cannot create CA ${commonName}`, { cause: err });
  }
}

/**
 * A serving certificate for `hosts` (DNS names and IP addresses; Go ignores the CN) signed by
 * `ca`, valid for `validityMs` but never past the CA's own expiry.
 */
export async function createServingCert(
  ca: KeyPairPem,
  hosts: readonly string[],
  now: number,
  validityMs: number,
): Promise<KeyPairPem> {
  const signingKey = await importSigningKey(ca.keyPem);
  try {
    const caCert = new x509.X509Certificate(ca.certPem);
    const keys = await newKeys();
    const notAfter = Math.min(now + validityMs, caCert.notAfter.getTime());
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: randomSerial(),
      subject: `CN=${hosts[0] ?? 'flotilla-webhook'}`,
      issuer: caCert.subject,
      notBefore: new Date(now - BACKDATE_MS),
      notAfter: new Date(notAfter),
      publicKey: keys.publicKey,
      signingKey,
      signingAlgorithm: ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension(
          hosts.map((h) => (isIP(h) ? { type: 'ip' as const, value: h } : { type: 'dns' as const, value: h })),
        ),
        await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey),
      ],
    });
    return { certPem: cert.toString('pem'), keyPem: await exportKey(keys.privateKey) };
  } catch (err) {
    throw new AgentError('WEBHOOK_ERR_CERT_ISSUE', `cannot issue a serving certificate for ${hosts.join(', ')}`, {
      cause: err,
    });
  }
}

/** Reads validity, SANs and names of a PEM certificate; throws WEBHOOK_ERR_CERT_PARSE. */
export function certInfo(certPem: string): CertInfo {
  try {
    const cert = new x509.X509Certificate(certPem);
    const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
    return {
      notBefore: cert.notBefore.getTime(),
      notAfter: cert.notAfter.getTime(),
      hosts: (san?.names.toJSON() ?? []).map((n) => n.value),
      serial: cert.serialNumber,
      subject: cert.subject,
      issuer: cert.issuer,
    };
  } catch (err) {
    throw new AgentError('WEBHOOK_ERR_CERT_PARSE', 'a stored certificate cannot be read', { cause: err });
  }
}

/** True when `certPem` is signed by the CA `caPem` (signature checked). */
export async function isSignedBy(certPem: string, caPem: string): Promise<boolean> {
  try {
    const cert = new x509.X509Certificate(certPem);
    const ca = new x509.X509Certificate(caPem);
    return cert.issuer === ca.subject && (await cert.verify({ publicKey: ca.publicKey, signatureOnly: true }));
  } catch {
    return false;
  }
}
