import { describe, expect, it } from 'vitest';
import { loadDaemonConfig } from './config.js';
import { resolveRuntimeSocket } from './cri/socket.js';
import type { ConfigHost } from '../settings/reader.js';

describe('loadDaemonConfig', () => {
  const host: ConfigHost = { hostname: () => 'node-a', fileExists: (p) => p === '/k', readFile: () => '' };

  it('takes the node from the flag or NODE_NAME', () => {
    expect(loadDaemonConfig({ node: 'n1', kubeconfig: '/k' }, {}, host)).toEqual({
      nodeName: 'n1',
      kubeconfig: '/k',
      socketFile: undefined,
      runDir: '/var/run',
      health: undefined,
      logLevel: 'info',
      maxPullWorkers: -1,
    });
    expect(loadDaemonConfig({}, { NODE_NAME: 'n2', KUBERNETES_SERVICE_HOST: '10.0.0.1' }, host).nodeName).toBe('n2');
  });

  it('limits concurrent pulls with --max-workers-for-pull-image (-1: none), refusing 0', () => {
    const base = { node: 'n1', kubeconfig: '/k' };
    expect(loadDaemonConfig({ ...base, maxWorkersForPullImage: '2' }, {}, host).maxPullWorkers).toBe(2);
    expect(loadDaemonConfig({ ...base, maxWorkersForPullImage: '-1' }, {}, host).maxPullWorkers).toBe(-1);
    expect(() => loadDaemonConfig({ ...base, maxWorkersForPullImage: '0' }, {}, host)).toThrow(
      '--max-workers-for-pull-image: must be -1 (no limit) or an integer 1-10000, got "0"',
    );
  });

  it('serves health only with a port', () => {
    expect(loadDaemonConfig({ node: 'n1', kubeconfig: '/k', healthPort: '10221' }, {}, host).health).toEqual({
      host: '0.0.0.0',
      port: 10221,
    });
  });

  it('names every problem at once', () => {
    let message = '';
    try {
      loadDaemonConfig({ node: 'Bad_Node', healthPort: 'x', logLevel: 'loud' }, {}, host);
    } catch (err) {
      expect(err).toMatchObject({ code: 'DAEMON_ERR_CONFIG' });
      message = (err as Error).message;
    }
    expect(message.split('; ')).toEqual([
      '--node (NODE_NAME): must be a node name, got "Bad_Node"',
      '--log-level (FLOTILLA_LOG_LEVEL): must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
      '--health-port: must be a port number 0-65535, got "x"',
      '--kubeconfig (KUBECONFIG): required outside a cluster (no KUBERNETES_SERVICE_HOST)',
    ]);
    expect(() => loadDaemonConfig({ node: 'n1', kubeconfig: '/missing' }, {}, host)).toThrow(
      '--kubeconfig (KUBECONFIG): file /missing does not exist',
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
