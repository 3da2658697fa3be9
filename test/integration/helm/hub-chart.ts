/**
 * The hub chart under test: `helm template` on deploy/charts/flotilla-hub (the same pinned helm as
 * the agent chart's tests, chart.ts) and the shapes of what it renders.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { helm, helmOk, one, parseManifests, root, type HelmResult, type Manifest } from './chart.js';

export const hubChartDir = path.join(root, 'deploy/charts/flotilla-hub');
export const HUB_RELEASE = 'flotilla-hub';
export const HUB_NAMESPACE = 'flotilla';

/** `--set` flags, one per pair. */
export const set = (...pairs: string[]): string[] => pairs.flatMap((p) => ['--set', p]);

/** The values every install needs: the Secrets that hold the database URL, admin token and NATS material, and the servers. */
export const HUB_REQUIRED = set(
  'database.existingSecret=hub-db',
  'adminToken.existingSecret=hub-admin',
  'nats.auth.existingSecret=hub-nats-auth',
  'nats.urls={tls://nats-0.nats:4222,tls://nats-1.nats:4222,tls://nats-2.nats:4222}',
);

/** `helm template` of the hub chart with these flags, parsed. */
export async function renderHub(flags: string[]): Promise<Manifest[]> {
  return parseManifests(await helmOk(['template', HUB_RELEASE, hubChartDir, '--namespace', HUB_NAMESPACE, ...flags]));
}

/** `helm template` of the hub chart, for the refusals (never throws). */
export function templateHub(flags: string[]): Promise<HelmResult> {
  return helm(['template', HUB_RELEASE, hubChartDir, '--namespace', HUB_NAMESPACE, ...flags]);
}

/**
 * The release's NOTES as `helm install` would print them. `helm template` never renders
 * NOTES.txt, and this helm's `install --dry-run` still asks a cluster for its version; so a copy
 * of the chart wraps NOTES.txt in a named template and renders it, with the same engine and
 * values, as a JSON string in a manifest of its own.
 */
export async function renderHubNotes(flags: string[]): Promise<string> {
  const copy = mkdtempSync(path.join(os.tmpdir(), 'flotilla-hub-notes-'));
  try {
    cpSync(hubChartDir, copy, { recursive: true });
    const notes = path.join(copy, 'templates/NOTES.txt');
    writeFileSync(
      path.join(copy, 'templates/_notes.tpl'),
      `{{- define "notes" -}}\n${readFileSync(notes, 'utf8')}{{- end -}}\n`,
    );
    writeFileSync(path.join(copy, 'templates/notes.yaml'), 'notes: {{ include "notes" . | toJson }}\n');
    rmSync(notes);
    const out = await helmOk([
      'template',
      HUB_RELEASE,
      copy,
      '--namespace',
      HUB_NAMESPACE,
      '--show-only',
      'templates/notes.yaml',
      ...flags,
    ]);
    return (parse(out) as { notes: string }).notes;
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    fieldRef?: { fieldPath: string };
  };
}

export interface HttpProbe {
  httpGet: { path: string; port: string | number; scheme?: string };
  periodSeconds?: number;
  failureThreshold?: number;
}

export interface HubContainer {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: unknown[];
  ports?: { name: string; containerPort: number; protocol?: string }[];
  readinessProbe?: HttpProbe;
  livenessProbe?: HttpProbe;
  startupProbe?: HttpProbe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean; subPath?: string }[];
}

export interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

export interface Volume {
  name: string;
  emptyDir?: { sizeLimit?: string };
  secret?: { secretName: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  configMap?: { name: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
}

export interface HubPodSpec {
  serviceAccountName: string;
  automountServiceAccountToken?: boolean;
  securityContext?: Record<string, unknown>;
  topologySpreadConstraints?: Record<string, unknown>[];
  containers: HubContainer[];
  volumes?: Volume[];
}

export interface HubDeployment extends Manifest {
  spec: {
    replicas: number;
    strategy?: Record<string, unknown>;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: HubPodSpec };
  };
}

export const hubDeployment = (ms: Manifest[]): HubDeployment => one<HubDeployment>(ms, 'Deployment', HUB_RELEASE);
export const hubContainer = (ms: Manifest[]): HubContainer => hubDeployment(ms).spec.template.spec.containers[0]!;
