/**
 * Finished runs of BroadcastJobs that remove themselves: a job with
 * `completionPolicy.ttlSecondsAfterFinished` is deleted by its controller once it finished. For
 * the fleet that is the run having happened, not drift: the agent must not create the job again
 * for the same template (it would run again, and again after every TTL), and the cluster's status
 * for the workload stays what the run ended as (Healthy or Degraded) until a new template comes,
 * which runs anew.
 *
 * So the status pass remembers, for every managed BroadcastJob with a TTL that it sees finished
 * (phase completed or failed, having run the template it carries), the template hash and the
 * report it made of it. While that job is gone and the hub's template hashes the same:
 * - a desired message is not applied (desired-decision.ts), and drift repair does not re-create
 *   it (drift.ts);
 * - the remembered report is sent for it, so the hub's health sees the finished run.
 * A tombstone or a new template ends the memory. The memory is kept in a ConfigMap of the agent
 * (finished-job-store.ts), so a restarted agent, to which the hub republishes every desired
 * object, still knows the run happened.
 *
 * A job that finishes and is removed between two status passes (a TTL shorter than the pass
 * interval) is never seen finished; it is re-created once like any object deleted behind the
 * hub's back, and remembered on its next finish.
 *
 * Everything here is pure: plain inputs, no I/O.
 */
import {
  RUN_TEMPLATE_HASH_ANNOTATION,
  TEMPLATE_HASH_ANNOTATION,
  jobTemplateHash,
  type StatusMessage,
} from '@flotilla/api';
import { isManaged } from './desired-decision.js';
import type { KubeObject, ObjectRef } from './types.js';

/** One remembered finished run. */
export interface FinishedRun {
  /** The job that ran (a later job of the same name is another run). */
  uid: string;
  /** The hub template's hash the run started from. */
  templateHash: string;
  /** The last report of the finished job; sent while the job is gone. */
  report: StatusMessage;
}

/** The phases in which OpenKruise's controller (and the agent's) ends a run. */
const FINISHED_PHASES: ReadonlySet<string> = new Set(['completed', 'failed']);

interface JobView {
  spec?: { completionPolicy?: { ttlSecondsAfterFinished?: unknown } | null } | null;
  status?: { phase?: unknown } | null;
}

/** A job whose controller ended its run and will delete it after a TTL. */
function finishedWithTtl(job: JobView): boolean {
  const ttl = job.spec?.completionPolicy?.ttlSecondsAfterFinished;
  const phase = job.status?.phase;
  return typeof ttl === 'number' && typeof phase === 'string' && FINISHED_PHASES.has(phase);
}

/**
 * The run to remember of a listed object, or undefined: only a managed BroadcastJob with a TTL,
 * finished, not being deleted (by then it was seen finished before, or the agent is replacing
 * it), whose run started from the template it carries.
 */
export function finishedRunOf(ref: ObjectRef, obj: KubeObject, report: StatusMessage): FinishedRun | undefined {
  if (ref.kind !== 'BroadcastJob' || !isManaged(obj) || obj.metadata?.deletionTimestamp) return undefined;
  if (!finishedWithTtl(obj as JobView)) return undefined;
  if (report.health !== 'Healthy' && report.health !== 'Degraded') return undefined;
  const templateHash = ranOwnTemplate(obj);
  const uid = obj.metadata?.uid;
  return templateHash !== undefined && uid !== undefined ? { uid, templateHash, report } : undefined;
}

/** The template hash of a job whose run started from the template it carries. */
function ranOwnTemplate(obj: KubeObject): string | undefined {
  const annotations = obj.metadata?.annotations ?? {};
  const templateHash = annotations[TEMPLATE_HASH_ANNOTATION];
  const ran = annotations[RUN_TEMPLATE_HASH_ANNOTATION] ?? templateHash;
  return ran === templateHash ? templateHash : undefined;
}

/** The template hash of a hub manifest of a BroadcastJob (as job-rerun.ts stamps it). */
export function manifestTemplateHash(manifest: Record<string, unknown> | KubeObject | undefined): string {
  return jobTemplateHash((manifest?.spec as { template?: unknown } | undefined)?.template);
}

/** Whether `run` is the finished run of a manifest whose template hashes to `templateHash`. */
export function ranTemplate(run: FinishedRun | undefined, templateHash: string | undefined): boolean {
  return run !== undefined && templateHash !== undefined && run.templateHash === templateHash;
}

/** Whether remembering `next` changes what is remembered (`prev`). */
export function runChanged(prev: FinishedRun | undefined, next: FinishedRun): boolean {
  if (!prev) return true;
  const { reportedAt: _a, ...p } = prev.report;
  const { reportedAt: _b, ...n } = next.report;
  return prev.uid !== next.uid || prev.templateHash !== next.templateHash || JSON.stringify(p) !== JSON.stringify(n);
}

/** What a desired message says of the object, for a run it finds already finished. */
export interface RunAbout {
  workloadId: string;
  revision: number;
  generation: number;
}

/**
 * The run as the answer to a later desired message with the same template: its report now
 * speaks of that message's generation, so the hub takes it as the state of what it last sent.
 */
export function runFor(run: FinishedRun, about: RunAbout): FinishedRun {
  return {
    ...run,
    report: { ...run.report, workloadId: about.workloadId, revision: about.revision, generation: about.generation },
  };
}

/** The report sent for a finished run whose job is gone. */
export function finishedReport(run: FinishedRun, now: Date): StatusMessage {
  const note = 'the job finished and was removed after ttlSecondsAfterFinished';
  const message = run.report.message === '' ? note : `${run.report.message} (${note})`;
  return { ...run.report, message: message.slice(0, 1024), reportedAt: now.toISOString() };
}

/**
 * ConfigMap data key of an object: `namespace.name`. A namespace is a DNS label (no dot), so the
 * first dot splits the key again; both parts use only characters a data key allows.
 */
export function runKey(ref: Pick<ObjectRef, 'namespace' | 'name'>): string {
  return `${ref.namespace}.${ref.name}`;
}

/** ConfigMap data of the remembered runs. */
export function encodeRuns(runs: ReadonlyMap<string, FinishedRun>): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [key, run] of [...runs.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    data[key] = JSON.stringify(run);
  }
  return data;
}

function isRun(v: unknown): v is FinishedRun {
  const r = v as Partial<FinishedRun> | undefined;
  const report = r?.report as Partial<StatusMessage> | undefined;
  return (
    typeof r?.uid === 'string' &&
    typeof r.templateHash === 'string' &&
    report?.kind === 'BroadcastJob' &&
    typeof report.namespace === 'string' &&
    typeof report.name === 'string' &&
    (report.health === 'Healthy' || report.health === 'Degraded') &&
    typeof report.generation === 'number' &&
    typeof report.message === 'string' &&
    typeof report.counts === 'object'
  );
}

/** The runs in ConfigMap data; entries that are not a run of their key are left out. */
export function decodeRuns(data: Record<string, string> | undefined): Map<string, FinishedRun> {
  const runs = new Map<string, FinishedRun>();
  for (const [key, raw] of Object.entries(data ?? {})) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      continue;
    }
    if (isRun(parsed) && runKey(parsed.report) === key) runs.set(key, parsed);
  }
  return runs;
}
