/**
 * The NodeImage status the daemon publishes (the tail of kruise-daemon's sync): one entry per
 * image with results, tags sorted, and the counters over every tag the spec asks for (`waiting`:
 * tags queued for a pull slot, OpenKruise v1.9).
 */
import type { ImageTagStatus, NodeImageSpec, NodeImageStatus } from '@flotilla/api';

/** The status for `spec` given each image's current tag statuses. */
export function nodeImageStatus(
  spec: NodeImageSpec,
  statusOf: (name: string) => ImageTagStatus[] | undefined,
): NodeImageStatus {
  const status: NodeImageStatus = { desired: 0, succeeded: 0, failed: 0, pulling: 0, waiting: 0 };
  const imageStatuses: NonNullable<NodeImageStatus['imageStatuses']> = {};
  for (const [name, image] of Object.entries(spec.images ?? {})) {
    status.desired += image.tags.length;
    const wanted = new Set(image.tags.map((t) => t.tag));
    const tags = (statusOf(name) ?? []).filter((t) => wanted.has(t.tag));
    if (tags.length === 0) continue;
    imageStatuses[name] = { tags };
    for (const t of tags) {
      if (t.phase === 'Succeeded') status.succeeded = (status.succeeded ?? 0) + 1;
      else if (t.phase === 'Failed') status.failed = (status.failed ?? 0) + 1;
      else if (t.phase === 'Pulling') status.pulling = (status.pulling ?? 0) + 1;
      else if (t.phase === 'Waiting') status.waiting = (status.waiting ?? 0) + 1;
    }
  }
  if (Object.keys(imageStatuses).length > 0) status.imageStatuses = imageStatuses;
  return status;
}

/**
 * A JSON merge patch turning `old` into `next` for the fields the daemon owns. Images that no
 * longer have results are removed with null, which a merge patch needs to delete map keys.
 */
export function statusPatch(old: NodeImageStatus | undefined, next: NodeImageStatus): Record<string, unknown> {
  const imageStatuses: Record<string, unknown> = { ...next.imageStatuses };
  for (const name of Object.keys(old?.imageStatuses ?? {})) if (!(name in imageStatuses)) imageStatuses[name] = null;
  return {
    status: {
      desired: next.desired,
      succeeded: next.succeeded ?? 0,
      failed: next.failed ?? 0,
      pulling: next.pulling ?? 0,
      waiting: next.waiting ?? 0,
      imageStatuses: Object.keys(imageStatuses).length > 0 ? imageStatuses : null,
    },
  };
}
