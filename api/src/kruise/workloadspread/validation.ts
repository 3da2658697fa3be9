/**
 * WorkloadSpread validation: the schema, then OpenKruise v1.9's validating-webhook rules
 * (pkg/webhook/workloadspread/validating) on the object. Two of v1.9's checks need the cluster
 * and live in the agent's webhook: a patch merged onto the target's pod template, and another
 * WorkloadSpread in the namespace with the same target (validateWorkloadSpreadConflict below
 * does the comparison). Custom workload white lists are not supported, so every other kind is
 * refused.
 */
import { childPath, type FieldError, indexPath, invalid, required } from '../../validation/field-error.js';
import { parseIntOrPercent } from '../../validation/intstr.js';
import { validateLabelSelector } from '../../validation/labels.js';
import { KruiseKind } from '../constants.js';
import { validateMetadata } from '../common/metadata-validation.js';
import { type KindRules, validateObject } from '../common/validate-object.js';
import { groupOf, WORKLOADSPREAD_MAX_SCHEDULE_FAILED_SECONDS, WORKLOADSPREAD_TARGET_KINDS } from './constants.js';
import { defaultWorkloadSpread } from './defaults.js';
import { type WorkloadSpread, WorkloadSpreadSchema, type WorkloadSpreadSpec } from './schema.js';
import {
  validateNodeSelectorTerm,
  validatePreferredSchedulingTerms,
  validateTolerations,
} from './scheduling-validation.js';

const INT32_MAX = 2147483647;

/** All three fields set, a kind v1.9 spreads, from one of its groups. */
function validateTargetRef(spec: WorkloadSpreadSpec): FieldError[] {
  const path = 'spec.targetRef';
  const ref = spec.targetRef;
  if (!ref.apiVersion || !ref.kind || !ref.name) {
    return [invalid(path, ref, 'empty TargetReference is not valid for WorkloadSpread.')];
  }
  const known = WORKLOADSPREAD_TARGET_KINDS.find((k) => k.kind === ref.kind);
  if (!known) return [invalid(path, ref, "TargetReference's GroupKind is not permitted.")];
  if (!known.groups.includes(groupOf(ref.apiVersion))) {
    return [invalid(path, ref, `TargetReference is not valid for ${ref.kind}.`)];
  }
  return [];
}

interface MaxReplicasState {
  firstType?: 'int' | 'percent';
  percentSum: number;
}

/** One subset's maxReplicas against the ones before it; an error ends the checks (as v1.9). */
function maxReplicasError(
  spec: WorkloadSpreadSpec,
  value: number | string,
  at: string,
  state: MaxReplicasState,
): FieldError | undefined {
  const type = typeof value === 'number' ? 'int' : 'percent';
  state.firstType ??= type;
  if (type !== state.firstType) return invalid(at, value, 'the maxReplicas type of all subsets must be the same');
  if (spec.targetRef.kind === 'StatefulSet' && type !== 'int') {
    return invalid(at, value, 'the maxReplicas type must be Int for StatefulSet');
  }
  const parsed = parseIntOrPercent(value);
  if (parsed.kind === 'invalid' || parsed.value < 0) return invalid(at, value, 'maxReplicas is not valid for subset');
  if (parsed.kind !== 'percent') return undefined;
  state.percentSum += parsed.value;
  return state.percentSum > 100
    ? invalid(at, value, "the sum of all subset's maxReplicas exceeds 100% is no permitted")
    : undefined;
}

/**
 * maxReplicas: one type for all subsets, a count for StatefulSets, never negative, percentages
 * summing to at most 100% (exactly 100% unless the last subset is unlimited). Like v1.9, the first
 * maxReplicas problem ends the subset checks.
 */
function validateMaxReplicas(spec: WorkloadSpreadSpec, path: string): FieldError[] {
  const state: MaxReplicasState = { percentSum: 0 };
  for (const [i, subset] of spec.subsets.entries()) {
    if (subset.maxReplicas === undefined) continue;
    const error = maxReplicasError(spec, subset.maxReplicas, childPath(indexPath(path, i), 'maxReplicas'), state);
    if (error) return [error];
  }
  const last = spec.subsets.at(-1);
  if (state.firstType === 'percent' && state.percentSum < 100 && last?.maxReplicas !== undefined) {
    return [
      invalid(
        childPath(indexPath(path, 0), 'maxReplicas'),
        spec.subsets[0]?.maxReplicas,
        'maxReplicas sum of all subsets must equal 100% when type is specified as percent',
      ),
    ];
  }
  return [];
}

/** At least one subset; names set and unique; scheduling fields as in a pod spec; maxReplicas. */
function validateSubsets(spec: WorkloadSpreadSpec): FieldError[] {
  const path = 'spec.subsets';
  if (spec.subsets.length === 0) return [required(path, 'subsets number must >= 1 in WorkloadSpread')];
  const errors: FieldError[] = [];
  const names = new Set<string>();
  spec.subsets.forEach((subset, i) => {
    const at = indexPath(path, i);
    if (subset.name === '') errors.push(invalid(childPath(at, 'name'), subset.name, 'subset name is required'));
    else if (names.has(subset.name)) {
      errors.push(invalid(childPath(at, 'name'), subset.name, `duplicated subset name ${subset.name}`));
    }
    names.add(subset.name);
    if (subset.requiredNodeSelectorTerm) {
      errors.push(
        ...validateNodeSelectorTerm(subset.requiredNodeSelectorTerm, childPath(at, 'requiredNodeSelectorTerm')),
      );
    }
    if (subset.preferredNodeSelectorTerms) {
      errors.push(
        ...validatePreferredSchedulingTerms(
          subset.preferredNodeSelectorTerms,
          childPath(at, 'preferredNodeSelectorTerms'),
        ),
      );
    }
    if (subset.tolerations) errors.push(...validateTolerations(subset.tolerations, childPath(at, 'tolerations')));
  });
  return [...errors, ...validateMaxReplicas(spec, path)];
}

/** Type Fixed or Adaptive; adaptive settings only with Adaptive, an unlimited last subset, a bounded window. */
function validateScheduleStrategy(spec: WorkloadSpreadSpec): FieldError[] {
  const path = 'spec.scheduleStrategy';
  const { type = '', adaptive } = spec.scheduleStrategy ?? {};
  const errors: FieldError[] = [];
  if (type !== '' && type !== 'Fixed' && type !== 'Adaptive') {
    errors.push(invalid(childPath(path, 'type'), type, "ScheduleStrategy's type is not valid"));
  }
  if (!adaptive) return errors;
  const seconds = adaptive.rescheduleCriticalSeconds;
  if (type !== 'Adaptive') {
    errors.push(
      invalid(
        childPath(path, 'type'),
        type,
        "the scheduleStrategy's type must be adaptive when using adaptive scheduleStrategy",
      ),
    );
  }
  const subsets = spec.subsets;
  if (subsets.length > 1 && subsets.at(-1)?.maxReplicas !== undefined) {
    errors.push(
      invalid(
        childPath(path, 'adaptive'),
        seconds,
        "the last subset's maxReplicas must be not specified when using adaptive scheduleStrategy",
      ),
    );
  }
  const allowedMax =
    subsets.length > 1 ? Math.trunc(WORKLOADSPREAD_MAX_SCHEDULE_FAILED_SECONDS / (subsets.length - 1)) : INT32_MAX;
  if (seconds !== undefined && (seconds < 0 || seconds > allowedMax)) {
    errors.push(
      invalid(
        childPath(childPath(path, 'adaptive'), 'rescheduleCriticalSeconds'),
        seconds,
        `rescheduleCriticalSeconds < 0 or rescheduleCriticalSeconds > ${allowedMax} is not permitted`,
      ),
    );
  }
  return errors;
}

function validateTargetFilter(spec: WorkloadSpreadSpec): FieldError[] {
  const selector = spec.targetFilter?.selector;
  return selector ? validateLabelSelector(selector, 'spec.targetFilter.selector') : [];
}

/** The semantic rules, on a WorkloadSpread that passed the schema. */
export function validateDefaultedWorkloadSpread(ws: WorkloadSpread): FieldError[] {
  return [
    ...validateMetadata(ws.metadata),
    ...validateTargetRef(ws.spec),
    ...validateSubsets(ws.spec),
    ...validateScheduleStrategy(ws.spec),
    ...validateTargetFilter(ws.spec),
  ];
}

/**
 * v1.9's conflict rule: no two WorkloadSpreads of a namespace may target the same workload
 * (same group, kind and name). `others` are the namespace's WorkloadSpreads.
 */
export function validateWorkloadSpreadConflict(
  ws: Pick<WorkloadSpread, 'metadata' | 'spec'>,
  others: readonly Pick<WorkloadSpread, 'metadata' | 'spec'>[],
): FieldError[] {
  const ref = ws.spec.targetRef;
  return others
    .filter((other) => other.metadata?.name !== ws.metadata?.name)
    .filter((other) => {
      const theirs = other.spec.targetRef;
      return (
        groupOf(theirs.apiVersion) === groupOf(ref.apiVersion) && theirs.kind === ref.kind && theirs.name === ref.name
      );
    })
    .map((other) =>
      invalid(
        'spec.targetRef',
        ref,
        `ws.spec.targetRef is in conflict with other WorkloadSpread ${other.metadata?.name ?? ''}`,
      ),
    );
}

/** How WorkloadSpreads are checked, for the shared validation pipeline. */
export const WORKLOADSPREAD_RULES: KindRules<WorkloadSpread> = {
  kind: KruiseKind.WorkloadSpread,
  schema: WorkloadSpreadSchema,
  defaults: defaultWorkloadSpread,
  semantic: validateDefaultedWorkloadSpread,
};

/**
 * Every problem with a WorkloadSpread document, as field errors; empty when Flotilla accepts it.
 * Never throws, whatever the input.
 */
export function validateWorkloadSpread(document: unknown): FieldError[] {
  return validateObject(document, WORKLOADSPREAD_RULES);
}
