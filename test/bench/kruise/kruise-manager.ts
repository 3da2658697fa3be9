// kruise-manager on a harness cluster, as its Helm chart installs it but out of cluster: its CRDs,
// its webhook configurations, its namespace, and the binary with a kubeconfig, its webhook in URL
// mode on loopback (WEBHOOK_HOST), no leader election. Each step that fails names itself.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeRest } from '../../../agent/src/runtime/rest.js';
import { ensureKruise, freePort, startProcess, type ManagedProcess } from '../../env/src/index.js';
import { applyCrds, until } from '../cloneset/measure.js';

/** The namespace the chart installs into; kruise-manager reads it from POD_NAMESPACE. */
export const KRUISE_NAMESPACE = 'kruise-system';

/** Where a kruise-manager binary and the source tree it was built from are. */
export interface KruiseDist {
  /** The kruise-manager binary (the module's root `main` package). */
  binary: string;
  /**
   * A folder with the same version's config/crd/bases and config/webhook: the source tree, or
   * the tool folder build-tools.sh copies them into.
   */
  source: string;
}

/**
 * The kruise-manager the bench was pointed at (--kruise-manager and --kruise-src, or
 * KRUISE_MANAGER and KRUISE_SRC): both, or neither for the one build-tools.sh builds.
 */
export function givenKruiseDist(binary: string | undefined, source: string | undefined): KruiseDist | undefined {
  if (!binary && !source) return undefined;
  if (!binary || !source) {
    throw new Error(
      `kruise-manager: --kruise-manager=<binary> and --kruise-src=<its source tree> (or KRUISE_MANAGER and KRUISE_SRC) go together; got only ${binary ? '--kruise-manager' : '--kruise-src'} (give neither to use the one build-tools.sh builds)`,
    );
  }
  return { binary: path.resolve(binary), source: path.resolve(source) };
}

/** A step of bringing kruise-manager up that failed, named so the bench's error says which. */
export class KruiseStepError extends Error {
  constructor(step: string, cause: unknown) {
    super(`kruise-manager: ${step} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** Runs one step of bringing kruise-manager up; its failure names the step. */
export async function kruiseStep<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new KruiseStepError(name, err);
  }
}

/** Checks the binary and the source tree before any cluster starts. */
export function checkKruiseDist(dist: KruiseDist): { sha256: string } {
  if (!existsSync(dist.binary)) throw new KruiseStepError('finding the binary', `${dist.binary} does not exist`);
  for (const dir of ['config/crd/bases', 'config/webhook']) {
    if (!existsSync(path.join(dist.source, dir)))
      throw new KruiseStepError('finding its manifests', `${path.join(dist.source, dir)} does not exist`);
  }
  return { sha256: createHash('sha256').update(readFileSync(dist.binary)).digest('hex') };
}

/** The kruise-manager a bench runs: checked, with its SHA-256 and where it came from. */
export interface ResolvedKruise extends KruiseDist {
  sha256: string;
  from: string;
}

/**
 * The given kruise-manager (givenKruiseDist), else the one `build-tools.sh kruise` builds and
 * caches at `version`; checked before any cluster starts.
 */
export async function resolveKruise(version: string, given: KruiseDist | undefined): Promise<ResolvedKruise> {
  const dist =
    given ??
    (await kruiseStep(`building ${version} (bash test/env/build-tools.sh kruise)`, () => {
      const tool = ensureKruise();
      return { binary: tool.binary, source: tool.manifests };
    }));
  const from = given ? '--kruise-manager / --kruise-src' : 'build-tools.sh kruise (module proxy, pinned h1 hashes)';
  return { ...dist, from, ...checkKruiseDist(dist) };
}

type Manifest = { kind: string; metadata: { name: string }; webhooks?: { name: string }[] };

function manifests(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as Manifest | null)
    .filter((d): d is Manifest => d !== null);
}

/**
 * The webhook configurations as the chart installs them: config/webhook/manifests.yaml with the
 * kustomization's name prefix and its patch (the selectors of patch_manifests.yaml, merged into
 * the webhook of the same name). kruise-manager fills in the CA and the URL itself.
 */
export function webhookConfigurations(source: string): Manifest[] {
  const dir = path.join(source, 'config/webhook');
  const patches = manifests(path.join(dir, 'patch_manifests.yaml'));
  return manifests(path.join(dir, 'manifests.yaml')).map((conf) => {
    const patch = patches.find((p) => p.kind === conf.kind && p.metadata.name === conf.metadata.name);
    const webhooks = conf.webhooks?.map((wh) => ({ ...wh, ...patch?.webhooks?.find((p) => p.name === wh.name) }));
    return { ...conf, metadata: { ...conf.metadata, name: `kruise-${conf.metadata.name}` }, webhooks };
  });
}

const ADMISSION = '/apis/admissionregistration.k8s.io/v1';

/** Applies OpenKruise's own CRDs and webhook configurations and creates its namespace. */
export async function installKruise(rest: KubeRest, source: string): Promise<void> {
  await kruiseStep('applying its CRDs (config/crd/bases)', async () => {
    await applyCrds(rest, path.join(source, 'config/crd/bases'));
    await until(
      'CloneSets served',
      async () =>
        rest.request({ method: 'GET', path: '/apis/apps.kruise.io/v1alpha1/clonesets' }).then(
          () => true,
          () => false,
        ),
      60_000,
    );
  });
  await kruiseStep('creating its namespace and webhook configurations', async () => {
    await rest.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: KRUISE_NAMESPACE } } });
    for (const conf of webhookConfigurations(source)) {
      const plural =
        conf.kind === 'MutatingWebhookConfiguration'
          ? 'mutatingwebhookconfigurations'
          : 'validatingwebhookconfigurations';
      await rest.request({ method: 'POST', path: `${ADMISSION}/${plural}`, body: conf });
    }
  });
}

export interface KruiseManagerOptions {
  binary: string;
  kubeconfigPath: string;
  /** Run directory: its log, webhook certificates and protection log go there. */
  dir: string;
  /** Client rate limit (--rest-config-qps / --rest-config-burst); undefined: as shipped (30 / 50). */
  qps?: { qps: number; burst: number };
}

/**
 * Starts kruise-manager and waits until its webhook is ready (its /readyz: certificates
 * written, webhook configurations patched to the URL, server serving). Its controllers start
 * after that; the bench waits for them with a CloneSet of its own.
 */
export async function startKruiseManager(opts: KruiseManagerOptions): Promise<ManagedProcess> {
  mkdirSync(opts.dir, { recursive: true });
  const [webhookPort, healthPort, metricsPort, pprofPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const manager = await kruiseStep('starting the binary', () =>
    startProcess({
      name: 'kruise-manager',
      command: opts.binary,
      args: [
        '--enable-leader-election=false',
        `--metrics-addr=127.0.0.1:${metricsPort}`,
        `--health-probe-addr=127.0.0.1:${healthPort}`,
        `--pprof-addr=127.0.0.1:${pprofPort}`,
        `--protection-log-path=${path.join(opts.dir, 'protection')}`,
        // The chart's log settings (manager.log.level 4).
        '--logtostderr=true',
        '--v=4',
        ...(opts.qps ? [`--rest-config-qps=${opts.qps.qps}`, `--rest-config-burst=${opts.qps.burst}`] : []),
      ],
      env: {
        ...process.env,
        KUBECONFIG: opts.kubeconfigPath,
        POD_NAMESPACE: KRUISE_NAMESPACE,
        // URL mode: certificates for this host, written to the cert dir, and webhook
        // configurations pointing at https://127.0.0.1:<port>.
        WEBHOOK_HOST: '127.0.0.1',
        WEBHOOK_PORT: String(webhookPort),
        WEBHOOK_CERT_DIR: path.join(opts.dir, 'webhook-certs'),
      },
      logFile: path.join(opts.dir, 'kruise-manager.log'),
    }),
  );
  try {
    await until(
      'its /readyz',
      async () => {
        if (manager.hasExited()) throw new Error(`it exited (code ${String(await manager.exited)})`);
        return fetch(`http://127.0.0.1:${healthPort}/readyz`).then(
          (res) => res.ok,
          () => false,
        );
      },
      120_000,
      250,
    );
  } catch (err) {
    await manager.stop();
    const why = err instanceof Error ? err.message : String(err);
    throw new KruiseStepError(
      'waiting for its webhook to be ready (/readyz)',
      `${why}; log tail:\n${manager.logTail(30)}`,
    );
  }
  return manager;
}
