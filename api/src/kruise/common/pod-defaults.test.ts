import { describe, expect, it } from 'vitest';
import type { PodSpec } from './pod.js';
import { defaultContainer, defaultPodSpec, defaultVolume } from './pod-defaults.js';
import { roundUpToMilli } from './quantity-rounding.js';

describe('pod spec defaults OpenKruise stores (SetDefaultPodSpec)', () => {
  it('fill the pod-level fields Kubernetes defaults', () => {
    const spec: PodSpec = { containers: [{ name: 'main', image: 'nginx:1.25' }] };
    defaultPodSpec(spec);
    expect(spec).toEqual({
      containers: [
        {
          name: 'main',
          image: 'nginx:1.25',
          imagePullPolicy: 'Always',
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      ],
      dnsPolicy: 'ClusterFirst',
      restartPolicy: 'Always',
      securityContext: {},
      terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler',
    });
  });

  it('pull regular containers Always (for in-place updates) but init containers by tag', () => {
    const spec: PodSpec = {
      initContainers: [
        { name: 'tagged', image: 'busybox:1.36' },
        { name: 'untagged', image: 'busybox' },
        { name: 'latest', image: 'busybox:latest' },
      ],
      containers: [
        { name: 'main', image: 'nginx:1.25' },
        { name: 'kept', image: 'nginx', imagePullPolicy: 'Never' },
      ],
    };
    defaultPodSpec(spec);
    expect(spec.initContainers?.map((c) => c.imagePullPolicy)).toEqual(['IfNotPresent', 'Always', 'Always']);
    expect(spec.containers?.map((c) => c.imagePullPolicy)).toEqual(['Always', 'Never']);
  });

  it('default probes, HTTP handlers, ports and field references', () => {
    const spec: PodSpec = {
      containers: [
        {
          name: 'main',
          image: 'nginx',
          ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP' }],
          env: [{ name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          readinessProbe: { httpGet: { port: 80 }, periodSeconds: 5 },
          startupProbe: { tcpSocket: { port: 80 } },
          lifecycle: { preStop: { httpGet: { port: 'http', path: '/stop' } } },
        },
      ],
    };
    defaultPodSpec(spec);
    const [main] = spec.containers ?? [];
    expect(main?.ports?.map((p) => p.protocol)).toEqual(['TCP', 'UDP']);
    expect(main?.env?.[0]?.valueFrom?.fieldRef?.apiVersion).toBe('v1');
    expect(main?.readinessProbe).toEqual({
      httpGet: { port: 80, path: '/', scheme: 'HTTP' },
      periodSeconds: 5,
      timeoutSeconds: 1,
      successThreshold: 1,
      failureThreshold: 3,
    });
    expect(main?.startupProbe).toMatchObject({ timeoutSeconds: 1, periodSeconds: 10 });
    expect(main?.lifecycle?.preStop?.httpGet).toEqual({ port: 'http', path: '/stop', scheme: 'HTTP' });
  });

  it('leave startupProbe of sidecars alone, as OpenKruise does', () => {
    const sidecar = { name: 's', image: 'envoy', startupProbe: { tcpSocket: { port: 1 } } };
    defaultContainer(sidecar, { kubernetesContainerDefaults: true, startupProbe: false });
    expect(sidecar.startupProbe).toEqual({ tcpSocket: { port: 1 } });
  });
});

describe('volume defaults', () => {
  it.each([
    [{ name: 'v' }, { name: 'v', emptyDir: {} }],
    [
      { name: 'v', hostPath: { path: '/x' } },
      { name: 'v', hostPath: { path: '/x', type: '' } },
    ],
    [
      { name: 'v', secret: { secretName: 's' } },
      { name: 'v', secret: { secretName: 's', defaultMode: 420 } },
    ],
    [
      { name: 'v', configMap: { name: 'c', defaultMode: 256 } },
      { name: 'v', configMap: { name: 'c', defaultMode: 256 } },
    ],
    [
      { name: 'v', downwardAPI: { items: [{ path: 'l', fieldRef: { fieldPath: 'metadata.labels' } }] } },
      {
        name: 'v',
        downwardAPI: {
          defaultMode: 420,
          items: [{ path: 'l', fieldRef: { fieldPath: 'metadata.labels', apiVersion: 'v1' } }],
        },
      },
    ],
    [
      { name: 'v', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } },
      {
        name: 'v',
        projected: { defaultMode: 420, sources: [{ serviceAccountToken: { path: 't', expirationSeconds: 3600 } }] },
      },
    ],
    [
      { name: 'v', persistentVolumeClaim: { claimName: 'c' } },
      { name: 'v', persistentVolumeClaim: { claimName: 'c' } },
    ],
    [
      { name: 'v', azureDisk: { diskName: 'd', diskURI: 'u' } },
      {
        name: 'v',
        azureDisk: {
          diskName: 'd',
          diskURI: 'u',
          cachingMode: 'ReadWrite',
          fsType: 'ext4',
          readOnly: false,
          kind: 'Shared',
        },
      },
    ],
  ])('%j becomes %j', (volume, expected) => {
    defaultVolume(volume);
    expect(volume).toEqual(expected);
  });
});

describe('resource lists are rounded up to milli-units (SetDefaults_ResourceList)', () => {
  it.each([
    ['100m', '100m'],
    ['0.5', '0.5'],
    ['1Gi', '1Gi'],
    ['0.0001', '1m'],
    ['1.0001', '1001m'],
    ['-0.0001', '-1m'],
    ['1500u', '2m'],
    ['1n', '1m'],
    ['1e-4', '1e-3'],
    [0.0001, '1m'],
    [2, 2],
    ['0.99999999999Ki', '1Ki'],
    ['not a quantity', 'not a quantity'],
  ])('%j → %j', (input, expected) => expect(roundUpToMilli(input)).toEqual(expected));
});
