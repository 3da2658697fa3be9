/**
 * What OpenKruise v1.9's CRR webhook takes from the pod on CREATE, as a pure function: the pod
 * must be active, scheduled and on an existing node; every container named must exist in the pod
 * with a container id in its status. The CRR then gets the immutable labels (pod name, node, uid,
 * active), the pod's termination grace when it has none, and per container the preStop hook
 * (ports only for an httpGet hook) and the status context the daemon compares against.
 */
import { childPath, type FieldError, forbidden, indexPath, invalid, notFound } from '../../validation/field-error.js';
import { cloneJson } from '../../validation/json.js';
import { LABEL_CRR_ACTIVE, LABEL_CRR_NODE_NAME, LABEL_CRR_POD_NAME, LABEL_CRR_POD_UID } from '../constants.js';
import type { ContainerRecreateRequest, CrrContainer } from './schema.js';

/** The slice of a corev1.Pod the webhook reads. */
export interface CrrSourcePod {
  metadata: { name: string; uid?: string; deletionTimestamp?: string | null };
  spec: {
    nodeName?: string;
    terminationGracePeriodSeconds?: number;
    containers: {
      name: string;
      ports?: CrrContainer['ports'];
      lifecycle?: { preStop?: Record<string, unknown> };
    }[];
  };
  status?: {
    phase?: string;
    containerStatuses?: { name: string; containerID?: string; restartCount?: number }[];
  };
}

export type CrrFromPod = { ok: true; crr: ContainerRecreateRequest } | { ok: false; errors: FieldError[] };

/** Pending or Running and not being deleted (kubecontroller.IsPodActive). */
export function isPodActive(pod: CrrSourcePod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata.deletionTimestamp;
}

function podProblems(pod: CrrSourcePod | undefined, podName: string, nodeExists: boolean): FieldError[] {
  if (!pod) return [notFound('spec.podName', podName, `no found Pod named ${podName}`)];
  if (!isPodActive(pod)) {
    return [invalid('spec.podName', podName, 'not allowed to recreate containers in an inactive Pod')];
  }
  if (!pod.spec.nodeName) {
    return [invalid('spec.podName', podName, 'not allowed to recreate containers in a pending Pod')];
  }
  if (!nodeExists) {
    return [invalid('spec.podName', podName, `the Node ${pod.spec.nodeName} of the Pod does not exist`)];
  }
  return [];
}

/** Fills one container from the pod, or says why it cannot be recreated. */
function fillContainer(c: CrrContainer, pod: CrrSourcePod, path: string): FieldError[] {
  if (c.preStop !== undefined || c.ports !== undefined || c.statusContext !== undefined) {
    return [forbidden(path, 'preStop, ports, statusContext in container are read-only fields')];
  }
  const container = pod.spec.containers.find((x) => x.name === c.name);
  if (!container) return [notFound(childPath(path, 'name'), c.name, `container ${c.name} not found in Pod`)];
  const status = pod.status?.containerStatuses?.find((s) => s.name === c.name);
  if (!status?.containerID) {
    return [
      invalid(
        childPath(path, 'name'),
        c.name,
        `no containerID in ${c.name} containerStatus, maybe the container has not been initialized`,
      ),
    ];
  }
  const preStop = container.lifecycle?.preStop;
  if (preStop) {
    const { exec, httpGet, tcpSocket } = preStop;
    c.preStop = cloneJson({ exec, httpGet, tcpSocket }) as CrrContainer['preStop'];
    if (httpGet !== undefined && container.ports) c.ports = cloneJson(container.ports);
  }
  c.statusContext = { containerID: status.containerID, restartCount: status.restartCount ?? 0 };
  return [];
}

/**
 * The CRR (already defaulted by defaultContainerRecreateRequest) completed from its pod, or the
 * reasons it must be refused. `pod` undefined: no such pod in the CRR's namespace.
 */
export function containerRecreateRequestFromPod(
  input: ContainerRecreateRequest,
  pod: CrrSourcePod | undefined,
  nodeExists: boolean,
): CrrFromPod {
  const problems = podProblems(pod, input.spec.podName, nodeExists);
  if (problems.length > 0 || !pod) return { ok: false, errors: problems };
  const crr = cloneJson(input);
  const errors = crr.spec.containers.flatMap((c, i) => fillContainer(c, pod, indexPath('spec.containers', i)));
  if (errors.length > 0) return { ok: false, errors };
  const metadata = (crr.metadata ??= {});
  metadata.labels = {
    ...metadata.labels,
    [LABEL_CRR_POD_NAME]: crr.spec.podName,
    [LABEL_CRR_ACTIVE]: 'true',
    [LABEL_CRR_NODE_NAME]: pod.spec.nodeName ?? '',
    [LABEL_CRR_POD_UID]: pod.metadata.uid ?? '',
  };
  const strategy = (crr.spec.strategy ??= {});
  if (strategy.terminationGracePeriodSeconds === undefined && pod.spec.terminationGracePeriodSeconds !== undefined) {
    strategy.terminationGracePeriodSeconds = pod.spec.terminationGracePeriodSeconds;
  }
  return { ok: true, crr };
}
