/**
 * The daemon's reconcile of its one NodeImage: bring the pull workers in line with the spec,
 * then publish what they report. Worker status changes enqueue the node again, so results reach
 * the apiserver as they happen rather than on a polling interval.
 */
import { KRUISE_API_VERSION, type NodeImage } from '@flotilla/api';
import type { Reconciler } from '../runtime/controller.js';
import type { Puller } from './puller.js';
import { nodeImageStatus } from './status.js';
import type { StatusWriter } from './status-writer.js';
import type { Lister } from '../runtime/cache.js';

export interface DaemonReconcilerDeps {
  nodeName: string;
  nodeImages: Lister<NodeImage>;
  puller: Pick<Puller, 'sync' | 'statusOf'>;
  writer: StatusWriter;
  /** Republish even without changes this often (heals a status someone else overwrote). */
  resyncMs: number;
}

export function daemonReconciler(deps: DaemonReconcilerDeps): Reconciler {
  return async () => {
    const nodeImage = deps.nodeImages.get(undefined, deps.nodeName);
    if (!nodeImage || nodeImage.metadata?.deletionTimestamp) {
      // No NodeImage (yet, or any more): nothing may keep pulling for it.
      deps.puller.sync({ apiVersion: KRUISE_API_VERSION, kind: 'NodeImage', spec: {} });
      return;
    }
    deps.puller.sync(nodeImage);
    const wait = await deps.writer.write(
      nodeImage,
      nodeImageStatus(nodeImage.spec, (n) => deps.puller.statusOf(n)),
    );
    return { requeueAfter: wait > 0 ? wait : deps.resyncMs };
  };
}
