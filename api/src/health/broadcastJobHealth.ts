import { RUN_TEMPLATE_HASH_ANNOTATION, TEMPLATE_HASH_ANNOTATION } from '../protocol/job-template.js';
import { MalformedField, countAt, isRecord, recordAt, stringAt } from './fields.js';
import { generationVerdict } from './generation.js';
import { type HealthVerdict, verdict } from './verdict.js';

/** What broadcastJobHealth reads of a BroadcastJob; the full BroadcastJob type fits. */
export interface BroadcastJobHealthInput {
  metadata?: { generation?: number; annotations?: Record<string, string> | null } | null;
  spec?: {
    paused?: boolean;
    completionPolicy?: { type?: string } | null;
    failurePolicy?: { type?: string } | null;
  } | null;
  status?: {
    observedGeneration?: number;
    phase?: string;
    startTime?: string;
    completionTime?: string;
    desired?: number;
    active?: number;
    succeeded?: number;
    failed?: number;
    conditions?: readonly { type?: string; status?: string; message?: string }[] | null;
  } | null;
}

/**
 * Health of a cluster's BroadcastJob, from the phase its controller writes. Failed (a failed pod
 * under FailFast, or the active deadline) is Degraded with the condition's message; paused by a
 * failed pod (failurePolicy Pause) is Degraded too, while paused by spec.paused is Progressing;
 * completed is Healthy unless some pods failed (failurePolicy Continue), which is Degraded. A
 * Never-completing job is Healthy once every desired node's pod succeeded. OpenKruise's status
 * has no observedGeneration, so staleness is checked only when one is present. A job the hub
 * manages counts only for the template its run started from: when the agent's template-hash
 * annotation differs from the run-template-hash (a new template patched into a job that ran an
 * older one), the job is Progressing whatever its phase. Never throws: malformed input gives
 * Unknown.
 */
export function broadcastJobHealth(job: BroadcastJobHealthInput): HealthVerdict {
  try {
    return evaluate(job);
  } catch (error) {
    if (error instanceof MalformedField) return verdict('Unknown', 'MalformedInput', error.message);
    throw error;
  }
}

function evaluate(input: unknown): HealthVerdict {
  if (!isRecord(input)) return verdict('Unknown', 'MalformedInput', 'the BroadcastJob is not an object');
  const spec = recordAt(input, 'spec', 'spec');
  const status = recordAt(input, 'status', 'status');
  return generationVerdict(input, status, true) ?? templateNotRun(input) ?? byPhase(spec, status);
}

/** The verdict of a current job from its phase and counts. */
function byPhase(spec: Record<string, unknown>, status: Record<string, unknown>): HealthVerdict {
  const desired = countAt(status, 'desired', 'status.desired', 0);
  const active = countAt(status, 'active', 'status.active', 0);
  const succeeded = countAt(status, 'succeeded', 'status.succeeded', 0);
  const failed = countAt(status, 'failed', 'status.failed', 0);
  const phase = stringAt(status, 'phase', 'status.phase') ?? '';
  const counts = `${succeeded} of ${desired} pods succeeded, ${failed} failed`;
  const neverCompletes =
    stringAt(recordAt(spec, 'completionPolicy', 'spec.completionPolicy'), 'type', 'spec.completionPolicy.type') ===
    'Never';

  switch (phase) {
    case 'failed':
      return verdict('Degraded', 'JobFailed', failedMessage(status) ?? `the job failed: ${counts}`);
    case 'completed':
      return failed > 0
        ? verdict('Degraded', 'PodsFailed', `the job completed with failed pods: ${counts}`)
        : verdict('Healthy', 'Completed', counts);
    case 'paused':
      return failed > 0
        ? verdict('Degraded', 'PausedOnFailure', `the job paused on a failed pod: ${counts}`)
        : verdict('Progressing', 'Paused', `the job is paused: ${counts}`);
    case '':
      return verdict('Progressing', 'NotStarted', 'the job has not started');
    default:
      if (neverCompletes && desired > 0 && active === 0 && succeeded === desired) {
        return verdict('Healthy', 'AllPodsSucceeded', counts);
      }
      return verdict('Progressing', 'Running', `${counts}, ${active} running`);
  }
}

/**
 * Progressing when the job's run started from another template than the one its spec carries
 * (both hashes stamped by the agent); undefined when they agree or either is absent (a job the
 * hub does not manage, or one created before the agent stamped them).
 */
function templateNotRun(input: Record<string, unknown>): HealthVerdict | undefined {
  const annotations = recordAt(recordAt(input, 'metadata', 'metadata'), 'annotations', 'metadata.annotations');
  const wanted = stringAt(annotations, TEMPLATE_HASH_ANNOTATION, `metadata.annotations.${TEMPLATE_HASH_ANNOTATION}`);
  const ran = stringAt(
    annotations,
    RUN_TEMPLATE_HASH_ANNOTATION,
    `metadata.annotations.${RUN_TEMPLATE_HASH_ANNOTATION}`,
  );
  if (wanted === undefined || ran === undefined || wanted === ran) return undefined;
  return verdict(
    'Progressing',
    'TemplateNotRun',
    `the job ran template ${ran}; template ${wanted} has not run yet (the agent replaces the job to run it)`,
  );
}

/** The message of the True Failed condition, if there is one. */
function failedMessage(status: Record<string, unknown>): string | undefined {
  const conditions = status.conditions;
  if (conditions === undefined || conditions === null) return undefined;
  if (!Array.isArray(conditions)) throw new MalformedField('status.conditions', 'is not a list');
  const failed = conditions.find((c) => isRecord(c) && c.type === 'Failed' && c.status === 'True') as
    Record<string, unknown> | undefined;
  return typeof failed?.message === 'string' && failed.message !== '' ? failed.message : undefined;
}
