/**
 * Whether applying the hub's manifest of a run-to-completion kind (a BroadcastJob) must replace
 * the job in the cluster instead of patching it. OpenKruise accepts a changed template on an
 * existing BroadcastJob but never runs a finished job again, so a rollout of a new template would
 * leave the old run standing and reported as done. The agent instead deletes the job (its pods
 * go with it) and creates it anew, which runs the new template on every node it fits.
 *
 * Decided from plain inputs: the manifest to apply (already stamped by desired-decision) and the
 * object in the cluster. The template is compared by the hash of the hub's spec.template that the
 * agent stamps (api/src/protocol/job-template.ts), because the stored template carries the
 * webhook's defaults and never equals the hub's text. The run hash is set when the job is created
 * and carried forward by patches, so the health rule sees a template that was patched in without
 * a new run.
 */
import {
  REVISION_ANNOTATION,
  RUN_TEMPLATE_HASH_ANNOTATION,
  TEMPLATE_HASH_ANNOTATION,
  jobTemplateHash,
  type WorkloadKind,
} from '@flotilla/api';
import type { KubeObject } from './types.js';

/** Kinds whose object is one run: a changed template needs a new object. */
const RERUN_KINDS: ReadonlySet<WorkloadKind> = new Set(['BroadcastJob']);

export interface JobApplyPlan {
  /** Delete the current object (and its pods), wait until it is gone, then create `manifest`. */
  replace: boolean;
  /** The manifest with the template and run hashes stamped. */
  manifest: KubeObject;
  /** Why it is replaced, for the log. */
  reason?: 'template-changed' | 'being-deleted' | 'revision-changed';
}

function annotation(obj: KubeObject | undefined, key: string): string | undefined {
  return obj?.metadata?.annotations?.[key];
}

function withHashes(manifest: KubeObject, templateHash: string, runHash: string): KubeObject {
  const metadata = manifest.metadata ?? {};
  return {
    ...manifest,
    metadata: {
      ...metadata,
      annotations: {
        ...metadata.annotations,
        [TEMPLATE_HASH_ANNOTATION]: templateHash,
        [RUN_TEMPLATE_HASH_ANNOTATION]: runHash,
      },
    },
  };
}

/** Why `current` cannot be patched with a manifest whose template hashes to `hash`, if it cannot. */
function replaceReason(manifest: KubeObject, current: KubeObject, hash: string): JobApplyPlan['reason'] {
  // A replacement that did not finish (the old job is still going away): finish it.
  if (current.metadata?.deletionTimestamp) return 'being-deleted';
  const currentHash = annotation(current, TEMPLATE_HASH_ANNOTATION);
  if (currentHash !== undefined) return currentHash === hash ? undefined : 'template-changed';
  // Created before the agent stamped hashes: only a new revision may carry a new template.
  const revision = annotation(manifest, REVISION_ANNOTATION);
  return revision !== undefined && annotation(current, REVISION_ANNOTATION) !== revision
    ? 'revision-changed'
    : undefined;
}

/** Plans the apply of `manifest` over `current` (undefined: not in the cluster). */
export function planJobApply(kind: WorkloadKind, manifest: KubeObject, current: KubeObject | undefined): JobApplyPlan {
  if (!RERUN_KINDS.has(kind)) return { replace: false, manifest };
  const hash = jobTemplateHash((manifest.spec as { template?: unknown } | undefined)?.template);
  if (!current) return { replace: false, manifest: withHashes(manifest, hash, hash) };
  const reason = replaceReason(manifest, current, hash);
  if (reason) return { replace: true, reason, manifest: withHashes(manifest, hash, hash) };
  const ran =
    annotation(current, RUN_TEMPLATE_HASH_ANNOTATION) ?? annotation(current, TEMPLATE_HASH_ANNOTATION) ?? hash;
  return { replace: false, manifest: withHashes(manifest, hash, ran) };
}
