/**
 * Advanced DaemonSet conversion between apps.kruise.io/v1alpha1 and v1beta1, pure, with OpenKruise
 * v1.9's mapping (apis/apps/v1alpha1/daemonset_conversion.go), lossy parts included:
 * - to v1beta1: rollingUpdateType `Surging` becomes `Standard`; the annotation
 *   `daemonset.kruise.io/progressive-create-pod: "true"` becomes
 *   `spec.scaleStrategy.partitionedScaling: true` and stays on the object;
 *   `status.daemonSetHash` becomes `status.updateRevision`;
 * - to v1alpha1: `spec.scaleStrategy` leaves the spec and, when partitionedScaling is true, sets the
 *   annotation; `status.updateRevision` becomes `status.daemonSetHash`.
 * Metadata and every other field are copied as they are. Nothing records what is lost: a Surging
 * object reads back as Standard, and a v1beta1 `partitionedScaling: false` reads back as absent.
 */
import { ANNOTATION_DAEMONSET_PROGRESSIVE_CREATE_POD, DAEMONSET_ROLLING_UPDATE_SURGING } from '../constants.js';
import { cloneJson, isRecord } from '../../validation/json.js';

type Json = Record<string, unknown>;

const record = (value: unknown): Json | undefined => (isRecord(value) ? value : undefined);

/** Moves `status[from]` to `status[to]`; an empty value is dropped, as Go's omitempty does. */
function renameStatus(obj: Json, from: string, to: string): void {
  const status = record(obj.status);
  if (!status || !(from in status)) return;
  const value = status[from];
  delete status[from];
  if (value !== '' && value !== undefined && value !== null) status[to] = value;
}

/** v1alpha1 → v1beta1 (`apiVersion` is the target's). */
export function daemonSetToV1beta1(alpha: Json, apiVersion: string): Json {
  const beta = cloneJson(alpha);
  beta.apiVersion = apiVersion;
  const spec = record(beta.spec);
  const rolling = record(record(spec?.updateStrategy)?.rollingUpdate);
  if (rolling?.rollingUpdateType === DAEMONSET_ROLLING_UPDATE_SURGING) rolling.rollingUpdateType = 'Standard';
  if (spec) delete spec.scaleStrategy;
  const annotations = record(record(beta.metadata)?.annotations);
  if (spec && annotations?.[ANNOTATION_DAEMONSET_PROGRESSIVE_CREATE_POD] === 'true') {
    spec.scaleStrategy = { partitionedScaling: true };
  }
  renameStatus(beta, 'daemonSetHash', 'updateRevision');
  return beta;
}

/** v1beta1 → v1alpha1. */
export function daemonSetToV1alpha1(beta: Json, apiVersion: string): Json {
  const alpha = cloneJson(beta);
  alpha.apiVersion = apiVersion;
  const spec = record(alpha.spec);
  const partitioned = record(spec?.scaleStrategy)?.partitionedScaling === true;
  if (spec) delete spec.scaleStrategy;
  if (partitioned) {
    const metadata = record(alpha.metadata) ?? {};
    const annotations = record(metadata.annotations) ?? {};
    annotations[ANNOTATION_DAEMONSET_PROGRESSIVE_CREATE_POD] = 'true';
    metadata.annotations = annotations;
    alpha.metadata = metadata;
  }
  renameStatus(alpha, 'updateRevision', 'daemonSetHash');
  return alpha;
}
