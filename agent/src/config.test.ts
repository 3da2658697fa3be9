import { describe, expect, it } from 'vitest';
import { buildCli } from './cli.js';
import { loadConfig, MANAGER_SETTINGS_GROUPS } from './config.js';
import { daemonCommand } from './daemon/cli.js';
import { DAEMON_SETTINGS } from './daemon/config.js';
import type { ConfigHost } from './settings/reader.js';
import type { Setting, SettingsTable } from './settings/setting.js';

const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const files: Record<string, string> = {
  '/etc/kube.conf': '',
  '/run/token': ' boot-123\n',
  '/run/empty': '',
  '/tls/ca.crt': CA_PEM,
};
const host: ConfigHost = {
  hostname: () => 'node-a',
  fileExists: (p) => p in files,
  readFile: (p) => {
    if (!(p in files)) throw new Error(`ENOENT ${p}`);
    return files[p]!;
  },
};
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

  it('takes --default-ttlseconds-for-always-nodeimage as OpenKruise v1.9 (300, at most 31 days)', () => {
    expect(loadConfig(base, {}, host).alwaysNodeImageTtlSeconds).toBe(300);
    expect(loadConfig({ ...base, defaultTtlsecondsForAlwaysNodeimage: '0' }, {}, host).alwaysNodeImageTtlSeconds).toBe(
      0,
    );
    expect(problems(() => loadConfig({ ...base, defaultTtlsecondsForAlwaysNodeimage: '2678401' }, {}, host))).toContain(
      'must be a number of seconds 0-2678400, got "2678401"',
    );
  });

  it("takes OpenKruise's InPlaceWorkloadVerticalScaling gate, off by default", () => {
    expect(loadConfig(base, {}, host).inPlaceWorkloadVerticalScaling).toBe(false);
    expect(loadConfig(base, { FLOTILLA_INPLACE_WORKLOAD_VERTICAL_SCALING: 'true' }, host)).toMatchObject({
      inPlaceWorkloadVerticalScaling: true,
    });
    expect(problems(() => loadConfig({ ...base, inplaceWorkloadVerticalScaling: 'yes' }, {}, host))).toContain(
      '--inplace-workload-vertical-scaling',
    );
  });

  it("takes OpenKruise's --assign-bcj-pods-by-scheduler, on by default", () => {
    expect(loadConfig(base, {}, host).assignBcjPodsByScheduler).toBe(true);
    expect(loadConfig({ ...base, assignBcjPodsByScheduler: 'false' }, {}, host).assignBcjPodsByScheduler).toBe(false);
    expect(loadConfig(base, { FLOTILLA_ASSIGN_BCJ_PODS_BY_SCHEDULER: 'false' }, host).assignBcjPodsByScheduler).toBe(
      false,
    );
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

  it('uses one namespace for the agent, the Lease and the webhook unless the Lease is moved', () => {
    const c = loadConfig({ ...base, namespace: 'agents' }, { POD_NAMESPACE: 'pods' }, host);
    expect(c.namespace).toBe('agents');
    expect(c.leaderElection.namespace).toBe('agents');
    expect(c.webhook?.namespace).toBe('agents');
    expect(loadConfig(base, { POD_NAMESPACE: 'pods' }, host).namespace).toBe('pods');
    expect(loadConfig(base, { FLOTILLA_NAMESPACE: 'env', POD_NAMESPACE: 'pods' }, host).namespace).toBe('env');
    const moved = loadConfig({ ...base, leaseNamespace: 'leases' }, {}, host);
    expect(moved.namespace).toBe('flotilla-system');
    expect(moved.leaderElection.namespace).toBe('leases');
  });

  it('talks HTTP/2 to the apiserver unless --no-kube-api-http2 or FLOTILLA_KUBE_API_HTTP2=false', () => {
    expect(loadConfig({ ...base, kubeApiHttp2: true }, {}, host).kubeApiHttp2).toBe(true);
    expect(loadConfig({ ...base, kubeApiHttp2: false }, {}, host).kubeApiHttp2).toBe(false);
    expect(loadConfig(base, { FLOTILLA_KUBE_API_HTTP2: 'false' }, host).kubeApiHttp2).toBe(false);
    expect(loadConfig({ ...base, kubeApiHttp2: false }, { FLOTILLA_KUBE_API_HTTP2: 'true' }, host).kubeApiHttp2).toBe(
      false,
    );
    expect(problems(() => loadConfig(base, { FLOTILLA_KUBE_API_HTTP2: 'no' }, host))).toContain(
      '--kube-api-http2 (FLOTILLA_KUBE_API_HTTP2): must be true or false, got "no"',
    );
  });

  it('selects components with one list: --components, else FLOTILLA_COMPONENTS, else all', () => {
    expect(loadConfig(base, {}, host).components).toEqual(['*']);
    expect(loadConfig(base, { FLOTILLA_COMPONENTS: ' cloneset, hublink ' }, host).components).toEqual([
      'cloneset',
      'hublink',
    ]);
    expect(loadConfig({ ...base, components: '*,-webhook' }, { FLOTILLA_COMPONENTS: '' }, host).components).toEqual([
      '*',
      '-webhook',
    ]);
    expect(loadConfig(base, { FLOTILLA_COMPONENTS: '' }, host).components).toEqual([]);
  });

  it('refuses the variables that once switched components, naming what replaced them', () => {
    const message = problems(() =>
      loadConfig(base, { FLOTILLA_CONTROLLERS: 'cloneset', FLOTILLA_WEBHOOK_ENABLED: 'false' }, host),
    );
    expect(message).toContain('FLOTILLA_CONTROLLERS: no longer read; use --components (FLOTILLA_COMPONENTS)');
    expect(message).toContain(
      'FLOTILLA_WEBHOOK_ENABLED: no longer read; leave the webhook out with --components=*,-webhook (FLOTILLA_COMPONENTS)',
    );
  });

  it('runs standalone without a hub URL', () => {
    expect(loadConfig(base, { FLOTILLA_BOOTSTRAP_TOKEN: 't' }, host).hub).toBeUndefined();
  });

  it('reads the hub link settings from flags and the environment', () => {
    const c = loadConfig(
      base,
      {
        FLOTILLA_HUB_URL: 'https://hub.example:8443/',
        FLOTILLA_BOOTSTRAP_TOKEN: 'boot-1',
        FLOTILLA_CLUSTER_LABELS: 'env=prod, region=eu-1,example.com/tier=',
        FLOTILLA_NATS_URL: 'nats://10.0.0.5:4222',
      },
      host,
    );
    expect(c.hub).toEqual({
      url: 'https://hub.example:8443',
      bootstrapToken: 'boot-1',
      labels: { env: 'prod', region: 'eu-1', 'example.com/tier': '' },
      joinSecret: 'flotilla-agent-join',
      natsUrl: 'nats://10.0.0.5:4222',
      caPem: undefined,
      natsCaPem: undefined,
      insecure: false,
    });
    const fromFile = loadConfig(
      {
        ...base,
        hubUrl: 'http://127.0.0.1:8080',
        insecure: 'true',
        bootstrapTokenFile: '/run/token',
        joinSecret: 'join',
      },
      {},
      host,
    );
    expect(fromFile.hub).toMatchObject({ bootstrapToken: 'boot-123', joinSecret: 'join', labels: {}, insecure: true });
    // Joined agents restart without a token: the join Secret holds their credentials.
    expect(loadConfig({ ...base, hubUrl: 'https://h' }, {}, host).hub?.bootstrapToken).toBeUndefined();
  });

  it('reads the CAs that verify the hub and NATS', () => {
    const c = loadConfig(
      { ...base, hubUrl: 'https://h', hubCaFile: '/tls/ca.crt' },
      { FLOTILLA_NATS_CA_FILE: '/tls/ca.crt' },
      host,
    );
    expect(c.hub).toMatchObject({ caPem: CA_PEM, natsCaPem: CA_PEM, insecure: false });
  });

  it('names every bad hub option', () => {
    const message = problems(() =>
      loadConfig(
        {
          ...base,
          hubUrl: 'ftp://hub',
          namespace: 'Bad_NS',
        },
        {},
        host,
      ),
    );
    expect(message).toContain('--hub-url (FLOTILLA_HUB_URL): must be an http(s) URL without credentials');
    expect(message).toContain('--namespace (FLOTILLA_NAMESPACE): must be a DNS label');
    const more = problems(() =>
      loadConfig(
        {
          ...base,
          hubUrl: 'http://hub',
          hubCaFile: '/tls/missing.crt',
          natsCaFile: '/run/token',
          bootstrapToken: 'x',
          bootstrapTokenFile: '/run/token',
          clusterLabels: 'env=prod,bad label=x,env=dev,novalue',
          joinSecret: 'Not/A/Name',
          natsUrl: 'http://nats',
        },
        {},
        host,
      ),
    );
    expect(more).toContain('--bootstrap-token-file (FLOTILLA_BOOTSTRAP_TOKEN_FILE): give either');
    expect(more).toContain('--cluster-labels (FLOTILLA_CLUSTER_LABELS): "bad label=x" is not a label key=value');
    expect(more).toContain('--cluster-labels (FLOTILLA_CLUSTER_LABELS): label env given twice');
    expect(more).toContain('"novalue" is not a label key=value');
    expect(more).toContain('--join-secret (FLOTILLA_JOIN_SECRET): must be a DNS subdomain');
    expect(more).toContain('--nats-url (FLOTILLA_NATS_URL): must be nats://host:port');
    expect(more).toContain('--hub-url (FLOTILLA_HUB_URL): must be https:// (give --insecure');
    expect(more).toContain('--hub-ca-file (FLOTILLA_HUB_CA_FILE): cannot read file /tls/missing.crt');
    expect(more).toContain('--nats-ca-file (FLOTILLA_NATS_CA_FILE): file /run/token holds no PEM certificate');
    expect(
      problems(() => loadConfig({ ...base, hubUrl: 'https://h', bootstrapTokenFile: '/run/missing' }, {}, host)),
    ).toContain('--bootstrap-token-file (FLOTILLA_BOOTSTRAP_TOKEN_FILE): cannot read file /run/missing');
    expect(
      problems(() => loadConfig({ ...base, hubUrl: 'https://h', bootstrapTokenFile: '/run/empty' }, {}, host)),
    ).toContain('is empty');
  });

  it('never puts the bootstrap token into an error', () => {
    const message = problems(() =>
      loadConfig({ ...base, hubUrl: 'https://h', bootstrapToken: 'secret-tok', clusterLabels: 'x y' }, {}, host),
    );
    expect(message).not.toContain('secret-tok');
  });
});

describe('the settings tables', () => {
  const commands: Record<string, { tables: SettingsTable[]; help: string }> = {
    manager: {
      tables: MANAGER_SETTINGS_GROUPS.map((g) => g.settings),
      help: buildCli({ manager: () => Promise.resolve() })
        .commands.find((c) => c.name() === 'manager')!
        .helpInformation(),
    },
    daemon: { tables: [DAEMON_SETTINGS], help: daemonCommand().helpInformation() },
  };

  for (const [name, { tables, help }] of Object.entries(commands)) {
    const settings: Setting<unknown>[] = tables.flatMap((t) => Object.values(t));

    it(`give \`agent ${name}\` every flag and variable once, each flag in --help`, () => {
      for (const s of settings) expect(s.flag !== undefined || (s.env ?? []).length > 0).toBe(true);
      const flags = settings.flatMap((s) => (s.flag === undefined ? [] : [s.flag]));
      const variables = settings.flatMap((s) => s.env ?? []);
      expect(new Set(flags).size).toBe(flags.length);
      expect(new Set(variables).size).toBe(variables.length);
      for (const s of settings) {
        if (s.flag !== undefined) expect(help).toContain(s.negatable ? `--no-${s.flag} ` : `--${s.flag} <`);
      }
    });

    it(`read each default of \`agent ${name}\` back from the text --help shows`, () => {
      for (const s of settings.filter((s) => s.default !== undefined)) {
        const shown = s.kind.show ? s.kind.show(s.default) : String(s.default);
        expect(
          s.kind.parse(shown, (m) => expect.fail(`${s.flag}: ${m}`)),
          String(s.flag),
        ).toEqual(s.default);
      }
    });
  }
});
