/**
 * The agent chart under test: helm (the harness's pinned build) run on deploy/charts/flotilla-agent,
 * and the rendered manifests parsed into objects the tests can inspect.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { toolPath } from '@flotilla/test';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const chartDir = path.join(root, 'deploy/charts/flotilla-agent');

/** The values every install needs: the schema requires a cluster name and, with a hub, its URL. */
export const REQUIRED = ['--set', 'clusterName=test', '--set', 'hub.url=https://hub.example.com'];

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs helm; never throws on a non-zero exit (tests look at the message). */
export function helm(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 180_000): Promise<HelmResult> {
  return new Promise((resolve) => {
    execFile(
      toolPath('helm'),
      args,
      {
        timeout: timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
        // Helm keeps its caches and repositories out of the user's home.
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          HELM_CACHE_HOME: path.join(root, '.cache/helm/cache'),
          HELM_CONFIG_HOME: path.join(root, '.cache/helm/config'),
          HELM_DATA_HOME: path.join(root, '.cache/helm/data'),
          ...env,
        },
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** helm, failing with its stderr on a non-zero exit. */
export async function helmOk(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs?: number): Promise<string> {
  const r = await helm(args, env, timeoutMs);
  if (r.code !== 0) throw new Error(`helm ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

/** `helm template` with these flags (values), parsed. */
export async function render(flags: string[], namespace = 'flotilla-system'): Promise<Manifest[]> {
  const out = await helmOk(['template', 'flotilla-agent', chartDir, '--namespace', namespace, ...flags]);
  return parseManifests(out);
}

export function parseManifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null && typeof m === 'object');
}

/** The one object of this kind (and name, when given); fails naming what is there instead. */
export function one<T = Manifest>(manifests: Manifest[], kind: string, name?: string): T {
  const found = manifests.filter((m) => m.kind === kind && (name === undefined || m.metadata.name === name));
  if (found.length !== 1) {
    const have = manifests.map((m) => `${m.kind}/${m.metadata.name}`).join(', ');
    throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length} among: ${have}`);
  }
  return found[0] as T;
}

export function all<T = Manifest>(manifests: Manifest[], kind: string): T[] {
  return manifests.filter((m) => m.kind === kind) as T[];
}

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
  nonResourceURLs?: string[];
}

export interface Role extends Manifest {
  rules: PolicyRule[];
}

/** Whether the rules grant `verb` on group/resource (optionally for one name), as RBAC decides. */
export function grants(rules: PolicyRule[], group: string, resource: string, verb: string, name?: string): boolean {
  return rules.some(
    (r) =>
      (r.apiGroups ?? []).some((g) => g === group || g === '*') &&
      (r.resources ?? []).some((x) => x === resource || x === '*') &&
      r.verbs.some((v) => v === verb || v === '*') &&
      (r.resourceNames === undefined ||
        r.resourceNames.length === 0 ||
        (name !== undefined && r.resourceNames.includes(name))),
  );
}

export interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: Record<string, unknown> }[];
  ports?: { name: string; containerPort: number }[];
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
  startupProbe?: { httpGet?: { path: string; port: string | number } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string }[];
}

export interface PodSpec {
  serviceAccountName: string;
  hostNetwork?: boolean;
  securityContext?: Record<string, unknown>;
  topologySpreadConstraints?: {
    maxSkew: number;
    topologyKey: string;
    whenUnsatisfiable: string;
    labelSelector: { matchLabels: Record<string, string> };
  }[];
  tolerations?: Record<string, unknown>[];
  containers: Container[];
  volumes?: { name: string; hostPath?: { path: string } }[];
}

export interface Workload extends Manifest {
  spec: {
    replicas?: number;
    strategy?: { type: string; rollingUpdate?: { maxUnavailable: number | string; maxSurge: number | string } };
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}

/** The value of an env variable of a container (undefined when absent or not a literal). */
export function envOf(c: Container, name: string): string | undefined {
  return c.env?.find((e) => e.name === name)?.value;
}
