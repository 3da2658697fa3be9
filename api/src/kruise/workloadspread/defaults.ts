/**
 * WorkloadSpread defaults. OpenKruise v1.9 has no defaulting webhook for WorkloadSpread and its
 * types carry no default markers, so defaulting is a copy; it exists so that WorkloadSpread runs
 * through the same validation pipeline as every other kind.
 */
import { cloneJson } from '../../validation/json.js';
import type { WorkloadSpread } from './schema.js';

/** A copy of the WorkloadSpread; nothing to default. Idempotent. */
export function defaultWorkloadSpread(ws: WorkloadSpread): WorkloadSpread {
  return cloneJson(ws);
}
