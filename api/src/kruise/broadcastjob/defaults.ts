/**
 * BroadcastJob defaults as OpenKruise v1.9's mutating webhook applies them (SetDefaultsBroadcastJob
 * in apis/apps/defaults/v1beta1.go, with the pod template defaults the TemplateNoDefaults gate
 * leaves on by default). The template's restartPolicy defaults to Always, which validation then
 * refuses: a BroadcastJob must say Never or OnFailure.
 */
import { cloneJson } from '../../validation/json.js';
import { defaultPodSpec } from '../common/pod-defaults.js';
import type { BroadcastJob } from './schema.js';

/** spec.parallelism when unset: no limit (math.MaxInt32, as OpenKruise stores it). */
export const DEFAULT_BROADCASTJOB_PARALLELISM = 2147483647;

/** A copy of the BroadcastJob with OpenKruise's defaults applied. Idempotent. */
export function defaultBroadcastJob(job: BroadcastJob): BroadcastJob {
  const out = cloneJson(job);
  const spec = out.spec;
  // Go's PodTemplateSpec always has a spec, so the pod defaults land even on a template without one.
  spec.template.spec ??= {};
  defaultPodSpec(spec.template.spec);
  const completion = (spec.completionPolicy ??= {});
  if (!completion.type) completion.type = 'Always';
  spec.parallelism ??= DEFAULT_BROADCASTJOB_PARALLELISM;
  const failure = (spec.failurePolicy ??= {});
  if (!failure.type) failure.type = 'FailFast';
  return out;
}
