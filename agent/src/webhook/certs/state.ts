/**
 * The certificate Secret's layout. OpenKruise's keys are kept (`ca-cert.pem`, `ca-key.pem`,
 * `cert.pem`/`tls.crt`, `key.pem`/`tls.key`) so tools that read them keep working; rotation adds
 * `ca-bundle.pem` (every CA the apiserver must trust right now), `next-ca-*.pem` (a CA announced
 * in the bundle but not yet signing) and the time the bundle last changed.
 */
export interface CaPair {
  certPem: string;
  keyPem: string;
}

export interface CertState {
  ca?: CaPair;
  nextCa?: CaPair;
  serving?: CaPair;
  /** PEM certificates of the CAs in the bundle, current CA first. */
  bundle: string[];
  /** When the bundle last changed (ms); rotation waits for it to reach the apiserver. */
  bundleChangedAt?: number;
}

/** Secret data keys. */
export const SecretKeys = {
  caCert: 'ca-cert.pem',
  caKey: 'ca-key.pem',
  nextCaCert: 'next-ca-cert.pem',
  nextCaKey: 'next-ca-key.pem',
  bundle: 'ca-bundle.pem',
  cert: 'cert.pem',
  key: 'key.pem',
  tlsCert: 'tls.crt',
  tlsKey: 'tls.key',
} as const;

export const ANNOTATION_BUNDLE_CHANGED_AT = 'flotilla.io/ca-bundle-changed-at';

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The certificates of a PEM bundle, each normalised to end with a newline. */
export function splitPemBundle(text: string): string[] {
  return (text.match(PEM_CERT) ?? []).map((c) => `${c}\n`);
}

/** A PEM block that ends with exactly one newline, so bundles concatenate cleanly. */
export function pemLine(pem: string): string {
  return `${pem.trimEnd()}\n`;
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined): string | undefined =>
  s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8');

function pair(cert: string | undefined, key: string | undefined): CaPair | undefined {
  return cert && key ? { certPem: cert, keyPem: key } : undefined;
}

/** Reads the state from a Secret's base64 `data` and annotations. */
export function decodeState(data: Record<string, string> | undefined, annotations?: Record<string, string>): CertState {
  const get = (k: string): string | undefined => unb64(data?.[k]);
  const ca = pair(get(SecretKeys.caCert), get(SecretKeys.caKey));
  const bundleText = get(SecretKeys.bundle);
  const changed = Number(annotations?.[ANNOTATION_BUNDLE_CHANGED_AT]);
  return {
    ca,
    nextCa: pair(get(SecretKeys.nextCaCert), get(SecretKeys.nextCaKey)),
    serving: pair(get(SecretKeys.tlsCert) ?? get(SecretKeys.cert), get(SecretKeys.tlsKey) ?? get(SecretKeys.key)),
    bundle: bundleText ? splitPemBundle(bundleText) : ca ? [ca.certPem] : [],
    bundleChangedAt: Number.isFinite(changed) && changed > 0 ? changed : undefined,
  };
}

/** The Secret `data` (base64) and annotations for a state. */
export function encodeState(state: CertState): { data: Record<string, string>; annotations: Record<string, string> } {
  const data: Record<string, string> = {};
  if (state.ca) {
    data[SecretKeys.caCert] = b64(state.ca.certPem);
    data[SecretKeys.caKey] = b64(state.ca.keyPem);
  }
  if (state.nextCa) {
    data[SecretKeys.nextCaCert] = b64(state.nextCa.certPem);
    data[SecretKeys.nextCaKey] = b64(state.nextCa.keyPem);
  }
  if (state.serving) {
    data[SecretKeys.cert] = data[SecretKeys.tlsCert] = b64(state.serving.certPem);
    data[SecretKeys.key] = data[SecretKeys.tlsKey] = b64(state.serving.keyPem);
  }
  data[SecretKeys.bundle] = b64(state.bundle.map(pemLine).join(''));
  const annotations: Record<string, string> = state.bundleChangedAt
    ? { [ANNOTATION_BUNDLE_CHANGED_AT]: String(state.bundleChangedAt) }
    : {};
  return { data, annotations };
}
