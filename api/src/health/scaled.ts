import { MalformedField } from './fields.js';

/**
 * An IntOrString against a total, as k8s intstr.GetScaledValueFromIntOrPercent computes it:
 * an integer as is, "N%" as N*total/100 rounded up or down. Anything else is malformed.
 */
export function scaledValue(value: number | string, total: number, roundUp: boolean, field: string): number {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new MalformedField(field, `is not an integer: ${value}`);
    return value;
  }
  const match = /^(-?\d+)%$/.exec(value);
  if (match === null) throw new MalformedField(field, `is not an integer or a percentage: ${JSON.stringify(value)}`);
  const exact = (Number(match[1]) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/**
 * Pods kept at the old revision by a partition (OpenKruise CalculatePartitionReplicas): rounds
 * up, but a percentage below 100% still updates at least one pod when there are two or more,
 * and the result stays within [0, replicas].
 */
export function partitionReplicas(partition: number | string | undefined, replicas: number, field: string): number {
  if (partition === undefined) return 0;
  let kept = scaledValue(partition, replicas, true, field);
  if (replicas > 1 && kept === replicas && typeof partition === 'string' && partition !== '100%') kept = replicas - 1;
  return Math.max(Math.min(kept, replicas), 0);
}
