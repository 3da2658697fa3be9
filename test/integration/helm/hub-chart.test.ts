/**
 * The hub chart as text: `helm lint`, `helm template` with the required values and with changed
 * ones (the output parsed and checked object by object: secrets only through secretKeyRefs and
 * mounted Secret volumes, probes, PDB, replicas, security context), its NOTES, and
 * values.schema.json refusing bad input with a message naming the field.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { all, helm, helmOk, one, parseManifests, type Manifest } from './chart.js';
import {
  HUB_REQUIRED,
  hubChartDir,
  hubContainer,
  hubDeployment,
  renderHub,
  renderHubNotes,
  set,
  templateHub,
  type HubContainer,
} from './hub-chart.js';

/** Environment names that hold secrets: they may only come from a Secret. */
const SECRET_ENV = ['DATABASE_URL', 'FLOTILLA_ADMIN_TOKEN', 'FLOTILLA_BOOTSTRAP_TOKEN', 'NATS_PASSWORD'];
/** Files that hold secrets: they must lie in a mounted Secret volume. */
const SECRET_FILES = [
  'FLOTILLA_NATS_CREDS_FILE',
  'FLOTILLA_NATS_SYSTEM_CREDS_FILE',
  'FLOTILLA_NATS_OPERATOR_SIGNING_KEY_FILE',
  'FLOTILLA_NATS_ACCOUNT_SIGNING_KEY_FILE',
  'FLOTILLA_TLS_KEY_FILE',
];

const literals = (c: HubContainer): Record<string, string> =>
  Object.fromEntries((c.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));

/** The mount (and its volume) a path lies in. */
function mountOf(ms: Manifest[], file: string) {
  const pod = hubDeployment(ms).spec.template.spec;
  const mount = pod.containers[0]!.volumeMounts?.find((m) => file.startsWith(`${m.mountPath}/`));
  return { mount, volume: pod.volumes?.find((v) => v.name === mount?.name) };
}

/** Every secret reaches the container by reference only; none is a literal, none is in a ConfigMap. */
function expectSecretsByReference(ms: Manifest[]): void {
  const c = hubContainer(ms);
  for (const e of c.env ?? []) {
    if (SECRET_ENV.includes(e.name)) {
      expect(e.value, e.name).toBeUndefined();
      expect(e.valueFrom?.secretKeyRef, e.name).toBeDefined();
    }
  }
  const env = literals(c);
  for (const name of SECRET_FILES.filter((n) => env[n] !== undefined)) {
    const { mount, volume } = mountOf(ms, env[name]!);
    expect(mount?.readOnly, name).toBe(true);
    expect(volume?.secret, `${name} lies in a Secret volume`).toBeDefined();
    expect(volume?.secret?.defaultMode, name).toBe(0o440);
  }
  // The chart makes no Secret (it would hold a value) and no ConfigMap.
  expect(all(ms, 'Secret')).toEqual([]);
  expect(all(ms, 'ConfigMap')).toEqual([]);
}

describe('helm lint', () => {
  it('passes with the required values and with every option on', async () => {
    const plain = await helm(['lint', '--strict', hubChartDir, ...HUB_REQUIRED]);
    expect(plain.stdout + plain.stderr).toContain('1 chart(s) linted, 0 chart(s) failed');
    const full = await helm([
      'lint',
      '--strict',
      hubChartDir,
      ...HUB_REQUIRED,
      ...set(
        'replicas=3',
        'tls.existingSecret=hub-tls',
        'nats.ca.secretName=nats-ca',
        'bootstrapToken.existingSecret=hub-bootstrap',
        'ingress.enabled=true',
        'ingress.host=hub.example.com',
        'ingress.tlsSecretName=hub-ingress-tls',
        'serviceMonitor.enabled=true',
        'config.FLOTILLA_HEARTBEAT_TIMEOUT_SECONDS=60',
      ),
    ]);
    expect(full.code, full.stdout + full.stderr).toBe(0);
  });
});

describe('helm package', () => {
  it('packages the chart with its README, and the package renders', async () => {
    const out = mkdtempSync(path.join(os.tmpdir(), 'flotilla-hub-chart-'));
    try {
      await helmOk(['package', hubChartDir, '--destination', out]);
      const tgz = path.join(out, 'flotilla-hub-0.1.0.tgz');
      const readme = await helmOk(['show', 'readme', tgz]);
      expect(readme).toContain('# flotilla-hub');
      const ms = parseManifests(await helmOk(['template', 'flotilla-hub', tgz, ...HUB_REQUIRED]));
      expect(all(ms, 'Deployment')).toHaveLength(1);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('helm template with the required values', () => {
  it('renders the hub, its Service, PDB and ServiceAccount, and nothing optional', async () => {
    const ms = await renderHub(HUB_REQUIRED);
    expect(ms.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual(
      [
        'Deployment/flotilla-hub',
        'PodDisruptionBudget/flotilla-hub',
        'Service/flotilla-hub',
        'ServiceAccount/flotilla-hub',
      ].sort(),
    );
    expect(ms.every((m) => m.metadata.namespace === 'flotilla')).toBe(true);
  });

  it('runs two non-root replicas with a read-only root, spread over zones, probed on /healthz and /readyz', async () => {
    const ms = await renderHub(HUB_REQUIRED);
    const d = hubDeployment(ms);
    expect(d.spec.replicas).toBe(2);
    expect(d.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } });
    const pod = d.spec.template.spec;
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532, fsGroup: 65532 });
    expect(pod.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: d.spec.selector.matchLabels },
        matchLabelKeys: ['pod-template-hash'],
      },
    ]);
    const c = hubContainer(ms);
    expect(c.image).toBe('ghcr.io/flotilla/hub:0.1.0');
    // The image's entrypoint runs hub/dist/main.js; the chart adds no command.
    expect(c.command).toBeUndefined();
    expect(c.ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
    expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http', scheme: 'HTTP' });
    expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http', scheme: 'HTTP' });
    expect(c.startupProbe?.httpGet).toEqual({ path: '/healthz', port: 'http', scheme: 'HTTP' });
    // JetStream may take nats.startTimeoutSeconds (120 s) to answer, plus a minute.
    expect(c.startupProbe!.periodSeconds! * c.startupProbe!.failureThreshold!).toBe(180);
    expect(c.resources).toEqual({ requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '2', memory: '1Gi' } });
    expect(c.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(c.volumeMounts?.find((m) => m.mountPath === '/tmp')).toBeDefined();
    expect(pod.volumes?.find((v) => v.name === 'tmp')?.emptyDir).toEqual({ sizeLimit: '64Mi' });
    const pdb = one<Manifest & { spec: { minAvailable: number; selector: unknown } }>(ms, 'PodDisruptionBudget');
    expect(pdb.spec).toEqual({ minAvailable: 1, selector: { matchLabels: d.spec.selector.matchLabels } });
  });

  it('sets the plain settings as literals and every secret by reference', async () => {
    const ms = await renderHub(HUB_REQUIRED);
    const c = hubContainer(ms);
    expect(literals(c)).toEqual({
      LOG_LEVEL: 'info',
      FLOTILLA_HUB_HOST: '0.0.0.0',
      FLOTILLA_HUB_PORT: '8080',
      NATS_URL: 'tls://nats-0.nats:4222,tls://nats-1.nats:4222,tls://nats-2.nats:4222',
      FLOTILLA_NATS_REPLICAS: '3',
      FLOTILLA_NATS_AGENT_DURABLE_STORAGE: 'memory',
      FLOTILLA_NATS_STATUS_DURABLE_STORAGE: 'memory',
      FLOTILLA_NATS_START_TIMEOUT_SECONDS: '120',
      FLOTILLA_NATS_CREDS_FILE: '/etc/flotilla/nats-auth/hub.creds',
      FLOTILLA_NATS_SYSTEM_CREDS_FILE: '/etc/flotilla/nats-auth/hub-system.creds',
      FLOTILLA_NATS_OPERATOR_SIGNING_KEY_FILE: '/etc/flotilla/nats-auth/operator-signing.nk',
      FLOTILLA_NATS_ACCOUNT_SIGNING_KEY_FILE: '/etc/flotilla/nats-auth/account-signing.nk',
      FLOTILLA_AGENT_CREDENTIAL_TTL_SECONDS: '86400',
    });
    const refs = Object.fromEntries((c.env ?? []).filter((e) => e.valueFrom).map((e) => [e.name, e.valueFrom]));
    expect(refs).toEqual({
      DATABASE_URL: { secretKeyRef: { name: 'hub-db', key: 'url' } },
      FLOTILLA_ADMIN_TOKEN: { secretKeyRef: { name: 'hub-admin', key: 'token' } },
    });
    const pod = hubDeployment(ms).spec.template.spec;
    expect(pod.volumes?.find((v) => v.name === 'nats-auth')?.secret).toEqual({
      secretName: 'hub-nats-auth',
      defaultMode: 0o440,
      items: [
        { key: 'hub.creds', path: 'hub.creds' },
        { key: 'hub-system.creds', path: 'hub-system.creds' },
        { key: 'operator-signing.nk', path: 'operator-signing.nk' },
        { key: 'account-signing.nk', path: 'account-signing.nk' },
      ],
    });
    expectSecretsByReference(ms);
  });

  it('serves the Service on port 80 over HTTP without a certificate', async () => {
    const svc = one<Manifest & { spec: { ports: unknown[]; selector: unknown } }>(
      await renderHub(HUB_REQUIRED),
      'Service',
    );
    expect(svc.spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }]);
  });
});

describe('helm template with changed values', () => {
  const FULL = [
    ...HUB_REQUIRED,
    ...set(
      'replicas=3',
      'port=9443',
      'tls.existingSecret=hub-tls',
      'nats.ca.configMapName=nats-ca',
      'nats.replicas=1',
      'nats.agentDurables.storage=file',
      'nats.agentDurables.replicas=1',
      'nats.statusDurable.storage=file',
      'nats.statusDurable.replicas=1',
      'nats.publicUrls={tls://nats.example.com:4222}',
      'nats.auth.credsKey=creds',
      'bootstrapToken.existingSecret=hub-bootstrap',
      'config.FLOTILLA_HEARTBEAT_TIMEOUT_SECONDS=60',
      'config.FLOTILLA_ROLLOUT_TICK_MS=500',
      'podDisruptionBudget.minAvailable=2',
      'topologySpread.whenUnsatisfiable=DoNotSchedule',
    ),
  ];

  it('serves HTTPS from the certificate Secret and probes over HTTPS', async () => {
    const ms = await renderHub(FULL);
    const c = hubContainer(ms);
    expect(hubDeployment(ms).spec.replicas).toBe(3);
    const env = literals(c);
    expect(env).toMatchObject({
      FLOTILLA_HUB_PORT: '9443',
      FLOTILLA_TLS_CERT_FILE: '/etc/flotilla/tls/tls.crt',
      FLOTILLA_TLS_KEY_FILE: '/etc/flotilla/tls/tls.key',
    });
    expect(c.ports).toEqual([{ name: 'https', containerPort: 9443, protocol: 'TCP' }]);
    for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
      expect(probe?.httpGet).toMatchObject({ port: 'https', scheme: 'HTTPS' });
    }
    const pod = hubDeployment(ms).spec.template.spec;
    expect(pod.volumes?.find((v) => v.name === 'tls')?.secret).toEqual({
      secretName: 'hub-tls',
      defaultMode: 0o440,
      items: [
        { key: 'tls.crt', path: 'tls.crt' },
        { key: 'tls.key', path: 'tls.key' },
      ],
    });
    const svc = one<Manifest & { spec: { ports: unknown[] } }>(ms, 'Service');
    expect(svc.spec.ports).toEqual([
      { name: 'https', port: 443, targetPort: 'https', protocol: 'TCP', appProtocol: 'https' },
    ]);
    expectSecretsByReference(ms);
  });

  it('takes the NATS CA, public URLs, replicas, renamed keys, the bootstrap token and further settings', async () => {
    const ms = await renderHub(FULL);
    const c = hubContainer(ms);
    expect(literals(c)).toMatchObject({
      FLOTILLA_NATS_CA_FILE: '/etc/flotilla/nats-ca/ca.crt',
      FLOTILLA_NATS_PUBLIC_URLS: 'tls://nats.example.com:4222',
      FLOTILLA_NATS_REPLICAS: '1',
      FLOTILLA_NATS_AGENT_DURABLE_STORAGE: 'file',
      FLOTILLA_NATS_AGENT_DURABLE_REPLICAS: '1',
      FLOTILLA_NATS_STATUS_DURABLE_STORAGE: 'file',
      FLOTILLA_NATS_STATUS_DURABLE_REPLICAS: '1',
      FLOTILLA_HEARTBEAT_TIMEOUT_SECONDS: '60',
      FLOTILLA_ROLLOUT_TICK_MS: '500',
    });
    expect(c.env?.find((e) => e.name === 'FLOTILLA_BOOTSTRAP_TOKEN')?.valueFrom).toEqual({
      secretKeyRef: { name: 'hub-bootstrap', key: 'token' },
    });
    const pod = hubDeployment(ms).spec.template.spec;
    expect(pod.volumes?.find((v) => v.name === 'nats-ca')?.configMap).toEqual({
      name: 'nats-ca',
      items: [{ key: 'ca.crt', path: 'ca.crt' }],
    });
    expect(pod.volumes?.find((v) => v.name === 'nats-auth')?.secret?.items?.[0]).toEqual({
      key: 'creds',
      path: 'hub.creds',
    });
    expect(pod.topologySpreadConstraints?.[0]).toMatchObject({ whenUnsatisfiable: 'DoNotSchedule' });
    expect(one<Manifest & { spec: { minAvailable: number } }>(ms, 'PodDisruptionBudget').spec.minAvailable).toBe(2);
    expectSecretsByReference(ms);
  });

  it('mounts the NATS CA from a Secret when asked', async () => {
    const ms = await renderHub([...HUB_REQUIRED, ...set('nats.ca.secretName=nats-ca', 'nats.ca.key=ca.pem')]);
    const pod = hubDeployment(ms).spec.template.spec;
    expect(pod.volumes?.find((v) => v.name === 'nats-ca')?.secret).toEqual({
      secretName: 'nats-ca',
      defaultMode: 0o444,
      items: [{ key: 'ca.pem', path: 'ca.crt' }],
    });
  });

  it('renders an Ingress with TLS and a ServiceMonitor that scrapes over HTTPS', async () => {
    const ms = await renderHub([
      ...HUB_REQUIRED,
      ...set(
        'tls.existingSecret=hub-tls',
        'ingress.enabled=true',
        'ingress.className=nginx',
        'ingress.host=hub.example.com',
        'ingress.tlsSecretName=hub-ingress-tls',
        'ingress.annotations.nginx\\.ingress\\.kubernetes\\.io/backend-protocol=HTTPS',
        'serviceMonitor.enabled=true',
        'serviceMonitor.labels.release=prometheus',
        'serviceMonitor.tlsConfig.serverName=flotilla-hub.flotilla.svc',
      ),
    ]);
    const ingress = one<Manifest & { spec: Record<string, unknown> }>(ms, 'Ingress');
    expect(ingress.metadata.annotations).toEqual({ 'nginx.ingress.kubernetes.io/backend-protocol': 'HTTPS' });
    expect(ingress.spec).toEqual({
      ingressClassName: 'nginx',
      tls: [{ hosts: ['hub.example.com'], secretName: 'hub-ingress-tls' }],
      rules: [
        {
          host: 'hub.example.com',
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: 'flotilla-hub', port: { name: 'https' } } },
              },
            ],
          },
        },
      ],
    });
    const sm = one<Manifest & { spec: { selector: unknown; endpoints: unknown[] } }>(ms, 'ServiceMonitor');
    expect(sm.metadata.labels).toMatchObject({ release: 'prometheus' });
    expect(sm.spec.endpoints).toEqual([
      {
        port: 'https',
        path: '/metrics',
        scheme: 'https',
        interval: '30s',
        tlsConfig: { serverName: 'flotilla-hub.flotilla.svc' },
      },
    ]);
  });

  it('drops the PDB for a single replica', async () => {
    const ms = await renderHub([...HUB_REQUIRED, ...set('replicas=1')]);
    expect(hubDeployment(ms).spec.replicas).toBe(1);
    expect(all(ms, 'PodDisruptionBudget')).toEqual([]);
  });
});

describe('NOTES', () => {
  it('gives the admin token, the dashboard, a bootstrap token and the agent install line', async () => {
    const notes = await renderHubNotes([
      ...HUB_REQUIRED,
      ...set('tls.existingSecret=hub-tls', 'nats.ca.configMapName=nats-ca'),
    ]);
    expect(notes).toContain('kubectl -n flotilla rollout status deployment/flotilla-hub');
    expect(notes).toContain("kubectl -n flotilla get secret hub-admin -o jsonpath='{.data.token}' | base64 -d");
    expect(notes).toContain('kubectl -n flotilla port-forward service/flotilla-hub 8443:443');
    expect(notes).toContain('https://localhost:8443/ui/');
    // The CLI goes through that port-forward; the agent (in this cluster) through the Service.
    expect(notes).toContain('export FLOTILLA_HUB_URL=https://localhost:8443');
    expect(notes).toContain('export FLOTILLA_CA_FILE=hub-ca.crt');
    expect(notes).toContain('flotilla tokens create first-cluster --role bootstrap');
    expect(notes).toContain("get configmap nats-ca -o jsonpath='{.data.ca\\.crt}' > nats-ca.crt");
    expect(notes).toContain('helm install flotilla-agent deploy/charts/flotilla-agent -n flotilla-system');
    expect(notes).toContain('--set hub.url=https://flotilla-hub.flotilla.svc:443');
    expect(notes).toContain('--set-file hub.caBundle=hub-ca.crt');
    expect(notes).toContain('--set-file hub.natsCaBundle=nats-ca.crt');
    expect(notes).toContain('flotilla clusters accept first-cluster');
    expect(notes).toContain("is the Service's address inside this cluster");
    expect(notes).toMatch(/advisory lock/);
  });

  it('points at the Ingress, and warns about a plain HTTP hub behind none', async () => {
    const ingress = await renderHubNotes([
      ...HUB_REQUIRED,
      ...set('ingress.enabled=true', 'ingress.host=hub.example.com', 'ingress.tlsSecretName=hub-ingress-tls'),
    ]);
    expect(ingress).toContain('https://hub.example.com/ui/');
    expect(ingress).toContain('export FLOTILLA_HUB_URL=https://hub.example.com\n');
    expect(ingress).toContain('--set hub.url=https://hub.example.com');
    expect(ingress).not.toContain('port-forward');
    expect(ingress).toContain('the Ingress terminates TLS');
    const plain = await renderHubNotes(HUB_REQUIRED);
    expect(plain).toContain('kubectl -n flotilla port-forward service/flotilla-hub 8080:80');
    expect(plain).toContain('export FLOTILLA_HUB_URL=http://localhost:8080');
    expect(plain).not.toContain('FLOTILLA_CA_FILE');
    expect(plain).toContain('agents refuse an http:// hub unless');
  });
});

describe('values.schema.json', () => {
  const refused = async (flags: string[]): Promise<string> => {
    const r = await templateHub(flags);
    expect(r.code, r.stdout).not.toBe(0);
    expect(r.stderr).toContain("values don't meet the specifications of the schema");
    return r.stderr;
  };

  it('refuses fewer than one replica, naming the field', async () => {
    const err = await refused([...HUB_REQUIRED, ...set('replicas=0')]);
    expect(err).toMatch(/\/replicas/);
    expect(err).toMatch(/minimum/);
  });

  it('refuses an install without the database, admin token or NATS Secrets', async () => {
    const without = (drop: string): string[] =>
      HUB_REQUIRED.filter((_, i, a) => !(a[i] ?? '').startsWith(drop) && !(a[i + 1] ?? '').startsWith(drop));
    expect(await refused(without('database.'))).toMatch(/\/database\/existingSecret/);
    expect(await refused(without('adminToken.'))).toMatch(/\/adminToken\/existingSecret/);
    expect(await refused(without('nats.auth.'))).toMatch(/\/nats\/auth\/existingSecret/);
    expect(await refused(without('nats.urls'))).toMatch(/\/nats\/urls/);
  });

  it('refuses a NATS URL of another scheme', async () => {
    const err = await refused([...HUB_REQUIRED, ...set('nats.urls={http://nats:4222}')]);
    expect(err).toMatch(/\/nats\/urls\/0/);
    expect(err).toContain('http://nats:4222');
  });

  it('refuses secret material given inline, without echoing it', async () => {
    const secret = 'postgres://hub:s3cr3t-password@pg:5432/flotilla';
    const db = await refused([...HUB_REQUIRED, ...set(`database.url=${secret}`)]);
    expect(db).toMatch(/\/database/);
    expect(db).toContain("'url'");
    expect(db).not.toContain('s3cr3t');
    const token = await refused([...HUB_REQUIRED, ...set('adminToken.value=flt-admin-0123456789abcdef')]);
    expect(token).toMatch(/\/adminToken/);
    expect(token).toContain("'value'");
    expect(token).not.toContain('0123456789abcdef');
    const seed = await refused([...HUB_REQUIRED, ...set('nats.auth.operatorSigningKey=SOAXXXXXXXX')]);
    expect(seed).toMatch(/\/nats\/auth/);
    expect(seed).not.toContain('SOAXXXXXXXX');
    // Nor through `config`: names that hold secrets (or that the chart sets) are refused.
    const env = await refused([...HUB_REQUIRED, ...set('config.FLOTILLA_ADMIN_TOKEN=flt-admin-0123456789abcdef')]);
    expect(env).toMatch(/\/config/);
    expect(env).toContain('FLOTILLA_ADMIN_TOKEN');
    expect(env).not.toContain('0123456789abcdef');
    expect(await refused([...HUB_REQUIRED, ...set('config.DATABASE_URL=x')])).toContain('DATABASE_URL');
  });

  it('refuses a NATS CA from both a Secret and a ConfigMap, and an Ingress without a host', async () => {
    expect(await refused([...HUB_REQUIRED, ...set('nats.ca.secretName=a', 'nats.ca.configMapName=b')])).toMatch(
      /\/nats\/ca/,
    );
    expect(await refused([...HUB_REQUIRED, ...set('ingress.enabled=true')])).toMatch(/\/ingress\/host/);
  });

  it('refuses a misspelt key, naming it', async () => {
    expect(await refused([...HUB_REQUIRED, ...set('replcas=2')])).toContain('replcas');
  });
});
