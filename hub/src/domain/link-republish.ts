/**
 * When to republish a cluster's live desired objects after its agent's hub link restarted. An
 * agent sends a new random link id per start of its link (ADR 0005); the hub owes that link one
 * republish. A link id that changes on every heartbeat (a crash-looping or hostile agent) must
 * not make the hub publish the whole cluster each time: at most one republish per interval per
 * cluster. A link that restarted within the interval is not forgotten but deferred: its
 * heartbeats keep asking, and the first one after the interval republishes for the newest link.
 */

/** A cluster's link state after its heartbeat was stored. */
export interface LinkState {
  cluster: string;
  /** The link id of its newest heartbeat (null: an agent that sends none). */
  linkId: string | null;
  /** The link id the last republish was for (or the cluster's first link, which needs none). */
  republishedFor: string | null;
  /** When the last republish happened (epoch ms), if ever. */
  republishedAtMs: number | null;
}

export interface LinkRepublishPlan {
  republish: { cluster: string; linkId: string }[];
  /** Clusters owed a republish that must wait for the interval to pass. */
  deferred: string[];
}

export function planLinkRepublish(
  links: readonly LinkState[],
  nowMs: number,
  minIntervalMs: number,
): LinkRepublishPlan {
  const plan: LinkRepublishPlan = { republish: [], deferred: [] };
  for (const l of links) {
    if (l.linkId === null || l.linkId === l.republishedFor) continue;
    if (l.republishedAtMs === null || nowMs - l.republishedAtMs >= minIntervalMs) {
      plan.republish.push({ cluster: l.cluster, linkId: l.linkId });
    } else plan.deferred.push(l.cluster);
  }
  return plan;
}
