/** Registration of the pod readiness controller (see plan.ts for why it exists). */
import { enqueueObject } from '../../runtime/handlers.js';
import { Resources, resourcePath } from '../../runtime/resource.js';
import { PatchType } from '../../runtime/rest.js';
import type { ComponentContext } from '../../runtime/component.js';
import { missingKruisePodReady, needsKruisePodReady, type GatedPod } from './plan.js';

type Pod = GatedPod & { metadata: { name: string; namespace: string } };

export interface PodReadinessOptions {
  /** Watch one namespace only (tests); all namespaces when absent. */
  namespace?: string;
  now?: () => Date;
}

export function setupPodReadinessController(
  ctx: Pick<ComponentContext<unknown>, 'manager' | 'rest'>,
  options: PodReadinessOptions = {},
): void {
  const now = options.now ?? ((): Date => new Date());
  const pods = ctx.manager.informer<Pod>({
    resource: Resources.pods,
    ...(options.namespace ? { namespace: options.namespace } : {}),
  });
  const controller = ctx.manager.controller({
    name: 'podreadiness',
    workers: 2,
    reconcile: async (_key, { namespace, name, signal }) => {
      const pod = pods.get(namespace, name);
      const condition = pod && missingKruisePodReady(pod, now());
      if (!condition) return;
      // Conditions merge by type under a strategic merge patch, so other conditions are kept.
      await ctx.rest.request({
        method: 'PATCH',
        path: resourcePath(Resources.pods, namespace, name, 'status'),
        body: { status: { conditions: [condition] } },
        contentType: PatchType.strategic,
        signal,
      });
    },
  });
  controller.watch(pods, (pod) => (needsKruisePodReady(pod) ? enqueueObject(pod) : []));
}
