/**
 * The BroadcastJob controller's settings, in the table form of settings/setting.ts.
 *
 * --assign-bcj-pods-by-scheduler (FLOTILLA_ASSIGN_BCJ_PODS_BY_SCHEDULER): OpenKruise's flag of
 * the same name, on by default as there. On, each pod is pinned to its node by a required node
 * affinity and the scheduler binds it; off, the controller binds it itself through spec.nodeName.
 */
import { bool } from '../../settings/kinds.js';
import type { SettingsTable } from '../../settings/setting.js';

export const BROADCASTJOB_SETTINGS = {
  assignBcjPodsByScheduler: {
    flag: 'assign-bcj-pods-by-scheduler',
    env: ['FLOTILLA_ASSIGN_BCJ_PODS_BY_SCHEDULER'],
    kind: bool(),
    default: true,
    help: 'let the scheduler bind BroadcastJob pods (node affinity); false binds them by nodeName',
  },
} satisfies SettingsTable;
