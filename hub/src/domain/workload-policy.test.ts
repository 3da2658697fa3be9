import { describe, expect, it } from 'vitest';
import {
  POLICY_CONTROLS,
  effectiveViolations,
  selectorExcludesNamespace,
  workloadViolations,
  type PolicyControl,
} from './workload-policy.js';

const SYSTEM = new Set(['kube-system', 'kube-public', 'kube-node-lease', 'flotilla-system']);

function cloneSet(podSpec: Record<string, unknown>, annotations?: Record<string, string>): Record<string, unknown> {
  return {
    replicas: 1,
    selector: { matchLabels: { app: 'x' } },
    template: {
      metadata: { labels: { app: 'x' }, ...(annotations ? { annotations } : {}) },
      spec: { containers: [{ name: 'main', image: 'img:1' }], ...podSpec },
    },
  };
}

const main = (securityContext: Record<string, unknown>, extra: Record<string, unknown> = {}): unknown[] => [
  { name: 'main', image: 'img:1', securityContext, ...extra },
];

function found(kind: string, namespace: string, spec: unknown): [string, PolicyControl][] {
  return workloadViolations({ kind, namespace, spec }, SYSTEM).map((v) => [v.path, v.control]);
}

describe('workloadViolations: Pod Security Standards baseline', () => {
  it('checks a BroadcastJob’s pod template as a CloneSet’s', () => {
    const { template } = cloneSet({ hostNetwork: true, containers: main({ privileged: true }) }) as {
      template: unknown;
    };
    expect(found('BroadcastJob', 'jobs', { template })).toEqual([
      ['spec.template.spec.hostNetwork', 'hostNamespaces'],
      ['spec.template.spec.containers[0].securityContext.privileged', 'privileged'],
    ]);
  });

  it("refuses the probe's CloneSet: kube-system, privileged, hostPID, hostNetwork, hostPath /", () => {
    const spec = cloneSet({
      hostPID: true,
      hostNetwork: true,
      containers: main({ privileged: true }, { volumeMounts: [{ name: 'root', mountPath: '/host' }] }),
      volumes: [{ name: 'root', hostPath: { path: '/' } }],
    });
    const violations = workloadViolations({ kind: 'CloneSet', namespace: 'kube-system', spec }, SYSTEM);
    expect(violations.map((v) => [v.path, v.control])).toEqual([
      ['namespace', 'systemNamespaces'],
      ['spec.template.spec.hostNetwork', 'hostNamespaces'],
      ['spec.template.spec.hostPID', 'hostNamespaces'],
      ['spec.template.spec.containers[0].securityContext.privileged', 'privileged'],
      ['spec.template.spec.volumes[0].hostPath', 'hostPathVolumes'],
    ]);
    expect(violations[3]!.message).toBe(
      'must be unset or false (Pod Security Standards baseline: Privileged Containers; control privileged)',
    );
    expect(violations[0]!.message).toBe(
      'kube-system is a system namespace (Flotilla workload policy: System Namespaces; control systemNamespaces)',
    );
  });

  it('admits what baseline allows', () => {
    const spec = cloneSet({
      hostNetwork: false,
      hostIPC: false,
      securityContext: {
        sysctls: [{ name: 'net.ipv4.tcp_keepalive_time', value: '60' }],
        seLinuxOptions: { type: 'container_t', level: 's0:c1,c2' },
        seccompProfile: { type: 'RuntimeDefault' },
        appArmorProfile: { type: 'Localhost', localhostProfile: 'p' },
      },
      containers: main(
        {
          privileged: false,
          capabilities: { add: ['NET_BIND_SERVICE', 'CHOWN'], drop: ['ALL'] },
          procMount: 'Default',
          allowPrivilegeEscalation: true,
          runAsUser: 0,
        },
        { ports: [{ containerPort: 80 }, { containerPort: 81, hostPort: 0 }] },
      ),
      volumes: [{ name: 'data', emptyDir: {} }],
    });
    expect(found('CloneSet', 'apps', spec)).toEqual([]);
    expect(
      found(
        'CloneSet',
        'apps',
        cloneSet({}, { 'container.apparmor.security.beta.kubernetes.io/main': 'runtime/default' }),
      ),
    ).toEqual([]);
  });

  it.each<[string, Record<string, unknown>, string, PolicyControl]>([
    ['hostIPC', { hostIPC: true }, 'spec.template.spec.hostIPC', 'hostNamespaces'],
    ['a string where false belongs', { hostNetwork: 'false' }, 'spec.template.spec.hostNetwork', 'hostNamespaces'],
    [
      'an added capability beyond the default set',
      { containers: main({ capabilities: { add: ['NET_BIND_SERVICE', 'SYS_ADMIN'] } }) },
      'spec.template.spec.containers[0].securityContext.capabilities.add[1]',
      'capabilities',
    ],
    [
      'a privileged init container',
      { initContainers: main({ privileged: true }) },
      'spec.template.spec.initContainers[0].securityContext.privileged',
      'privileged',
    ],
    [
      'a host port',
      { containers: [{ name: 'main', image: 'i', ports: [{ containerPort: 80, hostPort: 8080 }] }] },
      'spec.template.spec.containers[0].ports[0].hostPort',
      'hostPorts',
    ],
    [
      'an unsafe sysctl',
      { securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }] } },
      'spec.template.spec.securityContext.sysctls[0].name',
      'sysctls',
    ],
    [
      'a custom SELinux type',
      { containers: main({ seLinuxOptions: { type: 'spc_t' } }) },
      'spec.template.spec.containers[0].securityContext.seLinuxOptions.type',
      'seLinux',
    ],
    [
      'an SELinux user',
      { securityContext: { seLinuxOptions: { user: 'system_u' } } },
      'spec.template.spec.securityContext.seLinuxOptions.user',
      'seLinux',
    ],
    [
      'an unconfined seccomp profile',
      { securityContext: { seccompProfile: { type: 'Unconfined' } } },
      'spec.template.spec.securityContext.seccompProfile.type',
      'seccomp',
    ],
    [
      'an unconfined AppArmor profile',
      { containers: main({ appArmorProfile: { type: 'Unconfined' } }) },
      'spec.template.spec.containers[0].securityContext.appArmorProfile.type',
      'appArmor',
    ],
    [
      'an unmasked /proc',
      { containers: main({ procMount: 'Unmasked' }) },
      'spec.template.spec.containers[0].securityContext.procMount',
      'procMount',
    ],
    [
      'a Windows HostProcess container',
      { securityContext: { windowsOptions: { hostProcess: true } } },
      'spec.template.spec.securityContext.windowsOptions.hostProcess',
      'hostProcess',
    ],
  ])('refuses %s', (_what, podSpec, path, control) => {
    expect(found('CloneSet', 'apps', cloneSet(podSpec))).toEqual([[path, control]]);
  });

  it('reads AppArmor and seccomp pod annotations', () => {
    const spec = cloneSet(
      {},
      {
        'container.apparmor.security.beta.kubernetes.io/main': 'unconfined',
        'seccomp.security.alpha.kubernetes.io/pod': 'unconfined',
      },
    );
    expect(found('CloneSet', 'apps', spec)).toEqual([
      ['spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/main]', 'appArmor'],
      ['spec.template.metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]', 'seccomp'],
    ]);
  });

  it("refuses every system namespace, the agent's own included", () => {
    for (const ns of SYSTEM) expect(found('ImagePullJob', ns, {})).toEqual([['namespace', 'systemNamespaces']]);
    expect(found('ImagePullJob', 'apps', {})).toEqual([]);
  });
});

describe('workloadViolations: SidecarSets', () => {
  const sidecar = (extra: Record<string, unknown>): Record<string, unknown> => ({
    selector: { matchLabels: { app: 'x' } },
    containers: [{ name: 'side', image: 'img:1' }],
    ...extra,
  });

  it('checks sidecars, volumes and patched pod annotations', () => {
    const spec = sidecar({
      namespace: 'apps',
      initContainers: main({ privileged: true }),
      containers: main({ capabilities: { add: ['SYS_PTRACE'] } }),
      volumes: [{ name: 'sock', hostPath: { path: '/var/run/containerd' } }],
      patchPodMetadata: [{ annotations: { 'container.apparmor.security.beta.kubernetes.io/side': 'unconfined' } }],
    });
    expect(found('SidecarSet', '', spec)).toEqual([
      ['spec.initContainers[0].securityContext.privileged', 'privileged'],
      ['spec.containers[0].securityContext.capabilities.add[0]', 'capabilities'],
      ['spec.volumes[0].hostPath', 'hostPathVolumes'],
      ['spec.patchPodMetadata[0].annotations[container.apparmor.security.beta.kubernetes.io/side]', 'appArmor'],
    ]);
  });

  it('must keep out of the system namespaces', () => {
    expect(found('SidecarSet', '', sidecar({}))).toEqual([['spec.namespace', 'systemNamespaces']]);
    expect(found('SidecarSet', '', sidecar({ namespace: 'kube-system' }))).toEqual([
      ['spec.namespace', 'systemNamespaces'],
    ]);
    expect(found('SidecarSet', '', sidecar({ namespaceSelector: { matchLabels: { team: 'a' } } }))).toEqual([
      ['spec.namespaceSelector', 'systemNamespaces'],
    ]);
    const excluding = {
      namespaceSelector: {
        matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [...SYSTEM] }],
      },
    };
    expect(found('SidecarSet', '', sidecar(excluding))).toEqual([]);
    expect(found('SidecarSet', '', sidecar({ namespace: 'apps' }))).toEqual([]);
  });

  it('tells selectors that can never match a namespace', () => {
    const key = 'kubernetes.io/metadata.name';
    expect(selectorExcludesNamespace({ matchLabels: { [key]: 'apps' } }, 'kube-system')).toBe(true);
    expect(selectorExcludesNamespace({ matchLabels: { [key]: 'kube-system' } }, 'kube-system')).toBe(false);
    expect(selectorExcludesNamespace({ matchExpressions: [{ key, operator: 'In', values: ['a'] }] }, 'b')).toBe(true);
    expect(selectorExcludesNamespace({ matchExpressions: [{ key, operator: 'NotIn', values: ['a'] }] }, 'b')).toBe(
      false,
    );
    expect(selectorExcludesNamespace({ matchExpressions: [{ key, operator: 'DoesNotExist' }] }, 'b')).toBe(true);
    expect(selectorExcludesNamespace(undefined, 'b')).toBe(false);
  });
});

describe('effectiveViolations', () => {
  const target = { kind: 'CloneSet', namespace: 'apps' };

  it('names violations an override adds in that override', () => {
    const content = {
      spec: cloneSet({}),
      overrides: {
        c1: { replicas: 3 },
        c2: { template: { spec: { hostPID: true } } },
      },
    };
    expect(effectiveViolations(target, content, SYSTEM, new Set())).toEqual([
      {
        path: 'overrides.c2.template.spec.hostPID',
        control: 'hostNamespaces',
        message: 'must be unset or false (Pod Security Standards baseline: Host Namespaces; control hostNamespaces)',
      },
    ]);
  });

  it('reports a template violation once, and drops the controls allowed', () => {
    const content = { spec: cloneSet({ hostNetwork: true }), overrides: { c1: { replicas: 3 } } };
    expect(effectiveViolations(target, content, SYSTEM, new Set()).map((v) => v.path)).toEqual([
      'spec.template.spec.hostNetwork',
    ]);
    expect(effectiveViolations(target, content, SYSTEM, new Set(['hostNamespaces']))).toEqual([]);
    expect(
      effectiveViolations(target, content, SYSTEM, new Set(POLICY_CONTROLS.filter((c) => c !== 'hostNamespaces'))),
    ).toHaveLength(1);
  });
});
