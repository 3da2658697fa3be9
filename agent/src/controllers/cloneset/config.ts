/**
 * The CloneSet controller's settings, in the table form of settings/setting.ts.
 *
 * --inplace-workload-vertical-scaling (FLOTILLA_INPLACE_WORKLOAD_VERTICAL_SCALING): OpenKruise's
 * alpha gate InPlaceWorkloadVerticalScaling, off as there. On, a template change of container cpu
 * or memory values is applied to running pods in place (through the pods' resize subresource on
 * Kubernetes ≥ 1.32) instead of recreating them. The Helm chart sets it from
 * featureGates.InPlaceWorkloadVerticalScaling.
 */
import { bool } from '../../settings/kinds.js';
import type { SettingsTable } from '../../settings/setting.js';

export const CLONESET_SETTINGS = {
  inPlaceWorkloadVerticalScaling: {
    flag: 'inplace-workload-vertical-scaling',
    env: ['FLOTILLA_INPLACE_WORKLOAD_VERTICAL_SCALING'],
    kind: bool(),
    default: false,
    help: "resize CloneSet pods' cpu/memory in place (OpenKruise's InPlaceWorkloadVerticalScaling gate)",
  },
} satisfies SettingsTable;
