/**
 * Whether a reported revision is the target. Pods and statuses carry either the full revision
 * name (`sample-59c7d6fb4`) or, with OpenKruise's CloneSetShortHash gate, only the hash; the
 * hub may hold either, so a match on the hash after the last dash counts.
 */
export function sameRevision(reported: string, target: string): boolean {
  return reported === target || reported.endsWith(`-${target}`) || target.endsWith(`-${reported}`);
}
