/**
 * OpenKruise v1.9's deletion protection, decided purely
 * (pkg/webhook/util/deletionprotection/deletion_protection.go): the label
 * `policy.kruise.io/delete-protection` on a Namespace, CRD, workload, Service or Ingress being
 * deleted.
 *
 * - `Always` refuses the deletion of every protected kind.
 * - `Cascading` refuses it while something would go with it: a Namespace with an active pod or a
 *   Bound PVC, a CRD with a custom resource (only with the DeletionProtectionForCRDCascadingGate;
 *   without it the CRD is refused outright), a workload whose `spec.replicas` is set and above 0.
 *   Services and Ingresses know only `Always`.
 * - Any other value, no label, or an object already being deleted: allowed.
 *
 * What needs counting is asked for as queries (what the apiserver holds), and the answer decides;
 * the handler (deletion-protection-handler.ts) does the counting.
 */

/** The label, and its values OpenKruise knows. */
export const LABEL_DELETE_PROTECTION = 'policy.kruise.io/delete-protection';
export const DELETE_PROTECTION_ALWAYS = 'Always';
export const DELETE_PROTECTION_CASCADING = 'Cascading';

/** The kinds deletion protection covers, grouped by how Cascading is judged. */
export type ProtectedKind = 'Namespace' | 'CustomResourceDefinition' | 'Workload' | 'Service' | 'Ingress';

/** Something to count before deciding. */
export type InventoryQuery =
  | { what: 'activePods'; namespace: string }
  | { what: 'boundPvcs'; namespace: string }
  /** Custom resources of a CRD at its storage version, cluster-wide, not being deleted. */
  | { what: 'activeCustomResources'; group: string; version: string; plural: string };

export type ProtectionVerdict = { allowed: true } | { allowed: false; message: string };

export type ProtectionStep =
  ProtectionVerdict | { count: InventoryQuery[]; decide(counts: readonly number[]): ProtectionVerdict };

/** OpenKruise's feature gates for it (ResourcesDeletionProtection, DeletionProtectionForCRDCascadingGate). */
export interface ProtectionGates {
  resourcesDeletionProtection: boolean;
  crdCascading: boolean;
}

/** The parts of the deleted object the decision reads. */
export interface ProtectedObject {
  metadata?: { name?: string; labels?: Record<string, string>; deletionTimestamp?: string | null };
  spec?: {
    replicas?: number | null;
    group?: string;
    names?: { plural?: string };
    versions?: { name: string; storage?: boolean }[];
    /** apiextensions v1beta1 CRDs name one version here. */
    version?: string;
  };
}

const ALLOW: ProtectionVerdict = { allowed: true };

const refuse = (value: string, detail?: string): ProtectionVerdict => ({
  allowed: false,
  message: `forbidden by ResourcesProtectionDeletion for ${LABEL_DELETE_PROTECTION}=${value}${detail ? ` and ${detail}` : ''}`,
});

/** Refused when the count is above 0, saying `<what> N>0`. */
const refuseIfAny = (value: string, what: string, n: number): ProtectionVerdict | undefined =>
  n > 0 ? refuse(value, `${what} ${n}>0`) : undefined;

function storageVersion(spec: NonNullable<ProtectedObject['spec']>): string | undefined {
  return spec.versions?.find((v) => v.storage)?.name ?? spec.version;
}

const CASCADING = DELETE_PROTECTION_CASCADING;

function cascadingNamespace(obj: ProtectedObject): ProtectionStep {
  const namespace = obj.metadata?.name ?? '';
  return {
    count: [
      { what: 'activePods', namespace },
      { what: 'boundPvcs', namespace },
    ],
    decide: ([pods = 0, pvcs = 0]) =>
      refuseIfAny(CASCADING, 'active pods', pods) ?? refuseIfAny(CASCADING, '"Bound" status pvc', pvcs) ?? ALLOW,
  };
}

function cascadingCrd(obj: ProtectedObject, gates: ProtectionGates): ProtectionStep {
  if (!gates.crdCascading)
    return refuse(CASCADING, 'feature-gate DeletionProtectionForCRDCascadingGate is not enabled');
  const spec = obj.spec ?? {};
  const version = storageVersion(spec);
  const plural = spec.names?.plural;
  // A CRD without a storage version can hold no custom resource.
  if (!spec.group || !plural || !version) return ALLOW;
  return {
    count: [{ what: 'activeCustomResources', group: spec.group, version, plural }],
    decide: ([n = 0]) => refuseIfAny(CASCADING, 'active CRs', n) ?? ALLOW,
  };
}

function cascadingWorkload(obj: ProtectedObject): ProtectionVerdict {
  const replicas = obj.spec?.replicas;
  return typeof replicas === 'number' ? (refuseIfAny(CASCADING, 'replicas', replicas) ?? ALLOW) : ALLOW;
}

function cascading(kind: ProtectedKind, obj: ProtectedObject, gates: ProtectionGates): ProtectionStep {
  switch (kind) {
    case 'Namespace':
      return cascadingNamespace(obj);
    case 'CustomResourceDefinition':
      return cascadingCrd(obj, gates);
    case 'Workload':
      return cascadingWorkload(obj);
    case 'Service':
    case 'Ingress':
      return ALLOW;
  }
}

/** What deleting `obj` (of `kind`) needs: a verdict, or counts first. */
export function deletionProtectionStep(
  kind: ProtectedKind,
  obj: ProtectedObject | undefined,
  gates: ProtectionGates,
): ProtectionStep {
  if (!gates.resourcesDeletionProtection || !obj) return ALLOW;
  if (obj.metadata?.deletionTimestamp) return ALLOW;
  const value = obj.metadata?.labels?.[LABEL_DELETE_PROTECTION];
  if (value === DELETE_PROTECTION_ALWAYS) return refuse(value);
  if (value === DELETE_PROTECTION_CASCADING) return cascading(kind, obj, gates);
  return ALLOW;
}

/** Counting is done over plain objects; these say which count. */
export function isActivePod(pod: {
  metadata?: { deletionTimestamp?: string | null };
  status?: { phase?: string };
}): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata?.deletionTimestamp;
}

export function isBoundPvc(pvc: {
  metadata?: { deletionTimestamp?: string | null };
  status?: { phase?: string };
}): boolean {
  return pvc.status?.phase === 'Bound' && !pvc.metadata?.deletionTimestamp;
}

export function isActiveObject(obj: { metadata?: { deletionTimestamp?: string | null } }): boolean {
  return !obj.metadata?.deletionTimestamp;
}
