export type { HealthState, HealthVerdict } from './verdict.js';
export type { CloneSetHealthInput } from './cloneSetHealth.js';
export { cloneSetHealth } from './cloneSetHealth.js';
export type { SidecarSetHealthInput } from './sidecarSetHealth.js';
export { sidecarSetHealth } from './sidecarSetHealth.js';
export type { ImagePullJobHealthInput } from './imagePullJobHealth.js';
export { imagePullJobHealth } from './imagePullJobHealth.js';
export type { BroadcastJobHealthInput } from './broadcastJobHealth.js';
export { broadcastJobHealth } from './broadcastJobHealth.js';
