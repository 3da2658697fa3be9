/**
 * How `flotilla clusters get` shows a cluster's NATS identity: a short form of the agent's public
 * key (public: the seed never leaves the cluster) and when the JWT last issued to it expires. No
 * secret is ever part of the hub's answer, so none can be shown here.
 */
import type { Cluster } from '@flotilla/api';

/** `UABCDEFG…WXYZ` for an nkey public key; `<revoked>` once an admin revoked it, `-` before any. */
export function keyText(c: Pick<Cluster, 'publicKey' | 'state' | 'acceptedAt'>): string {
  const key = c.publicKey;
  if (key === undefined || key === null || key === '')
    return c.acceptedAt && c.state === 'accepted' ? '<revoked>' : '-';
  return key.length > 16 ? `${key.slice(0, 8)}…${key.slice(-4)}` : key;
}

function span(seconds: number): string {
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

/** `in 16h` or `expired 5m ago` for the credential's expiry; `-` when none was issued. */
export function credentialText(c: Pick<Cluster, 'credentialExpiresAt' | 'credentialsIssued'>, now: Date): string {
  if (!c.credentialsIssued || !c.credentialExpiresAt) return '-';
  const at = Date.parse(c.credentialExpiresAt);
  if (Number.isNaN(at)) return '<unknown>';
  const seconds = Math.floor((at - now.getTime()) / 1000);
  return seconds >= 0 ? `in ${span(seconds)}` : `expired ${span(-seconds)} ago`;
}
