/**
 * Replaces a job in the cluster (job-rerun.ts decides when): deletes it with Foreground
 * propagation, so the apiserver keeps it until the garbage collector removed its pods, and waits
 * until that object is gone. The caller then creates the new one, whose pods run the new template
 * on nodes the old pods left. A wait that runs out throws; the desired message is redelivered
 * and the replacement goes on from where it stands (the object still being deleted, or gone).
 */
import { sleep } from '@flotilla/api';
import { AgentError } from '../errors.js';
import type { KubeApplier, ObjectRef } from './types.js';

export interface ReplaceWait {
  /** How long to wait for the old object to go. */
  timeoutMs: number;
  /** How often to look. */
  pollMs: number;
}

export const DEFAULT_REPLACE_WAIT: ReplaceWait = { timeoutMs: 60_000, pollMs: 250 };

/** Deletes the object and its pods; resolves once no object with its uid is left. */
export async function removeForReplacement(
  kube: KubeApplier,
  ref: ObjectRef,
  wait: ReplaceWait = DEFAULT_REPLACE_WAIT,
): Promise<void> {
  const current = await kube.get(ref);
  if (!current) return;
  const uid = current.metadata?.uid;
  await kube.delete(ref, 'Foreground');
  const deadline = Date.now() + wait.timeoutMs;
  for (;;) {
    const now = await kube.get(ref);
    if (!now || now.metadata?.uid !== uid) return;
    if (Date.now() >= deadline) {
      throw new AgentError(
        'AGENT_ERR_KUBE_API',
        `${ref.kind} ${ref.namespace}/${ref.name}: still being deleted after ${wait.timeoutMs} ms (its pods have not gone)`,
      );
    }
    await sleep(wait.pollMs);
  }
}
