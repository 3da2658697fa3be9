/**
 * The SidecarContainer fields OpenKruise v1.9.0 added (apis/apps/v1alpha1/sidecarset_types.go,
 * same in v1beta1), over the generated v1.8 table: `shareVolumeDevicePolicy` after
 * `shareVolumePolicy`, `resourcesPolicy` last. Both are pointers with omitempty, so a SidecarSet
 * that sets neither hashes exactly as under v1.8. Written by hand because the generator pins
 * kruise-api v1.8.0 (the vectors it produces cover the rest of the table).
 */
import { goStructs } from './goStructs.generated.js';
import type { GoStructTable } from './goStructTable.js';

const v18Container = goStructs['kruise.SidecarContainer'] ?? [];
const beforeTransferEnv = v18Container.filter(([name]) => name !== 'transferEnv');

export const kruise19Structs: GoStructTable = {
  ...goStructs,
  'kruise.SidecarContainer': [
    ...beforeTransferEnv,
    ['shareVolumeDevicePolicy', '*kruise.ShareVolumePolicy', 'omitempty'],
    ['transferEnv', '[]kruise.TransferEnvVar', 'omitempty'],
    ['resourcesPolicy', '*kruise.ResourcesPolicy', 'omitempty'],
  ],
  'kruise.ResourcesPolicy': [
    ['targetContainersMode', 'string'],
    ['targetContainersNameRegex', 'string', 'omitempty'],
    ['resourcesExpr', 'kruise.ResourcesExpr'],
  ],
  'kruise.ResourcesExpr': [
    ['limits', '*kruise.ResourceExpr', 'omitempty'],
    ['requests', '*kruise.ResourceExpr', 'omitempty'],
  ],
  'kruise.ResourceExpr': [
    ['cpu', 'string', 'omitempty'],
    ['memory', 'string', 'omitempty'],
  ],
};
