/**
 * The CloneSet controller's own names for api types; the core objects it reads (pods, PVCs,
 * revisions) are the agent's shared shapes in kube/types.ts.
 */
import type { PodTemplateSpec } from '@flotilla/api';

export type { CloneSet } from '@flotilla/api';

/** The pod template as a revision's data carries it. */
export type Template = PodTemplateSpec;
