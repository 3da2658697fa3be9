// Medians per subject over the rounds and the ratios the targets are read in. Pure: the
// bench feeds it the runs it measured.

/** What ran as the CloneSet controller in one run. */
export const SUBJECTS = ['kruise', 'kruise-qps1000', 'flotilla'] as const;
export type Subject = (typeof SUBJECTS)[number];

/** The measures of one run that are summarized; the run's other details stay in its raw record. */
export interface RunMeasures {
  subject: Subject;
  round: number;
  /** Scale 0 → N: seconds until the last pod was seen, and until readyReplicas was N. */
  scaleUp: { createdSeconds: number; readySeconds: number };
  /** Until updatedReplicas and updatedReadyReplicas were N for the new generation. */
  inPlaceUpdate: { seconds: number };
  /** N → 0: until the CloneSet reported no replicas and no pod was left. */
  scaleDown: { seconds: number };
  /** Resident memory of the controller's process in MiB. */
  rssMiB: { idle: number; afterScaleUp: number; peak: number };
  /** Cores the controller used while nothing happened. */
  idleCpuCores: number;
}

export interface Medians {
  runs: number;
  scaleUpCreatedSeconds: number;
  scaleUpReadySeconds: number;
  inPlaceUpdateSeconds: number;
  scaleDownSeconds: number;
  rssIdleMiB: number;
  rssAfterScaleUpMiB: number;
  rssPeakMiB: number;
  idleCpuCores: number;
}

/**
 * Flotilla against kruise with the raised rate limit. Speed: kruise's time ÷ ours (above 1:
 * we are faster). Memory and CPU: ours ÷ kruise's (below 1: we are lighter). Null when a side
 * is missing or the divisor is zero.
 */
export interface Ratios {
  scaleUp: number | null;
  inPlaceUpdate: number | null;
  rssIdle: number | null;
  rssAfterScaleUp: number | null;
  idleCpu: number | null;
}

const round = (n: number, digits: number): number => Math.round(n * 10 ** digits) / 10 ** digits;

export function median(values: number[]): number {
  if (values.length === 0) throw new Error('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A measure summarized over runs: how to read it from one run, and the digits to round to. */
export type Measure<R> = readonly [pick: (run: R) => number, digits: number];

/** The median of every measure per subject, only for subjects that ran, with their run counts. */
export function mediansBy<R extends { subject: Subject }, K extends string>(
  runs: R[],
  measures: Record<K, Measure<R>>,
): Partial<Record<Subject, { runs: number } & Record<K, number>>> {
  const out: Partial<Record<Subject, { runs: number } & Record<K, number>>> = {};
  for (const subject of SUBJECTS) {
    const mine = runs.filter((r) => r.subject === subject);
    if (mine.length === 0) continue;
    const entries = (Object.entries(measures) as [K, Measure<R>][]).map(
      ([key, [pick, digits]]) => [key, round(median(mine.map(pick)), digits)] as const,
    );
    out[subject] = { runs: mine.length, ...(Object.fromEntries(entries) as Record<K, number>) };
  }
  return out;
}

/** num ÷ den rounded to two digits; null when a side is missing or the divisor is zero. */
export function ratio(num: number | undefined, den: number | undefined): number | null {
  return num === undefined || den === undefined || den === 0 ? null : round(num / den, 2);
}

export function medians(runs: RunMeasures[]): Partial<Record<Subject, Medians>> {
  return mediansBy(runs, {
    scaleUpCreatedSeconds: [(r) => r.scaleUp.createdSeconds, 2],
    scaleUpReadySeconds: [(r) => r.scaleUp.readySeconds, 2],
    inPlaceUpdateSeconds: [(r) => r.inPlaceUpdate.seconds, 2],
    scaleDownSeconds: [(r) => r.scaleDown.seconds, 2],
    rssIdleMiB: [(r) => r.rssMiB.idle, 1],
    rssAfterScaleUpMiB: [(r) => r.rssMiB.afterScaleUp, 1],
    rssPeakMiB: [(r) => r.rssMiB.peak, 1],
    idleCpuCores: [(r) => r.idleCpuCores, 4],
  });
}

export function ratios(of: Partial<Record<Subject, Medians>>, against: Subject = 'kruise-qps1000'): Ratios {
  const ours = of.flotilla;
  const theirs = of[against];
  return {
    scaleUp: ratio(theirs?.scaleUpReadySeconds, ours?.scaleUpReadySeconds),
    inPlaceUpdate: ratio(theirs?.inPlaceUpdateSeconds, ours?.inPlaceUpdateSeconds),
    rssIdle: ratio(ours?.rssIdleMiB, theirs?.rssIdleMiB),
    rssAfterScaleUp: ratio(ours?.rssAfterScaleUpMiB, theirs?.rssAfterScaleUpMiB),
    idleCpu: ratio(ours?.idleCpuCores, theirs?.idleCpuCores),
  };
}

/**
 * The order of the runs: subjects alternate within every round, so a change of the shared
 * machine's load over the bench falls on all of them alike.
 */
export function schedule(
  rounds: number,
  subjects: readonly Subject[] = SUBJECTS,
): { subject: Subject; round: number }[] {
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`rounds must be a positive integer, got ${rounds}`);
  return Array.from({ length: rounds }, (_, i) => subjects.map((subject) => ({ subject, round: i + 1 }))).flat();
}
