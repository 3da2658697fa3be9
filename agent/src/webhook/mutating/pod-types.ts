/** Pod shapes shared with the SidecarSet controller. */
export type { MutablePod, Pod } from '../../controllers/sidecarset/types.js';
