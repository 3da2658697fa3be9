/**
 * A BroadcastJob runs its pod template once: OpenKruise lets the template change afterwards but
 * never runs a finished job again. The fleet rolls new templates out as new revisions, so the
 * agent replaces a job whose template changed (see agent/src/hublink/job-rerun.ts) and stamps two
 * annotations that let the health rule tell which template the job's run started from:
 * - TEMPLATE_HASH_ANNOTATION: the hash of the hub's spec.template, written on every apply;
 * - RUN_TEMPLATE_HASH_ANNOTATION: the hash the job was created with, carried forward unchanged
 *   by later applies (which only ever patch a job whose template did not change).
 * The two differ only when a template was patched into an existing job: then the job has not run
 * it, and its health is Progressing, never Healthy on the old run.
 */
import { fnv1Hash32 } from '../revision/fnv1.js';
import { goJsonMarshal } from '../revision/goJson.js';
import { safeEncodeString } from '../revision/safeEncode.js';
import { utf8Bytes } from '../revision/utf8.js';

export const TEMPLATE_HASH_ANNOTATION = 'flotilla.io/template-hash';
export const RUN_TEMPLATE_HASH_ANNOTATION = 'flotilla.io/run-template-hash';

/**
 * A short stable hash of a pod template as the hub sends it: FNV-1 32 over its JSON with keys
 * sorted, safe-encoded like revision hashes. Key order never changes it; any value change does.
 */
export function jobTemplateHash(template: unknown): string {
  return safeEncodeString(String(fnv1Hash32(utf8Bytes(goJsonMarshal(template ?? null)))));
}
