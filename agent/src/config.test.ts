import { describe, expect, it } from 'vitest';
import { loadConfig, type ConfigHost } from './config.js';

const host: ConfigHost = { hostname: () => 'node-a', fileExists: (p) => p === '/etc/kube.conf' };
const base = { kubeconfig: '/etc/kube.conf', clusterName: 'east-1' };

function problems(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toMatchObject({ code: 'AGENT_ERR_CONFIG' });
    return (err as Error).message;
  }
  throw new Error('expected a configuration error');
}

describe('loadConfig', () => {
  it('applies defaults', () => {
    const c = loadConfig(base, {}, host);
    expect(c).toMatchObject({
      kubeconfig: '/etc/kube.conf',
      clusterName: 'east-1',
      logLevel: 'info',
      health: { host: '0.0.0.0', port: 8080 },
      leaderElection: {
        enabled: true,
        namespace: 'flotilla-system',
        leaseName: 'flotilla-agent',
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
      },
      shutdownTimeoutMs: 30_000,
      cacheSyncTimeoutMs: 120_000,
    });
    expect(c.identity).toMatch(/^node-a_[0-9a-f]{8}$/);
  });

  it('takes flags over environment variables over defaults', () => {
    const env = {
      KUBECONFIG: '/nope',
      FLOTILLA_CLUSTER_NAME: 'from-env',
      POD_NAME: 'agent-7',
      POD_NAMESPACE: 'agents',
      FLOTILLA_LOG_LEVEL: 'debug',
      FLOTILLA_HEALTH_PORT: '9000',
    };
    const c = loadConfig(
      { kubeconfig: '/etc/kube.conf', leaseDuration: '30s', renewDeadline: '20000ms', retryPeriod: '1' },
      env,
      host,
    );
    expect(c).toMatchObject({
      clusterName: 'from-env',
      identity: 'agent-7',
      logLevel: 'debug',
      health: { port: 9000 },
      leaderElection: { namespace: 'agents', leaseDurationMs: 30_000, renewDeadlineMs: 20_000, retryPeriodMs: 1000 },
    });
  });

  it('runs in-cluster without a kubeconfig', () => {
    expect(loadConfig({ clusterName: 'c' }, { KUBERNETES_SERVICE_HOST: '10.0.0.1' }, host).kubeconfig).toBeUndefined();
  });

  it('names every bad option in one error', () => {
    const message = problems(() =>
      loadConfig(
        { kubeconfig: '/missing', clusterName: 'East_1', logLevel: 'loud', healthPort: '70000', retryPeriod: 'soon' },
        {},
        host,
      ),
    );
    expect(message).toContain('--kubeconfig (KUBECONFIG): file /missing does not exist');
    expect(message).toContain('--cluster-name (FLOTILLA_CLUSTER_NAME): must be a DNS label');
    expect(message).toContain('--log-level (FLOTILLA_LOG_LEVEL): must be one of fatal, error');
    expect(message).toContain('--health-port (FLOTILLA_HEALTH_PORT): must be a port number 0-65535, got "70000"');
    expect(message).toContain('--retry-period: must be a positive duration');
  });

  it('requires a kubeconfig outside a cluster and a cluster name', () => {
    const message = problems(() => loadConfig({}, {}, host));
    expect(message).toContain('--kubeconfig (KUBECONFIG): required outside a cluster');
    expect(message).toContain('--cluster-name (FLOTILLA_CLUSTER_NAME): required');
  });

  it('rejects leader election timings that cannot work', () => {
    expect(problems(() => loadConfig({ ...base, leaseDuration: '10s', renewDeadline: '10s' }, {}, host))).toContain(
      '--lease-duration: must be longer than --renew-deadline',
    );
    expect(problems(() => loadConfig({ ...base, renewDeadline: '2s', retryPeriod: '2s' }, {}, host))).toContain(
      '--renew-deadline: must be longer than 1.2 × --retry-period',
    );
  });
});
