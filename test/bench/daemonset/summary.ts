// Medians per subject over the rounds of bench:daemonset and the ratios they are read in. Pure:
// the bench feeds it the runs it measured.
import { mediansBy, ratio, type Subject } from '../kruise/summary.js';

/** The measures of one run that are summarized; the run's other details stay in its raw record. */
export interface DaemonSetMeasures {
  subject: Subject;
  round: number;
  /** From the create: seconds until a pod was seen for every node, and until all were ready. */
  create: { createdSeconds: number; readySeconds: number };
  /** From the image change until every pod was updated and ready; pods whose UID changed. */
  inPlaceUpdate: { seconds: number; recreated: number };
  /** Resident memory of the controller in MiB: ready (before the create), after it, the most. */
  rssMiB: { ready: number; afterCreate: number; peak: number };
  /** CPU milliseconds per process and phase; `controller` is the subject's. */
  cpuMs: { create: Record<string, number>; inPlaceUpdate: Record<string, number> };
}

const MEASURES = {
  createdSeconds: [(r: DaemonSetMeasures) => r.create.createdSeconds, 2],
  createReadySeconds: [(r: DaemonSetMeasures) => r.create.readySeconds, 2],
  inPlaceUpdateSeconds: [(r: DaemonSetMeasures) => r.inPlaceUpdate.seconds, 2],
  recreated: [(r: DaemonSetMeasures) => r.inPlaceUpdate.recreated, 0],
  rssReadyMiB: [(r: DaemonSetMeasures) => r.rssMiB.ready, 1],
  rssAfterCreateMiB: [(r: DaemonSetMeasures) => r.rssMiB.afterCreate, 1],
  rssPeakMiB: [(r: DaemonSetMeasures) => r.rssMiB.peak, 1],
  cpuCreateMs: [(r: DaemonSetMeasures) => r.cpuMs.create.controller ?? 0, 0],
  cpuInPlaceUpdateMs: [(r: DaemonSetMeasures) => r.cpuMs.inPlaceUpdate.controller ?? 0, 0],
} as const;

export type DaemonSetMedians = { runs: number } & Record<keyof typeof MEASURES, number>;

export function daemonSetMedians(runs: DaemonSetMeasures[]): Partial<Record<Subject, DaemonSetMedians>> {
  return mediansBy(runs, MEASURES);
}

/**
 * Flotilla against `against` (by default kruise with the raised rate limit, the faster kruise).
 * Speed: its time ÷ ours (above 1: we are faster). Memory and CPU: ours ÷ its (below 1: we are
 * lighter). Null when a side is missing or the divisor is zero.
 */
export function daemonSetRatios(
  of: Partial<Record<Subject, DaemonSetMedians>>,
  against: Subject = 'kruise-qps1000',
): Record<'create' | 'inPlaceUpdate' | 'rssAfterCreate' | 'cpuCreate' | 'cpuInPlaceUpdate', number | null> {
  const ours = of.flotilla;
  const theirs = of[against];
  return {
    create: ratio(theirs?.createReadySeconds, ours?.createReadySeconds),
    inPlaceUpdate: ratio(theirs?.inPlaceUpdateSeconds, ours?.inPlaceUpdateSeconds),
    rssAfterCreate: ratio(ours?.rssAfterCreateMiB, theirs?.rssAfterCreateMiB),
    cpuCreate: ratio(ours?.cpuCreateMs, theirs?.cpuCreateMs),
    cpuInPlaceUpdate: ratio(ours?.cpuInPlaceUpdateMs, theirs?.cpuInPlaceUpdateMs),
  };
}
