import { countAt, recordAt } from './fields.js';
import { type HealthVerdict, verdict } from './verdict.js';

/**
 * Stale unless the status was computed from the spec we are looking at. Returns undefined
 * when the status is current. `optional` is for kinds whose status has no observedGeneration
 * (OpenKruise's ImagePullJob): then only a present observedGeneration is checked.
 */
export function generationVerdict(
  object: Record<string, unknown>,
  status: Record<string, unknown>,
  optional = false,
): HealthVerdict | undefined {
  const generation = countAt(recordAt(object, 'metadata', 'metadata'), 'generation', 'metadata.generation');
  const observed = countAt(status, 'observedGeneration', 'status.observedGeneration');
  if (optional && observed === undefined) return undefined;
  if (generation === undefined) {
    return verdict(
      'Unknown',
      'MissingGeneration',
      'metadata.generation is not set, so status freshness cannot be checked',
    );
  }
  if (observed === undefined || observed < generation) {
    return verdict(
      'Stale',
      'StatusNotObserved',
      `status reflects generation ${observed ?? 'none'}, spec is at generation ${generation}`,
    );
  }
  if (observed > generation) {
    return verdict(
      'Unknown',
      'ObservedGenerationAhead',
      `status reflects generation ${observed}, newer than the spec's ${generation}: the spec read is out of date`,
    );
  }
  return undefined;
}
