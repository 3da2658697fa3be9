import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HarnessError } from './errors.js';

const envDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Pinned tool versions, read from test/env/versions.env (the same file build-tools.sh reads). */
export interface ToolVersions {
  K8S_VERSION: string;
  ETCD_VERSION: string;
  KWOK_VERSION: string;
  HELM_VERSION: string;
  NATS_SERVER_VERSION: string;
  CRI_API_VERSION: string;
  /** kruise-manager for bench:kruise; KRUISE_SUM and KRUISE_GOMOD_SUM are its pinned h1 hashes. */
  KRUISE_VERSION: string;
  KRUISE_SUM: string;
  KRUISE_GOMOD_SUM: string;
}

export function readVersions(file = path.join(envDir, 'versions.env')): ToolVersions {
  const out: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(\S+)/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!;
  }
  return out as unknown as ToolVersions;
}

/** Where build-tools.sh caches binaries; the same rule as the script so both agree. */
export function toolsDir(): string {
  if (process.env.FLOTILLA_TOOLS_DIR) return process.env.FLOTILLA_TOOLS_DIR;
  const cache = process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache');
  return path.join(cache, 'flotilla', 'tools');
}

export type ToolName =
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kubectl'
  | 'etcd'
  | 'etcdctl'
  | 'kwok'
  | 'helm'
  | 'nats-server';

function toolFolder(name: ToolName, v: ToolVersions): string {
  switch (name) {
    case 'kube-apiserver':
    case 'kube-controller-manager':
    case 'kube-scheduler':
    case 'kubectl':
      return `k8s-${v.K8S_VERSION}`;
    case 'etcd':
    case 'etcdctl':
      return `etcd-${v.ETCD_VERSION}`;
    case 'kwok':
      return `kwok-${v.KWOK_VERSION}`;
    case 'helm':
      return `helm-${v.HELM_VERSION}`;
    case 'nats-server':
      return `nats-server-${v.NATS_SERVER_VERSION}`;
  }
}

/** Absolute path of a built tool; fails naming the tool and the command that builds it. */
export function toolPath(name: ToolName, versions = readVersions()): string {
  const p = path.join(toolsDir(), toolFolder(name, versions), 'bin', name);
  try {
    accessSync(p, constants.X_OK);
  } catch (cause) {
    throw new HarnessError('TOOL_MISSING', name, `binary not found at ${p}; run \`npm run tools\` to build it`, '', {
      cause,
    });
  }
  return p;
}

export function hasTool(name: ToolName): boolean {
  return existsSync(path.join(toolsDir(), toolFolder(name, readVersions()), 'bin', name));
}

/** The CRI api.proto fetched by build-tools.sh (k8s.io/cri-api). */
export function criApiProto(versions = readVersions()): string {
  return path.join(toolsDir(), `cri-api-${versions.CRI_API_VERSION}`, 'api.proto');
}

/**
 * kruise-manager for bench:kruise, as `build-tools.sh kruise` lays it out: the binary, and beside
 * it the module's config/crd/bases and config/webhook (`manifests` is their parent folder).
 */
export interface KruiseTool {
  version: string;
  binary: string;
  manifests: string;
}

export function kruiseTool(versions = readVersions()): KruiseTool {
  const dir = path.join(toolsDir(), `kruise-${versions.KRUISE_VERSION}`);
  return { version: versions.KRUISE_VERSION, binary: path.join(dir, 'bin', 'kruise-manager'), manifests: dir };
}

/**
 * Builds kruise-manager unless it is cached (build-tools.sh checks in a moment) and returns where
 * it is. The build is not part of `npm run tools`: only bench:kruise needs it. Its output goes to
 * stderr, where the failing step is named.
 */
export function ensureKruise(): KruiseTool {
  const script = path.join(envDir, 'build-tools.sh');
  const built = spawnSync('bash', [script, 'kruise'], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (built.status !== 0) {
    const how = built.error ? built.error.message : `exit ${String(built.status ?? built.signal)}`;
    throw new HarnessError(
      'COMMAND_FAILED',
      'kruise-manager',
      `bash ${script} kruise failed (${how}); see its log above`,
    );
  }
  const tool = kruiseTool();
  if (!existsSync(tool.binary))
    throw new HarnessError('TOOL_MISSING', 'kruise-manager', `build-tools.sh kruise left no binary at ${tool.binary}`);
  return tool;
}
