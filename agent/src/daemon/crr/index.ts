/**
 * The daemon's ContainerRecreateRequest worker: an informer on this node's active CRRs (labels
 * node-name and active, as kruise-daemon selects them), queued per pod, reconciled against the
 * node's runtime through the CRI RuntimeService.
 */
import {
  LABEL_CRR_ACTIVE,
  LABEL_CRR_NODE_NAME,
  LABEL_CRR_POD_NAME,
  type ContainerRecreateRequest,
  type CrrStatus,
} from '@flotilla/api';
import type { Clock } from '../../runtime/clock.js';
import type { EventRecording } from '../../runtime/events.js';
import type { ComponentRegistrar } from '../../runtime/component.js';
import type { Controller } from '../../runtime/controller.js';
import { namespacedKey } from '../../runtime/kube-object.js';
import { resourcePath, Resources } from '../../runtime/resource.js';
import { PatchType, type KubeRest } from '../../runtime/rest.js';
import type { RuntimeService } from '../cri/runtime-service.js';
import { crrDaemonReconciler, type CrrStatusWriter } from './reconciler.js';

/** Merge-patches the status, guarded by the resourceVersion the plan was made from. */
export function kubeCrrStatusWriter(rest: KubeRest): CrrStatusWriter {
  return {
    async patchStatus(crr: ContainerRecreateRequest, status: CrrStatus) {
      await rest.request({
        method: 'PATCH',
        path: resourcePath(Resources.containerRecreateRequests, crr.metadata?.namespace, crr.metadata?.name, 'status'),
        body: { metadata: { resourceVersion: crr.metadata?.resourceVersion }, status },
        contentType: PatchType.merge,
      });
    },
  };
}

export interface CrrDaemonOptions {
  nodeName: string;
  runtime: RuntimeService;
  writer: CrrStatusWriter;
  clock: Clock;
  events?: EventRecording;
  resyncMs?: number;
}

export function registerCrrDaemon(manager: ComponentRegistrar, options: CrrDaemonOptions): Controller {
  const crrs = manager.informer<ContainerRecreateRequest>({
    resource: Resources.containerRecreateRequests,
    labelSelector: `${LABEL_CRR_NODE_NAME}=${options.nodeName},${LABEL_CRR_ACTIVE}=true`,
  });
  const controller = manager.controller({
    name: 'containerrecreate',
    workers: 4,
    reconcile: crrDaemonReconciler({
      crrs,
      runtime: options.runtime,
      writer: options.writer,
      clock: options.clock,
      events: options.events,
      resyncMs: options.resyncMs ?? 10_000,
    }),
  });
  controller.watch(crrs, (crr) => {
    const pod = crr.metadata?.labels?.[LABEL_CRR_POD_NAME] ?? crr.spec.podName;
    return [namespacedKey(crr.metadata?.namespace, pod)];
  });
  return controller;
}
