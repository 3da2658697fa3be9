/**
 * Container-name clashes between SidecarSets met while injecting a pod become a Warning event on
 * the SidecarSet whose container was left out (the first SidecarSet by name keeps the name).
 */
import { KRUISE_API_VERSION, type SidecarSet } from '@flotilla/api';
import type { InjectionConflict } from '../controllers/sidecarset/inject.js';
import type { EventRecording } from '../runtime/events.js';
import type { ReadStore } from '../runtime/cache.js';

export type ConflictRecorder = (conflicts: readonly InjectionConflict[], namespace: string) => void;

export function conflictRecorder(sidecarSets: ReadStore<SidecarSet>, events: EventRecording): ConflictRecorder {
  return (conflicts, namespace) => {
    for (const c of conflicts) {
      const ss = sidecarSets.get(undefined, c.skippedFrom);
      if (!ss) continue;
      const msg = `container ${c.container} of SidecarSet ${c.skippedFrom} was not injected into a pod in namespace ${namespace}: SidecarSet ${c.keptFrom} injects a container of that name (the first SidecarSet by name wins)`;
      events.event(
        { ...ss, apiVersion: KRUISE_API_VERSION, kind: 'SidecarSet' },
        'Warning',
        'SidecarContainerConflict',
        msg,
      );
    }
  };
}
