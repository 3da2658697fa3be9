import { MalformedField, countAt, isRecord, recordAt, stringAt } from './fields.js';
import { generationVerdict } from './generation.js';
import { type HealthVerdict, verdict } from './verdict.js';

/** What imagePullJobHealth reads of an ImagePullJob; the full ImagePullJob type fits. */
export interface ImagePullJobHealthInput {
  metadata?: { generation?: number } | null;
  spec?: { completionPolicy?: { type?: string } | null } | null;
  status?: {
    observedGeneration?: number;
    startTime?: string;
    completionTime?: string;
    desired?: number;
    active?: number;
    succeeded?: number;
    failed?: number;
    failedNodes?: readonly string[] | null;
    message?: string;
  } | null;
}

const DEADLINE_MESSAGE = 'job exceeds activeDeadlineSeconds';
const MAX_NODES_LISTED = 10;

/**
 * Health of a cluster's ImagePullJob. A node that failed has used up its retries, so any
 * failure makes the job Degraded at once (listing the failed nodes) rather than when it
 * completes. Healthy once it completed with no failure; a Never-completing job is Healthy once
 * every desired node succeeded. OpenKruise's ImagePullJob status has no observedGeneration, so
 * staleness is checked only when one is present. Never throws: malformed input gives Unknown.
 */
export function imagePullJobHealth(job: ImagePullJobHealthInput): HealthVerdict {
  try {
    return evaluate(job);
  } catch (error) {
    if (error instanceof MalformedField) return verdict('Unknown', 'MalformedInput', error.message);
    throw error;
  }
}

function evaluate(input: unknown): HealthVerdict {
  if (!isRecord(input)) return verdict('Unknown', 'MalformedInput', 'the ImagePullJob is not an object');
  const spec = recordAt(input, 'spec', 'spec');
  const status = recordAt(input, 'status', 'status');

  const stale = generationVerdict(input, status, true);
  if (stale) return stale;

  const desired = countAt(status, 'desired', 'status.desired', 0);
  const active = countAt(status, 'active', 'status.active', 0);
  const succeeded = countAt(status, 'succeeded', 'status.succeeded', 0);
  const failed = countAt(status, 'failed', 'status.failed', 0);
  const failedNodes = nodeList(status.failedNodes);
  const message = stringAt(status, 'message', 'status.message') ?? '';
  const completed = stringAt(status, 'completionTime', 'status.completionTime') !== undefined;
  const started = stringAt(status, 'startTime', 'status.startTime') !== undefined;
  const completionPolicy = recordAt(spec, 'completionPolicy', 'spec.completionPolicy');
  const neverCompletes = stringAt(completionPolicy, 'type', 'spec.completionPolicy.type') === 'Never';

  if (failed > 0) {
    const nodes = formatNodes(failedNodes);
    return verdict('Degraded', 'ImagePullFailed', `${failed} of ${desired} nodes failed to pull${nodes}`);
  }
  if (completed && message === DEADLINE_MESSAGE && succeeded < desired) {
    return verdict('Degraded', 'DeadlineExceeded', `${succeeded} of ${desired} nodes pulled before the deadline`);
  }
  if (completed) return verdict('Healthy', 'Completed', `${succeeded} of ${desired} nodes pulled the image`);
  if (!started) return verdict('Progressing', 'NotStarted', 'the job has not started');
  if (neverCompletes && active === 0 && succeeded === desired) {
    return verdict('Healthy', 'AllNodesPulled', `${succeeded} of ${desired} nodes pulled the image`);
  }
  return verdict('Progressing', 'Pulling', `${succeeded} of ${desired} nodes pulled, ${active} pulling`);
}

function nodeList(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((node): node is string => typeof node === 'string')) {
    throw new MalformedField('status.failedNodes', 'is not a list of node names');
  }
  return value;
}

function formatNodes(nodes: readonly string[]): string {
  if (nodes.length === 0) return '';
  const listed = nodes.slice(0, MAX_NODES_LISTED).join(', ');
  const more = nodes.length > MAX_NODES_LISTED ? ` and ${nodes.length - MAX_NODES_LISTED} more` : '';
  return `: ${listed}${more}`;
}
