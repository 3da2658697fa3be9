import { checkSchema } from '../kruise/common/validate-object.js';
import {
  childPath,
  indexPath,
  invalid,
  parseIntOrPercent,
  required,
  validateLabelSelector,
  type FieldError,
  type IntOrString,
} from '../validation/index.js';
import { validateAnalysis } from './analysis.js';
import { RolloutStrategySchema, type RolloutStrategy } from './strategy.js';

function percentAtMost100(value: IntOrString | undefined, path: string): FieldError[] {
  if (value === undefined) return [];
  const parsed = parseIntOrPercent(value);
  if (parsed.kind === 'invalid') return [invalid(path, value, parsed.reason)];
  if (parsed.value < 0) return [invalid(path, value, 'must not be negative')];
  if (parsed.kind === 'percent' && parsed.value > 100) return [invalid(path, value, 'must not be above 100%')];
  return [];
}

function validateWave(strategy: RolloutStrategy, index: number): FieldError[] {
  const wave = strategy.waves[index]!;
  const path = indexPath('waves', index);
  const errors = validateWaveLimits(wave, index, path);
  if (wave.clusters) {
    errors.push(...validateWaveClusters(wave.clusters, childPath(path, 'clusters')));
  } else if (index !== strategy.waves.length - 1) {
    errors.push(
      required(childPath(path, 'clusters'), 'only the last wave may omit clusters (it takes all remaining ones)'),
    );
  }
  if (wave.analysis) errors.push(...validateAnalysis(wave.analysis, childPath(path, 'analysis')));
  wave.canarySteps?.forEach((step, i) => {
    errors.push(
      ...percentAtMost100(step.partition, childPath(indexPath(childPath(path, 'canarySteps'), i), 'partition')),
    );
  });
  return errors;
}

type Wave = RolloutStrategy['waves'][number];

/** maxConcurrency and failureBudget of the wave at `index`. */
function validateWaveLimits(wave: Wave, index: number, path: string): FieldError[] {
  const errors: FieldError[] = [];
  errors.push(...percentAtMost100(wave.maxConcurrency, childPath(path, 'maxConcurrency')));
  errors.push(...percentAtMost100(wave.failureBudget, childPath(path, 'failureBudget')));
  const concurrency = wave.maxConcurrency === undefined ? undefined : parseIntOrPercent(wave.maxConcurrency);
  if (concurrency && concurrency.kind !== 'invalid' && concurrency.value === 0) {
    errors.push(invalid(childPath(path, 'maxConcurrency'), wave.maxConcurrency, 'must allow at least one cluster'));
  }
  // The canary proves a revision before anyone else sees it, so it may not tolerate a failure.
  if (index === 0 && wave.failureBudget !== undefined) {
    const budget = parseIntOrPercent(wave.failureBudget);
    if (budget.kind !== 'invalid' && budget.value !== 0) {
      errors.push(
        invalid(
          childPath(path, 'failureBudget'),
          wave.failureBudget,
          'the first (canary) wave must have a failure budget of 0',
        ),
      );
    }
  }
  return errors;
}

/** A wave's clusters: names or a selector, not both. */
function validateWaveClusters(clusters: NonNullable<Wave['clusters']>, path: string): FieldError[] {
  if (clusters.names && clusters.selector) {
    return [invalid(path, 'names and selector', 'give either names or a selector, not both')];
  }
  if (clusters.selector) return validateLabelSelector(clusters.selector, childPath(path, 'selector'));
  if (!clusters.names) return [required(path, 'names or selector (omit clusters to take every remaining cluster)')];
  const errors: FieldError[] = [];
  if (clusters.names.length === 0) errors.push(required(childPath(path, 'names'), 'a wave needs at least one cluster'));
  const seen = new Set<string>();
  clusters.names.forEach((n, i) => {
    if (seen.has(n))
      errors.push({
        path: indexPath(childPath(path, 'names'), i),
        code: 'Duplicate',
        message: `Duplicate value: "${n}"`,
      });
    seen.add(n);
  });
  return errors;
}

/**
 * Checks a strategy on its own (types, ranges, the canary rule, wave names). Whether waves
 * overlap or match nothing depends on the fleet and is checked when the plan is frozen.
 */
export function validateRolloutStrategy(input: unknown): FieldError[] {
  const schemaErrors = checkSchema(RolloutStrategySchema, input);
  if (schemaErrors.length > 0) return schemaErrors;
  const strategy = input as RolloutStrategy;
  const errors: FieldError[] = [];
  const names = new Set<string>();
  strategy.waves.forEach((wave, i) => {
    if (names.has(wave.name)) {
      errors.push({
        path: childPath(indexPath('waves', i), 'name'),
        code: 'Duplicate',
        message: `Duplicate value: "${wave.name}"`,
      });
    }
    names.add(wave.name);
    errors.push(...validateWave(strategy, i));
  });
  errors.push(...percentAtMost100(strategy.failureBudget, 'failureBudget'));
  return errors;
}
