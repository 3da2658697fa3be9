import { describe, expect, it } from 'vitest';
import { loadDaemonConfig } from './config.js';
import { resolveRuntimeSocket } from './cri/socket.js';

describe('loadDaemonConfig', () => {
  it('takes the node from the flag or NODE_NAME', () => {
    expect(loadDaemonConfig({ node: 'n1', kubeconfig: '/k' }, {})).toEqual({
      nodeName: 'n1',
      kubeconfig: '/k',
      socketFile: undefined,
      runDir: '/var/run',
      health: undefined,
      logLevel: 'info',
    });
    expect(loadDaemonConfig({}, { NODE_NAME: 'n2', KUBERNETES_SERVICE_HOST: '10.0.0.1' }).nodeName).toBe('n2');
  });

  it('names every problem at once', () => {
    expect(() => loadDaemonConfig({ node: 'Bad_Node', healthPort: 'x', logLevel: 'loud' }, {})).toThrow(
      /--node \(NODE_NAME\): "Bad_Node" is not a node name; --kubeconfig \(KUBECONFIG\): required outside a cluster; --log-level: must be one of .*; --health-port: must be a port number/,
    );
  });
});

describe('resolveRuntimeSocket', () => {
  it('prefers --socket-file, else probes containerd, CRI-O and cri-dockerd in order', () => {
    const present =
      (...paths: string[]) =>
      (p: string) =>
        paths.includes(p);
    expect(resolveRuntimeSocket({ socketFile: '/x.sock', exists: present('/x.sock') })).toBe('/x.sock');
    expect(resolveRuntimeSocket({ exists: present('/var/run/crio/crio.sock', '/var/run/cri-dockerd.sock') })).toBe(
      '/var/run/crio/crio.sock',
    );
    expect(
      resolveRuntimeSocket({ runDir: '/hostvarrun', exists: present('/hostvarrun/containerd/containerd.sock') }),
    ).toBe('/hostvarrun/containerd/containerd.sock');
  });

  it('fails naming what it probed', () => {
    expect(() => resolveRuntimeSocket({ exists: () => false })).toThrow(
      /probed \/var\/run\/containerd.sock, .*pass --socket-file/,
    );
    expect(() => resolveRuntimeSocket({ socketFile: '/nope', exists: () => false })).toThrow(
      'runtime socket /nope does not exist',
    );
  });
});
