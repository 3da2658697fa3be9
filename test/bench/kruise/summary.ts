// Medians per subject over the rounds and the ratios the targets are read in. Pure: the
// bench feeds it the runs it measured.

/** What ran as the CloneSet controller in one run, in the order a round runs them. */
export const CONTROLLERS = ['kruise', 'kruise-qps1000', 'flotilla'] as const;
export type ControllerSubject = (typeof CONTROLLERS)[number];

/**
 * Every subject: the controllers, then the ceiling, where no controller runs and the bench itself
 * makes the writes a CloneSet controller makes, every pod at once (ceiling.ts).
 */
export const SUBJECTS = [...CONTROLLERS, 'ceiling'] as const;
export type Subject = (typeof SUBJECTS)[number];

/**
 * The phases' times of one run, measured for every subject, the ceiling too. The ceiling has no
 * CloneSet status: it counts its pods as the controller counts its status (ceiling.ts).
 */
export interface PhaseTimes {
  subject: Subject;
  round: number;
  /** Scale 0 → N: seconds until the last pod was seen, and until readyReplicas was N. */
  scaleUp: { createdSeconds: number; readySeconds: number };
  /** Until updatedReplicas and updatedReadyReplicas were N for the new generation. */
  inPlaceUpdate: { seconds: number };
  /** N → 0: until the CloneSet reported no replicas (not the ceiling's) and no pod was left. */
  scaleDown: { seconds: number };
}

/** The measures of a controller's run that are summarized; the run's other details stay in its raw record. */
export interface ControllerMeasures extends PhaseTimes {
  subject: ControllerSubject;
  /** Resident memory of the controller's process in MiB. */
  rssMiB: { idle: number; afterScaleUp: number; peak: number };
  /** Cores the controller used while nothing happened. */
  idleCpuCores: number;
}

/** The ceiling's run: times only, since no controller runs to weigh. */
export interface CeilingMeasures extends PhaseTimes {
  subject: 'ceiling';
}

export type RunMeasures = ControllerMeasures | CeilingMeasures;

/** Medians of the phases' times. */
export interface PhaseMedians {
  runs: number;
  scaleUpCreatedSeconds: number;
  scaleUpReadySeconds: number;
  inPlaceUpdateSeconds: number;
  scaleDownSeconds: number;
}

export interface Medians extends PhaseMedians {
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

const PHASES = {
  scaleUpCreatedSeconds: [(r: PhaseTimes) => r.scaleUp.createdSeconds, 2],
  scaleUpReadySeconds: [(r: PhaseTimes) => r.scaleUp.readySeconds, 2],
  inPlaceUpdateSeconds: [(r: PhaseTimes) => r.inPlaceUpdate.seconds, 2],
  scaleDownSeconds: [(r: PhaseTimes) => r.scaleDown.seconds, 2],
} as const;

const WEIGHT = {
  rssIdleMiB: [(r: ControllerMeasures) => r.rssMiB.idle, 1],
  rssAfterScaleUpMiB: [(r: ControllerMeasures) => r.rssMiB.afterScaleUp, 1],
  rssPeakMiB: [(r: ControllerMeasures) => r.rssMiB.peak, 1],
  idleCpuCores: [(r: ControllerMeasures) => r.idleCpuCores, 4],
} as const;

/** Medians per subject that ran: every measure for a controller, the phases' times for the ceiling. */
export type SubjectMedians = Partial<Record<ControllerSubject, Medians>> & { ceiling?: PhaseMedians };

export function medians(runs: RunMeasures[]): SubjectMedians {
  const controllers = runs.filter((r): r is ControllerMeasures => r.subject !== 'ceiling');
  const out: SubjectMedians = mediansBy(controllers, { ...PHASES, ...WEIGHT });
  const ceiling = mediansBy(
    runs.filter((r) => r.subject === 'ceiling'),
    PHASES,
  ).ceiling;
  if (ceiling) out.ceiling = ceiling;
  return out;
}

export function ratios(of: SubjectMedians, against: ControllerSubject = 'kruise-qps1000'): Ratios {
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
 * A subject's times ÷ the ceiling's (medians): 1 is as fast as the apiserver and kwok go on this
 * machine; null when a side is missing or the ceiling's time is zero.
 */
export interface OverCeiling {
  /** To all pods seen. */
  scaleUpCreated: number | null;
  /** To all pods ready: the scale-up measure. */
  scaleUp: number | null;
  inPlaceUpdate: number | null;
  scaleDown: number | null;
}

/**
 * Every controller that ran against the ceiling. kruise-qps1000's row is also the most any
 * controller can be faster than it here: a target above that row is out of the harness's reach.
 */
export function ceilingRatios(of: SubjectMedians): Partial<Record<ControllerSubject, OverCeiling>> {
  const ceiling = of.ceiling;
  const out: Partial<Record<ControllerSubject, OverCeiling>> = {};
  if (!ceiling) return out;
  for (const subject of CONTROLLERS) {
    const m = of[subject];
    if (!m) continue;
    out[subject] = {
      scaleUpCreated: ratio(m.scaleUpCreatedSeconds, ceiling.scaleUpCreatedSeconds),
      scaleUp: ratio(m.scaleUpReadySeconds, ceiling.scaleUpReadySeconds),
      inPlaceUpdate: ratio(m.inPlaceUpdateSeconds, ceiling.inPlaceUpdateSeconds),
      scaleDown: ratio(m.scaleDownSeconds, ceiling.scaleDownSeconds),
    };
  }
  return out;
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
