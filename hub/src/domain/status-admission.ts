/**
 * Which status reports the hub believes. An agent may publish only on its own cluster's subjects,
 * but what it says there is its own choice; the hub keeps only what can be true:
 * - the object was placed on that cluster by the hub (a desired row exists, tombstones included
 *   so that "Deleted" reports land): anything else would be a row nobody asked for;
 * - the report's generation is not ahead of the newest one the hub sent for that object.
 * The workload a report belongs to is the hub's, not the agent's claim. Pure; the ingest reads
 * the placements for a whole batch in one query.
 */
import type { TimedStatus } from './status-coalesce.js';

/** What the hub placed for one (cluster, kind, namespace, name). */
export interface Placement {
  generation: number;
  workloadId: string;
}

export type AdmissionDrop = 'not_placed' | 'future_generation';

export interface Admission {
  admitted: TimedStatus[];
  dropped: { reason: AdmissionDrop; status: TimedStatus }[];
}

export function admitStatuses(
  reports: readonly TimedStatus[],
  placementOf: (report: TimedStatus) => Placement | undefined,
): Admission {
  const out: Admission = { admitted: [], dropped: [] };
  for (const r of reports) {
    const placed = placementOf(r);
    if (!placed) out.dropped.push({ reason: 'not_placed', status: r });
    else if (r.message.generation > placed.generation) out.dropped.push({ reason: 'future_generation', status: r });
    else out.admitted.push({ ...r, message: { ...r.message, workloadId: placed.workloadId } });
  }
  return out;
}
