/**
 * Signed credential requests (claim, renew, re-key): the agent proves it holds its cluster's
 * user nkey, which never leaves the cluster (docs/adr/0012-nats-decentralized-auth.md). Both
 * sides use this module, so the canonical string has one definition.
 *
 *   Flotilla-Signature: Flotilla-NKey key=<user public key>, ts=<unix ms>, sig=<base64url signature>
 *
 * (its own header: a claim carries the bootstrap token in Authorization as well).
 *
 * The signature covers `flotilla-nkey-v1\n<METHOD>\n<path>\n<ts>\n<sha256 hex of the JSON body>`.
 * The hub accepts a `ts` within SIGNED_REQUEST_WINDOW_MS of its clock and only above the last
 * `ts` it accepted from that cluster (stored with the cluster): a captured request cannot be
 * replayed, on any hub replica, without a nonce store.
 */
import { createHash } from 'node:crypto';
import { createUser, fromPublic, fromSeed } from '@nats-io/nkeys';

/** The request header that carries the signature (lower case, as Node reads headers). */
export const SIGNATURE_HEADER = 'flotilla-signature';
export const NKEY_AUTH_SCHEME = 'Flotilla-NKey';
export const SIGNED_REQUEST_WINDOW_MS = 60_000;
const VERSION = 'flotilla-nkey-v1';
const USER_KEY = /^U[A-Z2-7]{55}$/;
const enc = new TextEncoder();

/** What a signature covers. `body` is the request's JSON body (undefined: none). */
export interface SignedRequestParts {
  method: string;
  /** The URL path, without the query. */
  path: string;
  body: unknown;
}

export interface AgentKey {
  /** The user nkey's public key (`U…`): the cluster's identity at the hub. */
  publicKey: string;
  /** The seed (`SU…`); stays in the cluster's join Secret, never logged, never sent. */
  seed: string;
}

/** A new user nkey pair for an agent. */
export function newAgentKey(): AgentKey {
  const kp = createUser();
  return { publicKey: kp.getPublicKey(), seed: new TextDecoder().decode(kp.getSeed()) };
}

export function isUserPublicKey(key: string): boolean {
  return USER_KEY.test(key);
}

/** The public key of a user seed; throws when it is not one. */
export function publicKeyOfSeed(seed: string): string {
  const key = fromSeed(enc.encode(seed)).getPublicKey();
  if (!isUserPublicKey(key)) throw new Error('the seed is not a NATS user seed');
  return key;
}

function canonical(parts: SignedRequestParts, ts: number): Uint8Array {
  const bodyHash = createHash('sha256')
    .update(parts.body === undefined ? '' : JSON.stringify(parts.body))
    .digest('hex');
  return enc.encode([VERSION, parts.method.toUpperCase(), parts.path, String(ts), bodyHash].join('\n'));
}

/** The SIGNATURE_HEADER value for a request signed with `seed` at `ts` (unix ms). */
export function signRequest(seed: string, parts: SignedRequestParts, ts: number): string {
  const kp = fromSeed(enc.encode(seed));
  const sig = Buffer.from(kp.sign(canonical(parts, ts))).toString('base64url');
  return `${NKEY_AUTH_SCHEME} key=${kp.getPublicKey()}, ts=${ts}, sig=${sig}`;
}

export interface NkeyAuthorization {
  key: string;
  ts: number;
  sig: string;
}

/** Parses the header; undefined when it is not a well-formed Flotilla-NKey authorization. */
export function parseNkeyAuthorization(header: string | undefined): NkeyAuthorization | undefined {
  if (!header?.startsWith(`${NKEY_AUTH_SCHEME} `)) return undefined;
  const fields = new Map<string, string>();
  for (const part of header.slice(NKEY_AUTH_SCHEME.length + 1).split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const key = fields.get('key') ?? '';
  const ts = Number(fields.get('ts'));
  const sig = fields.get('sig') ?? '';
  if (!isUserPublicKey(key) || !Number.isSafeInteger(ts) || !/^[A-Za-z0-9_-]{80,100}$/.test(sig)) return undefined;
  return { key, ts, sig };
}

export type SignedRequestCheck =
  { ok: true; ts: number } | { ok: false; reason: 'malformed' | 'key' | 'clock' | 'replay' | 'signature' };

/**
 * Checks a signed request against the cluster's stored public key and the last `ts` accepted
 * from it. Pure: the caller stores the returned `ts` in the same transaction that answers.
 */
export function verifySignedRequest(
  header: string | undefined,
  parts: SignedRequestParts,
  expect: { publicKey: string; lastTs: number; now: number },
): SignedRequestCheck {
  const auth = parseNkeyAuthorization(header);
  if (!auth) return { ok: false, reason: 'malformed' };
  if (auth.key !== expect.publicKey) return { ok: false, reason: 'key' };
  if (Math.abs(auth.ts - expect.now) > SIGNED_REQUEST_WINDOW_MS) return { ok: false, reason: 'clock' };
  if (auth.ts <= expect.lastTs) return { ok: false, reason: 'replay' };
  const valid = fromPublic(auth.key).verify(canonical(parts, auth.ts), Buffer.from(auth.sig, 'base64url'));
  return valid ? { ok: true, ts: auth.ts } : { ok: false, reason: 'signature' };
}
