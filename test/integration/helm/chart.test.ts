/**
 * The agent chart as text: `helm lint`, `helm template` with the required values and with
 * changed ones (the output parsed and checked object by object), the CRDs and webhooks it renders
 * against the generator and the agent they must match, and values.schema.json refusing bad input.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { crdFileName, generateAllCrds, renderCrdYaml } from '@flotilla/api';
import { buildWebhookConfigurations } from '../../../agent/src/webhook/configurations.js';
import type { PodMutationSources } from '../../../agent/src/webhook/mutating/pod.js';
import { webhookDefinitions } from '../../../agent/src/webhook/registry.js';
import {
  all,
  chartDir,
  envOf,
  grants,
  helm,
  helmOk,
  one,
  parseManifests,
  render,
  REQUIRED,
  root,
  type Manifest,
  type Role,
  type Workload,
} from './chart.js';

interface WebhookConfiguration extends Manifest {
  webhooks: {
    name: string;
    failurePolicy: string;
    timeoutSeconds: number;
    clientConfig: { url?: string; service?: { name: string; namespace: string; path: string }; caBundle?: string };
    namespaceSelector?: { matchLabels?: Record<string, string>; matchExpressions: { values?: string[] }[] };
    objectSelector?: unknown;
  }[];
}

const set = (...pairs: string[]): string[] => pairs.flatMap((p) => ['--set', p]);
const manager = (ms: Manifest[]): Workload => one<Workload>(ms, 'Deployment', 'flotilla-agent-manager');
const managerContainer = (ms: Manifest[]) => manager(ms).spec.template.spec.containers[0]!;
const clusterRole = (ms: Manifest[], name: string): Role => one<Role>(ms, 'ClusterRole', name);
const configs = (ms: Manifest[]): WebhookConfiguration[] => [
  one<WebhookConfiguration>(ms, 'MutatingWebhookConfiguration'),
  one<WebhookConfiguration>(ms, 'ValidatingWebhookConfiguration'),
];

describe('helm lint', () => {
  it('passes with the required values and with every switch flipped', async () => {
    const plain = await helm(['lint', '--strict', chartDir, ...REQUIRED]);
    expect(plain.stdout + plain.stderr).toContain('1 chart(s) linted, 0 chart(s) failed');
    const flipped = await helm([
      'lint',
      '--strict',
      chartDir,
      ...set(
        'clusterName=edge-1',
        'hub.enabled=false',
        'featureGates.KruiseDaemon=false',
        'crds.managed=false',
        'webhook.enabled=false',
        'manager.hostNetwork=true',
        'manager.replicas=1',
        'manager.leaderElection.enabled=false',
        'namespace.create=true',
      ),
    ]);
    expect(flipped.code, flipped.stdout + flipped.stderr).toBe(0);
  });
});

describe('helm package', () => {
  it('packages the chart with its CRD files, and the package renders them', async () => {
    const out = mkdtempSync(path.join(os.tmpdir(), 'flotilla-chart-'));
    try {
      await helmOk(['package', chartDir, '--destination', out]);
      const tgz = path.join(out, 'flotilla-agent-0.1.0.tgz');
      const ms = parseManifests(await helmOk(['template', 'flotilla-agent', tgz, ...REQUIRED]));
      expect(all(ms, 'CustomResourceDefinition')).toHaveLength(generateAllCrds().length);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('helm template with the required values', () => {
  it('renders every object of the agent', async () => {
    const ms = await render(REQUIRED);
    const kinds = ms.map((m) => `${m.kind}/${m.metadata.name}`).sort();
    expect(kinds).toEqual(
      [
        'ClusterRole/flotilla-agent-daemon',
        'ClusterRole/flotilla-agent-manager',
        'ClusterRoleBinding/flotilla-agent-daemon',
        'ClusterRoleBinding/flotilla-agent-manager',
        ...generateAllCrds().map((c) => `CustomResourceDefinition/${c.metadata.name}`),
        'DaemonSet/flotilla-agent-daemon',
        'Deployment/flotilla-agent-manager',
        'MutatingWebhookConfiguration/flotilla-agent-mutating',
        'Namespace/kruise-daemon-config',
        'PodDisruptionBudget/flotilla-agent-manager',
        'Role/flotilla-agent-daemon',
        'Role/flotilla-agent-manager',
        'Role/flotilla-agent-pull-secrets',
        'RoleBinding/flotilla-agent-daemon',
        'RoleBinding/flotilla-agent-manager',
        'RoleBinding/flotilla-agent-pull-secrets',
        'Service/flotilla-agent-webhook',
        'ServiceAccount/flotilla-agent-daemon',
        'ServiceAccount/flotilla-agent-manager',
        'ValidatingWebhookConfiguration/flotilla-agent-validating',
      ].sort(),
    );
    for (const m of ms) {
      if (m.kind !== 'CustomResourceDefinition' && !m.kind.startsWith('Cluster') && !m.kind.endsWith('Configuration')) {
        if (m.kind !== 'Namespace') expect(m.metadata.namespace, `${m.kind}/${m.metadata.name}`).toBeDefined();
      }
      expect(m.metadata.labels?.['app.kubernetes.io/managed-by'], `${m.kind}/${m.metadata.name}`).toBe('Helm');
    }
  });

  it('grants no wildcard, no Secret outside the agent namespace, and Secrets there only by name', async () => {
    const ms = await render(REQUIRED);
    for (const r of [...all<Role>(ms, 'ClusterRole'), ...all<Role>(ms, 'Role')]) {
      for (const rule of r.rules) {
        const where = `${r.kind}/${r.metadata.name} ${JSON.stringify(rule)}`;
        for (const field of [rule.apiGroups, rule.resources, rule.verbs, rule.resourceNames]) {
          expect(field ?? [], where).not.toContain('*');
        }
        expect(rule.verbs, where).not.toContain('escalate');
        expect(rule.verbs, where).not.toContain('bind');
        expect(rule.verbs, where).not.toContain('impersonate');
        expect(rule.nonResourceURLs, where).toBeUndefined();
      }
    }
    for (const r of all<Role>(ms, 'ClusterRole')) {
      for (const verb of ['get', 'list', 'watch']) expect(grants(r.rules, '', 'secrets', verb, 'x')).toBe(false);
      expect(grants(r.rules, 'rbac.authorization.k8s.io', 'clusterroles', 'create')).toBe(false);
      expect(grants(r.rules, 'apiextensions.k8s.io', 'customresourcedefinitions', 'get')).toBe(false);
    }
    const own = one<Role>(ms, 'Role', 'flotilla-agent-manager');
    expect(own.metadata.namespace).toBe('flotilla-system');
    expect(grants(own.rules, '', 'secrets', 'get', 'flotilla-agent-webhook-certs')).toBe(true);
    expect(grants(own.rules, '', 'secrets', 'update', 'flotilla-agent-join')).toBe(true);
    expect(grants(own.rules, '', 'secrets', 'get', 'someone-elses')).toBe(false);
    expect(grants(own.rules, '', 'secrets', 'list')).toBe(false);
    // The webhook configurations: only the chart's own two, and only read + patch.
    const mgr = clusterRole(ms, 'flotilla-agent-manager');
    expect(
      grants(
        mgr.rules,
        'admissionregistration.k8s.io',
        'mutatingwebhookconfigurations',
        'patch',
        'flotilla-agent-mutating',
      ),
    ).toBe(true);
    expect(grants(mgr.rules, 'admissionregistration.k8s.io', 'mutatingwebhookconfigurations', 'patch', 'other')).toBe(
      false,
    );
    expect(grants(mgr.rules, 'admissionregistration.k8s.io', 'mutatingwebhookconfigurations', 'create')).toBe(false);
    // The daemon reads pull secret copies and nothing else.
    const daemonRole = one<Role>(ms, 'Role', 'flotilla-agent-daemon');
    expect(daemonRole.metadata.namespace).toBe('kruise-daemon-config');
    expect(daemonRole.rules).toEqual([{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
    const daemon = clusterRole(ms, 'flotilla-agent-daemon');
    expect(grants(daemon.rules, 'apps.kruise.io', 'nodeimages', 'update')).toBe(false);
    expect(grants(daemon.rules, 'apps.kruise.io', 'nodeimages/status', 'patch')).toBe(true);
    expect(grants(daemon.rules, 'apps.kruise.io', 'containerrecreaterequests', 'watch')).toBe(true);
    expect(grants(daemon.rules, 'apps.kruise.io', 'containerrecreaterequests/status', 'patch')).toBe(true);
  });

  it('grants the manager exactly the rules its code uses (each one is explained in rbac-manager.yaml)', async () => {
    const ms = await render(REQUIRED);
    const rule = (apiGroups: string[], resources: string[], verbs: string[], resourceNames?: string[]) => ({
      apiGroups,
      resources,
      ...(resourceNames ? { resourceNames } : {}),
      verbs,
    });
    const rw = ['get', 'list', 'watch', 'create', 'update', 'delete'];
    expect(clusterRole(ms, 'flotilla-agent-manager').rules).toEqual([
      rule([''], ['pods'], ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
      rule([''], ['pods/status'], ['patch']),
      rule([''], ['pods/resize'], ['patch']),
      rule([''], ['persistentvolumeclaims'], ['list', 'watch', 'create', 'update', 'delete']),
      rule([''], ['nodes'], ['get', 'list', 'watch']),
      rule([''], ['namespaces'], ['get', 'list', 'watch']),
      rule(['apps.kruise.io'], ['workloadspreads'], ['get', 'list', 'watch', 'create', 'patch', 'delete']),
      rule(['apps.kruise.io'], ['workloadspreads/status'], ['update']),
      rule(['apps'], ['replicasets'], ['get', 'list', 'watch']),
      rule(['apps'], ['deployments', 'statefulsets'], ['get']),
      rule(['batch'], ['jobs'], ['get']),
      rule([''], ['events'], ['create', 'patch']),
      rule(['apps'], ['controllerrevisions'], rw),
      rule(
        ['apps.kruise.io'],
        ['clonesets', 'sidecarsets', 'imagepulljobs', 'broadcastjobs', 'daemonsets', 'statefulsets'],
        ['get', 'list', 'watch', 'create', 'patch', 'delete'],
      ),
      rule(
        ['apps.kruise.io'],
        [
          'clonesets/status',
          'broadcastjobs/status',
          'daemonsets/status',
          'statefulsets/status',
          'imagepulljobs/status',
        ],
        ['update'],
      ),
      rule(['apps.kruise.io'], ['sidecarsets/status'], ['patch']),
      rule(['apps.kruise.io'], ['containerrecreaterequests'], ['get', 'list', 'watch', 'patch', 'delete']),
      rule(['apps.kruise.io'], ['containerrecreaterequests/status'], ['patch']),
      rule(['policy.kruise.io'], ['podunavailablebudgets'], ['get', 'list', 'watch', 'create', 'patch', 'delete']),
      rule(['policy.kruise.io'], ['podunavailablebudgets/status'], ['update']),
      rule(['apps'], ['deployments', 'replicasets', 'statefulsets'], ['get']),
      rule(
        ['apps.kruise.io'],
        [
          'clonesets/finalizers',
          'sidecarsets/finalizers',
          'broadcastjobs/finalizers',
          'daemonsets/finalizers',
          'statefulsets/finalizers',
        ],
        ['update'],
      ),
      rule(['apps.kruise.io'], ['nodeimages'], rw),
      rule(['apps.kruise.io'], ['nodeimages/status'], ['update']),
      rule(
        ['admissionregistration.k8s.io'],
        ['mutatingwebhookconfigurations'],
        ['get', 'patch'],
        ['flotilla-agent-mutating'],
      ),
      rule(
        ['admissionregistration.k8s.io'],
        ['validatingwebhookconfigurations'],
        ['get', 'patch'],
        ['flotilla-agent-validating'],
      ),
      rule(
        ['apps.kruise.io'],
        ['clonesets', 'sidecarsets', 'imagepulljobs', 'nodeimages', 'broadcastjobs', 'statefulsets', 'daemonsets'],
        ['list', 'patch'],
      ),
      rule(
        ['apiextensions.k8s.io'],
        ['customresourcedefinitions', 'customresourcedefinitions/status'],
        ['get', 'patch'],
        [
          'clonesets.apps.kruise.io',
          'podunavailablebudgets.policy.kruise.io',
          'sidecarsets.apps.kruise.io',
          'imagepulljobs.apps.kruise.io',
          'nodeimages.apps.kruise.io',
          'broadcastjobs.apps.kruise.io',
          'statefulsets.apps.kruise.io',
          'daemonsets.apps.kruise.io',
        ],
      ),
    ]);
    expect(one<Role>(ms, 'Role', 'flotilla-agent-manager').rules).toEqual([
      rule(['coordination.k8s.io'], ['leases'], ['create']),
      rule(['coordination.k8s.io'], ['leases'], ['get', 'update'], ['flotilla-agent']),
      rule([''], ['secrets'], ['create']),
      rule([''], ['secrets'], ['get', 'update'], ['flotilla-agent-webhook-certs', 'flotilla-agent-join']),
      rule([''], ['configmaps'], ['list', 'watch'], ['kruise-configuration']),
      rule([''], ['configmaps'], ['create']),
      rule([''], ['configmaps'], ['get', 'patch'], ['flotilla-agent-finished-jobs']),
      rule(['apps'], ['controllerrevisions'], ['get', 'list', 'watch', 'create', 'patch', 'delete']),
    ]);
  });

  it('runs the manager as two non-root replicas that surge, spread over zones and probe readiness', async () => {
    const ms = await render(REQUIRED);
    const d = manager(ms);
    expect(d.spec.replicas).toBe(2);
    expect(d.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '100%' } });
    const pod = d.spec.template.spec;
    expect(pod.serviceAccountName).toBe('flotilla-agent-manager');
    expect(pod.hostNetwork).toBeUndefined();
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532 });
    expect(pod.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: d.spec.selector.matchLabels },
        matchLabelKeys: ['pod-template-hash'],
      },
    ]);
    const c = managerContainer(ms);
    expect(c.image).toBe('ghcr.io/flotilla/agent:0.1.0');
    expect(c.args).toEqual([
      'manager',
      '--lease-name=flotilla-agent',
      '--lease-duration=15s',
      '--renew-deadline=10s',
      '--retry-period=2s',
    ]);
    expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'health' });
    expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(c.startupProbe?.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(c.resources).toEqual({ requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '2', memory: '1Gi' } });
    expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
    expect(c.ports).toEqual([
      { name: 'health', containerPort: 8080, protocol: 'TCP' },
      { name: 'webhook', containerPort: 9876, protocol: 'TCP' },
    ]);
    expect(
      Object.fromEntries((c.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value])),
    ).toEqual({
      FLOTILLA_CLUSTER_NAME: 'test',
      FLOTILLA_LOG_LEVEL: 'info',
      FLOTILLA_HEALTH_PORT: '8080',
      FLOTILLA_COMPONENTS: '*',
      FLOTILLA_SIDECARSET_PATCH_METADATA_DEFAULTS_ALLOWED: 'false',
      FLOTILLA_SIDECARSET_SORT_CONTAINERS_BY_NAME: 'false',
      FLOTILLA_DELETION_PROTECTION: 'false',
      FLOTILLA_DELETION_PROTECTION_CRD_CASCADING: 'false',
      FLOTILLA_INPLACE_WORKLOAD_VERTICAL_SCALING: 'false',
      FLOTILLA_PUB_DELETE_GATE: 'true',
      FLOTILLA_PUB_UPDATE_GATE: 'false',
      FLOTILLA_IN_PLACE_POD_VERTICAL_SCALING: 'false',
      FLOTILLA_WORKLOADSPREAD_GATE: 'true',
      FLOTILLA_ASSIGN_BCJ_PODS_BY_SCHEDULER: 'true',
      FLOTILLA_IMAGEPULLJOB_SECRET_NAMESPACES: '',
      FLOTILLA_WEBHOOK_PORT: '9876',
      FLOTILLA_WEBHOOK_SERVICE_NAME: 'flotilla-agent-webhook',
      FLOTILLA_WEBHOOK_SECRET_NAME: 'flotilla-agent-webhook-certs',
      FLOTILLA_WEBHOOK_MANAGE_CONFIGURATIONS: 'false',
      FLOTILLA_WEBHOOK_MUTATING_CONFIGURATION: 'flotilla-agent-mutating',
      FLOTILLA_WEBHOOK_VALIDATING_CONFIGURATION: 'flotilla-agent-validating',
      FLOTILLA_WEBHOOK_CONTROLLERS_NICE: '10',
      FLOTILLA_HUB_URL: 'https://hub.example.com',
      FLOTILLA_JOIN_SECRET: 'flotilla-agent-join',
    });
    expect(c.env?.find((e) => e.name === 'POD_NAMESPACE')?.valueFrom).toEqual({
      fieldRef: { fieldPath: 'metadata.namespace' },
    });
    // No bootstrap token given: no reference to a Secret that does not exist.
    expect(c.env?.some((e) => e.name === 'FLOTILLA_BOOTSTRAP_TOKEN')).toBe(false);
    expect(one<Manifest & { spec: { minAvailable: number } }>(ms, 'PodDisruptionBudget').spec.minAvailable).toBe(1);
  });

  it('runs the daemon on every node against the CRI socket folder', async () => {
    const ms = await render(REQUIRED);
    const ds = one<Workload>(ms, 'DaemonSet');
    const pod = ds.spec.template.spec;
    expect(pod.serviceAccountName).toBe('flotilla-agent-daemon');
    expect(pod.tolerations).toEqual([{ operator: 'Exists' }]);
    expect(pod.containers[0]!.args).toEqual([
      'daemon',
      '--node=$(NODE_NAME)',
      '--health-port=10221',
      '--max-workers-for-pull-image=-1',
      '--run-dir=/var/run',
    ]);
    expect(pod.containers[0]!.env?.find((e) => e.name === 'NODE_NAME')?.valueFrom).toEqual({
      fieldRef: { fieldPath: 'spec.nodeName' },
    });
    expect(pod.volumes).toEqual([{ name: 'runtime-socket', hostPath: { path: '/var/run', type: 'Directory' } }]);
    expect(pod.containers[0]!.volumeMounts).toEqual([{ name: 'runtime-socket', mountPath: '/var/run' }]);
  });

  it('renders webhooks that fail closed after 30 s, skip kube-system and the agent namespace, and call the Service', async () => {
    const ms = await render(REQUIRED);
    for (const cfg of configs(ms)) {
      for (const w of cfg.webhooks) {
        expect(w.failurePolicy).toBe('Fail');
        expect(w.timeoutSeconds).toBe(30);
        expect(w.clientConfig.caBundle).toBeUndefined();
        expect(w.clientConfig.service).toMatchObject({ name: 'flotilla-agent-webhook', namespace: 'flotilla-system' });
        if (w.namespaceSelector) {
          expect(w.namespaceSelector.matchExpressions[0]!.values).toEqual(['flotilla-system', 'kube-system']);
        }
      }
    }
    const svc = one<Manifest & { spec: { selector: Record<string, string> } }>(ms, 'Service');
    expect(svc.spec.selector).toEqual(manager(ms).spec.selector.matchLabels);
  });

  it.each([
    { protection: false, pubDelete: true, workloadSpread: true },
    { protection: true, pubDelete: true, workloadSpread: true },
    // The pod DELETE and eviction webhooks stay for WorkloadSpread alone, and go with both gates off.
    { protection: false, pubDelete: false, workloadSpread: true },
    { protection: false, pubDelete: false, workloadSpread: false },
  ])(
    'renders exactly the webhooks the agent serves, as the agent itself would build them (%o)',
    async ({ protection, pubDelete, workloadSpread }) => {
      const ms = await render([
        ...REQUIRED,
        ...set(`featureGates.ResourcesDeletionProtection=${protection}`),
        ...set(`featureGates.PodUnavailableBudgetDeleteGate=${pubDelete}`),
        ...set(`featureGates.WorkloadSpread=${workloadSpread}`),
      ]);
      const gates = { resourcesDeletionProtection: protection, crdCascading: false };
      const inventory = { count: () => Promise.resolve(0) };
      const defs = webhookDefinitions({
        pods: {} as PodMutationSources,
        ...(protection ? { deletionProtection: { gates, inventory } } : {}),
        workloadSpread: { enabled: workloadSpread, guard: { assign: () => Promise.resolve(undefined) } },
        podBudget: {
          gates: { deleteGate: pubDelete, updateGate: false, inPlaceResize: false },
          guard: {
            admit: () => Promise.resolve({ allowed: true }),
            replicaSetWorkload: () => Promise.resolve(undefined),
          },
        },
      });
      const agent = buildWebhookConfigurations(defs, {
        mutatingName: 'flotilla-agent-mutating',
        validatingName: 'flotilla-agent-validating',
        target: { kind: 'service', namespace: 'flotilla-system', name: 'flotilla-agent-webhook', port: 443 },
        caBundlePem: '',
        timeoutSeconds: 30,
        agentNamespace: 'flotilla-system',
        failurePolicy: 'Fail',
      });
      const strip = (c: { webhooks: { name: string; clientConfig: object }[] }) =>
        c.webhooks
          .map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle: undefined } }))
          .sort((a, b) => a.name.localeCompare(b.name));
      const [mutating, validating] = configs(ms);
      expect(strip(mutating!)).toEqual(strip(agent.mutating));
      expect(strip(validating!)).toEqual(strip(agent.validating));
    },
  );

  it('renders the CRDs the generator writes, kept on uninstall', async () => {
    const ms = await render(REQUIRED);
    const generated = generateAllCrds();
    const chartFiles = path.join(chartDir, 'files/crds');
    expect(readdirSync(chartFiles).sort()).toEqual(generated.map(crdFileName).sort());
    for (const crd of generated) {
      const text = renderCrdYaml(crd);
      // Both copies are what `npm run gen:crds` writes now: rerun it after changing api/.
      expect(readFileSync(path.join(chartFiles, crdFileName(crd)), 'utf8'), crdFileName(crd)).toBe(text);
      expect(readFileSync(path.join(root, 'deploy/crds', crdFileName(crd)), 'utf8'), crdFileName(crd)).toBe(text);
      const rendered = one(ms, 'CustomResourceDefinition', crd.metadata.name);
      expect(rendered.metadata.annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
      const { metadata: _m, ...renderedRest } = rendered;
      const { metadata: _g, ...generatedRest } = parse(text) as Manifest;
      // A webhook-converted CRD calls this release's Service instead of the generator's placeholder.
      const conversion = crd.spec.conversion && {
        ...crd.spec.conversion,
        webhook: {
          ...crd.spec.conversion.webhook,
          clientConfig: {
            service: { namespace: 'flotilla-system', name: 'flotilla-agent-webhook', port: 443, path: '/convert' },
            // null, so switching from a URL (or adopting a kept CRD that had one) removes it.
            url: null,
          },
        },
      };
      expect(renderedRest).toEqual({
        ...generatedRest,
        spec: { ...(generatedRest.spec as object), ...(conversion ? { conversion } : {}) },
      });
    }
  });

  it('points the SidecarSet conversion webhook at webhook.url when set', async () => {
    const ms = await render([...REQUIRED, ...set('webhook.url=https://agent.example.com:9443/')]);
    const crd = one<{ spec: { conversion: { webhook: { clientConfig: unknown } } } }>(
      ms,
      'CustomResourceDefinition',
      'sidecarsets.apps.kruise.io',
    );
    expect(crd.spec.conversion.webhook.clientConfig).toEqual({
      url: 'https://agent.example.com:9443/convert',
      service: null,
    });
  });
});

describe('helm template with changed values', () => {
  it('takes the webhook policy, timeout, exclusions, selectors and URL from values', async () => {
    const ms = await render([
      ...REQUIRED,
      ...set(
        'webhook.failurePolicy=Ignore',
        'webhook.timeoutSeconds=7',
        'webhook.excludedNamespaces={kube-system,monitoring}',
        'webhook.namespaceSelector.matchLabels.tenant=blue',
        'webhook.objectSelector.matchLabels.owner=platform',
        'webhook.url=https://10.0.0.9:9443',
      ),
    ]);
    expect(all(ms, 'Service')).toEqual([]);
    const byName = Object.fromEntries(configs(ms).flatMap((c) => c.webhooks.map((w) => [w.name, w])));
    for (const w of Object.values(byName)) {
      expect(w.failurePolicy).toBe('Ignore');
      expect(w.timeoutSeconds).toBe(7);
      expect(w.clientConfig.url).toMatch(/^https:\/\/10\.0\.0\.9:9443\/(mutate|validate)-/);
    }
    expect(byName['mpod.kb.io']!.clientConfig.url).toBe('https://10.0.0.9:9443/mutate-pod');
    expect(byName['vcloneset.kb.io']!.namespaceSelector).toEqual({
      matchLabels: { tenant: 'blue' },
      matchExpressions: [
        {
          key: 'kubernetes.io/metadata.name',
          operator: 'NotIn',
          values: ['flotilla-system', 'kube-system', 'monitoring'],
        },
      ],
    });
    expect(byName['vsidecarset.kb.io']!.objectSelector).toEqual({ matchLabels: { owner: 'platform' } });
    expect(byName['vsidecarset.kb.io']!.namespaceSelector).toBeUndefined();
    expect(envOf(managerContainer(ms), 'FLOTILLA_WEBHOOK_URL')).toBe('https://10.0.0.9:9443');
  });

  it('scales, uses the host network, and passes leader election, hub and gates through', async () => {
    const ms = await render([
      ...set(
        'clusterName=edge-7',
        'hub.url=https://hub.example.com',
        'hub.natsUrl=nats://nats.example.com:4222',
        'hub.bootstrapToken.value=s3cr3t-t0ken-value',
        'clusterLabels.env=prod',
        'clusterLabels.region=eu',
        'manager.replicas=3',
        'manager.hostNetwork=true',
        'manager.leaderElection.leaseDuration=30s',
        'manager.topologySpread.whenUnsatisfiable=DoNotSchedule',
        'featureGates.SidecarSetPatchPodMetadataDefaultsAllowed=true',
        'featureGates.EnableSortSidecarContainerByName=true',
        'featureGates.InPlaceWorkloadVerticalScaling=true',
        'image.tag=1.2.3',
      ),
    ]);
    const d = manager(ms);
    expect(d.spec.replicas).toBe(3);
    expect(d.spec.template.spec.hostNetwork).toBe(true);
    expect(d.spec.template.spec.topologySpreadConstraints?.[0]?.whenUnsatisfiable).toBe('DoNotSchedule');
    const c = managerContainer(ms);
    expect(c.image).toBe('ghcr.io/flotilla/agent:1.2.3');
    expect(c.args).toContain('--lease-duration=30s');
    expect(envOf(c, 'FLOTILLA_CLUSTER_NAME')).toBe('edge-7');
    expect(envOf(c, 'FLOTILLA_CLUSTER_LABELS')).toBe('env=prod,region=eu');
    expect(envOf(c, 'FLOTILLA_NATS_URL')).toBe('nats://nats.example.com:4222');
    expect(envOf(c, 'FLOTILLA_SIDECARSET_PATCH_METADATA_DEFAULTS_ALLOWED')).toBe('true');
    expect(envOf(c, 'FLOTILLA_SIDECARSET_SORT_CONTAINERS_BY_NAME')).toBe('true');
    expect(envOf(c, 'FLOTILLA_INPLACE_WORKLOAD_VERTICAL_SCALING')).toBe('true');
    // The token reaches the agent from a Secret, never as a literal in the pod spec.
    expect(c.env?.find((e) => e.name === 'FLOTILLA_BOOTSTRAP_TOKEN')?.valueFrom).toEqual({
      secretKeyRef: { name: 'flotilla-agent-bootstrap', key: 'token', optional: true },
    });
    expect(JSON.stringify(d)).not.toContain('s3cr3t-t0ken-value');
    const secret = one<Manifest & { data: Record<string, string> }>(ms, 'Secret', 'flotilla-agent-bootstrap');
    expect(Buffer.from(secret.data.token!, 'base64').toString()).toBe('s3cr3t-t0ken-value');
  });

  it('drops the daemon, its controllers and their permissions with KruiseDaemon=false', async () => {
    const ms = await render([...REQUIRED, ...set('featureGates.KruiseDaemon=false')]);
    expect(all(ms, 'DaemonSet')).toEqual([]);
    expect(all(ms, 'Namespace')).toEqual([]);
    expect(all(ms, 'Role').map((r) => r.metadata.name)).toEqual(['flotilla-agent-manager']);
    expect(envOf(managerContainer(ms), 'FLOTILLA_COMPONENTS')).toBe('*,-nodeimage,-imagepulljob');
    const mgr = clusterRole(ms, 'flotilla-agent-manager');
    // Only the storage migration's list and patch stay (NodeImages OpenKruise left behind still
    // have to be rewritten before storedVersions can be trimmed).
    expect(grants(mgr.rules, 'apps.kruise.io', 'nodeimages', 'watch')).toBe(false);
    expect(grants(mgr.rules, 'apps.kruise.io', 'nodeimages', 'create')).toBe(false);
    expect(grants(mgr.rules, 'apps.kruise.io', 'imagepulljobs/status', 'update')).toBe(false);
  });

  it('turns the webhook and the hub link off through the one component switch', async () => {
    const ms = await render([...REQUIRED, ...set('webhook.enabled=false', 'hub.enabled=false')]);
    const c = managerContainer(ms);
    expect(envOf(c, 'FLOTILLA_COMPONENTS')).toBe('*,-webhook,-hublink');
    expect((c.env ?? []).map((e) => e.name).filter((n) => n.startsWith('FLOTILLA_WEBHOOK_'))).toEqual([]);
    expect(envOf(c, 'FLOTILLA_HUB_URL')).toBeUndefined();
    expect(all(ms, 'MutatingWebhookConfiguration')).toEqual([]);
  });

  it('grants pull secret reads per listed namespace, or cluster-wide only for "*"', async () => {
    const listed = await render([...REQUIRED, ...set('imagePullJob.pullSecretNamespaces={team-a,team-b}')]);
    expect(
      all<Role>(listed, 'Role')
        .filter((r) => r.metadata.name === 'flotilla-agent-pull-secrets')
        .map((r) => [r.metadata.namespace, r.rules[0]!.verbs]),
    ).toEqual([
      ['kruise-daemon-config', ['get', 'list', 'watch', 'create', 'update', 'delete']],
      ['team-a', ['get', 'list', 'watch']],
      ['team-b', ['get', 'list', 'watch']],
    ]);
    expect(envOf(managerContainer(listed), 'FLOTILLA_IMAGEPULLJOB_SECRET_NAMESPACES')).toBe('team-a,team-b');
    const everywhere = await render([...REQUIRED, ...set('imagePullJob.pullSecretNamespaces={*}')]);
    expect(grants(clusterRole(everywhere, 'flotilla-agent-manager').rules, '', 'secrets', 'list')).toBe(true);
    expect(envOf(managerContainer(everywhere), 'FLOTILLA_IMAGEPULLJOB_SECRET_NAMESPACES')).toBeUndefined();
  });

  it('binds BroadcastJob pods by nodeName when told, as OpenKruise without its scheduler flag', async () => {
    const byName = await render([...REQUIRED, ...set('broadcastJob.assignPodsByScheduler=false')]);
    expect(envOf(managerContainer(byName), 'FLOTILLA_ASSIGN_BCJ_PODS_BY_SCHEDULER')).toBe('false');
  });

  it('leaves the CRDs out, or lets uninstall delete them, on request', async () => {
    const unmanaged = await render([...REQUIRED, ...set('crds.managed=false')]);
    expect(all(unmanaged, 'CustomResourceDefinition')).toEqual([]);
    const deletable = await render([...REQUIRED, ...set('crds.keep=false')]);
    const crds = all(deletable, 'CustomResourceDefinition');
    expect(crds).toHaveLength(generateAllCrds().length);
    for (const crd of crds) expect(crd.metadata.annotations?.['helm.sh/resource-policy']).toBeUndefined();
  });

  it('uses the CRI socket file and drops the daemon to a user when asked', async () => {
    const ms = await render([
      ...REQUIRED,
      ...set('daemon.socketLocation=/run/k3s', 'daemon.socketFile=containerd/containerd.sock', 'daemon.runAsUser=1000'),
    ]);
    const pod = one<Workload>(ms, 'DaemonSet').spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsUser: 1000, runAsNonRoot: true });
    expect(pod.containers[0]!.args).toContain('--socket-file=/run/k3s/containerd/containerd.sock');
    expect(pod.volumes?.[0]?.hostPath?.path).toBe('/run/k3s');
  });
});

describe('values.schema.json', () => {
  const refused = async (flags: string[]): Promise<string> => {
    const r = await helm(['template', 'flotilla-agent', chartDir, ...flags]);
    expect(r.code, r.stdout).not.toBe(0);
    return r.stderr;
  };

  it('refuses a negative replica count, naming the field', async () => {
    const err = await refused([...REQUIRED, ...set('manager.replicas=-1')]);
    expect(err).toContain("values don't meet the specifications of the schema");
    expect(err).toMatch(/manager\/replicas|manager\.replicas/);
    expect(err).toMatch(/minimum/);
  });

  it('refuses an unknown feature gate, naming it', async () => {
    const err = await refused([...REQUIRED, ...set('featureGates.TurboMode=true')]);
    expect(err).toMatch(/featureGates/);
    expect(err).toContain('TurboMode');
  });

  it('refuses a missing hub URL', async () => {
    const err = await refused(set('clusterName=test'));
    expect(err).toMatch(/hub/);
    expect(err).toContain('url');
  });

  it('refuses a missing or malformed cluster name, a bad failure policy and an out-of-range timeout', async () => {
    expect(await refused(set('hub.url=https://hub.example.com'))).toContain('clusterName');
    expect(await refused(set('clusterName=Not_A_Label', 'hub.url=https://hub.example.com'))).toContain('clusterName');
    expect(await refused([...REQUIRED, ...set('webhook.failurePolicy=Sometimes')])).toContain('failurePolicy');
    expect(await refused([...REQUIRED, ...set('webhook.timeoutSeconds=31')])).toContain('timeoutSeconds');
    expect(await refused([...REQUIRED, ...set('webhook.controllersNice=20')])).toContain('controllersNice');
    expect(await refused([...REQUIRED, ...set('manager.replcas=2')])).toContain('replcas');
  });

  it('refuses several replicas without leader election (not expressible in the schema)', async () => {
    const err = await refused([...REQUIRED, ...set('manager.leaderElection.enabled=false')]);
    expect(err).toContain('manager.replicas > 1 needs manager.leaderElection.enabled');
  });
});
