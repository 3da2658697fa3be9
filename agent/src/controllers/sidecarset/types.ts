export type { ControllerRevision, Namespace, Pod } from '../../kube/types.js';
