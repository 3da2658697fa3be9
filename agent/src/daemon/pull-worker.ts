/**
 * Pulls one tag of one NodeImage entry through the CRI and reports its status: Pulling at once
 * (so the controller sees the daemon answered), then Succeeded with the image id, or Failed with
 * the last error after every attempt failed. IfNotPresent succeeds without pulling when the
 * runtime already has the image; Always pulls every time, so a moved tag is fetched anew.
 * Stopping (the tag left the spec or got a new version) aborts the pull and reports nothing.
 */
import { sleep, type ImageTagSpec, type ImageTagStatus } from '@flotilla/api';
import type { Logger } from 'pino';
import type { Clock } from '../runtime/clock.js';
import { formatTime } from '../runtime/kube-time.js';
import type { AuthProblem } from './auth.js';
import type { AuthConfig, ImageInfo, ImageService, SandboxConfig } from './cri/image-service.js';
import { AgentError, CriError, hasCode } from '../errors.js';
import { attemptTimeoutMs, pullLimits, retryDelayMs, type PullLimits } from './pull-policy.js';
import { pullReference } from '../kube/nodeimage.js';

/** OpenKruise marks its pulls in the sandbox config so runtimes can tell them from pod pulls. */
export const SANDBOX_PULLER_ANNOTATION = 'apps.kruise.io/pulling-image-by';

export interface PullTask {
  /** NodeImage key: the familiar image name. */
  name: string;
  tag: ImageTagSpec;
  sandboxConfig?: SandboxConfig;
  /** Credentials for the image's registry, most specific first; none: pull anonymously. */
  auths: AuthConfig[];
  /** Pull secrets that could not be used; named in the failure message. */
  authProblems: AuthProblem[];
}

export interface PullWorkerDeps {
  images: ImageService;
  clock: Clock;
  log: Logger;
  /** Every status change, Pulling first. */
  onStatus(status: ImageTagStatus): void;
}

/**
 * Runs the task to its end. Resolves the final status, or undefined when `signal` aborted it
 * (the caller no longer wants any report).
 */
export async function runPull(
  task: PullTask,
  deps: PullWorkerDeps,
  signal: AbortSignal,
): Promise<ImageTagStatus | undefined> {
  const started = deps.clock.now();
  const status: ImageTagStatus = {
    tag: task.tag.tag,
    phase: 'Pulling',
    progress: 0,
    startTime: formatTime(started),
    version: task.tag.version ?? 0,
  };
  deps.onStatus({ ...status });
  const reference = pullReference(task.name, task.tag.tag);
  if (!reference.ok) return finish(status, deps, 'Failed', reference.reason);
  const limits = pullLimits(task.tag, started);
  let lastError: Error | undefined;
  for (let attempt = 1; attempt <= limits.attempts; attempt++) {
    const timeoutMs = attemptTimeoutMs(limits, deps.clock.now());
    if (timeoutMs === undefined) {
      lastError = new AgentError('DAEMON_ERR_DEADLINE', 'pulling exceeds the activeDeadlineSeconds');
      break;
    }
    try {
      const info = await pullOnce(task, reference.ref, { timeoutMs, signal }, deps);
      status.imageID = `${task.name}@${info.id}`;
      status.progress = 100;
      deps.log.info({ image: reference.ref, ms: deps.clock.now() - started }, 'image pulled');
      return finish(status, deps, 'Succeeded', undefined);
    } catch (err) {
      if (signal.aborted) return undefined;
      lastError = explain(err, reference.ref, timeoutMs);
      deps.log.warn({ image: reference.ref, attempt, err: lastError.message }, 'pull attempt failed');
      if (attempt < limits.attempts) await backoff(attempt, limits, deps.clock, signal);
      if (signal.aborted) return undefined;
    }
  }
  return finish(status, deps, 'Failed', failureMessage(reference.ref, lastError, task.authProblems, limits));
}

/** One attempt: the IfNotPresent shortcut, then PullImage with each credential in turn. */
async function pullOnce(
  task: PullTask,
  ref: string,
  call: { timeoutMs: number; signal: AbortSignal },
  deps: PullWorkerDeps,
): Promise<ImageInfo> {
  if (task.tag.imagePullPolicy !== 'Always') {
    const present = await deps.images.imageStatus(ref, call);
    if (present) return present;
  }
  const sandboxConfig = {
    labels: task.sandboxConfig?.labels ?? {},
    annotations: { ...task.sandboxConfig?.annotations, [SANDBOX_PULLER_ANNOTATION]: 'flotilla-daemon' },
  };
  let imageRef: string | undefined;
  const errors: Error[] = [];
  for (const auth of task.auths.length > 0 ? task.auths : [undefined]) {
    try {
      imageRef = (await deps.images.pullImage({ image: ref, auth, sandboxConfig }, call)).imageRef;
      break;
    } catch (err) {
      if (call.signal.aborted || hasCode(err, 'DAEMON_ERR_CRI_TIMEOUT')) throw err;
      errors.push(err instanceof Error ? err : new Error(String(err)));
    }
  }
  if (imageRef === undefined) throw errors.length === 1 ? errors[0]! : aggregate(errors);
  // The image id OpenKruise reports is the runtime's id of the image now behind the reference.
  const pulled = await deps.images.imageStatus(ref, call);
  return pulled ?? { id: imageRef, repoTags: [ref], repoDigests: [], size: 0 };
}

function finish(
  status: ImageTagStatus,
  deps: PullWorkerDeps,
  phase: 'Succeeded' | 'Failed',
  message: string | undefined,
): ImageTagStatus {
  const final: ImageTagStatus = { ...status, phase, completionTime: formatTime(deps.clock.now()) };
  if (message) final.message = message;
  deps.onStatus(final);
  return final;
}

async function backoff(failures: number, limits: PullLimits, clock: Clock, signal: AbortSignal): Promise<void> {
  let delay = retryDelayMs(failures);
  // No point sleeping past the deadline: the next attempt would not start anyway.
  if (limits.deadlineMs !== undefined) delay = Math.min(delay, Math.max(0, limits.deadlineMs - clock.now()));
  await sleep(delay, { signal, timers: clock });
}

function explain(err: unknown, ref: string, timeoutMs: number): Error {
  if (hasCode(err, 'DAEMON_ERR_CRI_TIMEOUT')) {
    return new AgentError('DAEMON_ERR_CRI_TIMEOUT', `pull of ${ref} timed out after ${Math.round(timeoutMs / 1000)}s`, {
      cause: err,
    });
  }
  return err instanceof Error ? err : new Error(String(err));
}

function aggregate(errors: Error[]): CriError {
  return new CriError('DAEMON_ERR_CRI_CALL', `[${errors.map((e) => e.message).join(', ')}]`, undefined, {
    cause: errors[0],
  });
}

/** What the user reads in the NodeImage status: what failed, how often, and why secrets did not help. */
function failureMessage(
  ref: string,
  err: Error | undefined,
  problems: readonly AuthProblem[],
  limits: PullLimits,
): string {
  if (hasCode(err, 'DAEMON_ERR_DEADLINE')) return err!.message;
  const tries = limits.attempts === 1 ? '1 attempt' : `${limits.attempts} attempts`;
  const secrets = problems.map((p) => `; pull secret ${p.secret}: ${p.reason}`).join('');
  return `failed to pull image ${JSON.stringify(ref)} after ${tries}: ${err?.message ?? 'unknown error'}${secrets}`;
}
