/**
 * Reading `workloads apply -f` files and naming workloads on the command line; pure.
 *
 * A document is the REST create request (`kind`, `name`, `namespace`, `spec`, `placement`, ...) or
 * a Kubernetes-style manifest (`apiVersion`, `kind`, `metadata.name/namespace/labels/annotations`,
 * `spec`) with the hub's fields (`placement`, `overrides`, `updatePolicy`) beside `spec`.
 */
import type { CreateWorkloadRequest, UpdateWorkloadRequest, WorkloadKind } from '@flotilla/api';
import { WORKLOAD_KINDS } from '@flotilla/api/enums';
import YAML from 'yaml';
import { isUuid } from './args.js';
import { CliError, unparsableFile } from './errors.js';

type Doc = Record<string, unknown>;

const isObject = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);

function fromManifest(doc: Doc, where: string): Doc {
  const { apiVersion: _apiVersion, metadata, ...rest } = doc;
  if (!isObject(metadata)) return rest;
  const { name, namespace, labels, annotations, ...other } = metadata;
  const unknown = Object.keys(other).filter((k) => !['uid', 'resourceVersion', 'generation'].includes(k));
  if (unknown.length > 0) {
    throw new CliError(
      'CLI_ERR_FILE',
      `${where}: metadata.${unknown[0]} is not supported (name, namespace, labels, annotations)`,
    );
  }
  return {
    ...rest,
    name,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(labels !== undefined || annotations !== undefined
      ? {
          metadata: {
            ...(labels !== undefined ? { labels } : {}),
            ...(annotations !== undefined ? { annotations } : {}),
          },
        }
      : {}),
  };
}

/**
 * The workload documents of a YAML (one or more `---` documents) or JSON file (an object or an
 * array of them). Only the shape needed to find the workload is checked here; the hub validates
 * the rest and names every field it refuses.
 */
export function parseWorkloadDocuments(text: string, file: string): CreateWorkloadRequest[] {
  let docs: unknown[];
  try {
    docs = YAML.parseAllDocuments(text).map((d) => {
      if (d.errors.length > 0) throw d.errors[0]!;
      return d.toJS() as unknown;
    });
  } catch (cause) {
    throw unparsableFile(file, cause);
  }
  const flat = docs.flatMap((d) => (Array.isArray(d) ? (d as unknown[]) : [d])).filter((d) => d !== null);
  if (flat.length === 0) throw new CliError('CLI_ERR_FILE', `${file}: no workload documents`);
  return flat.map((d, i) => {
    const where = flat.length > 1 ? `${file} (document ${i + 1})` : file;
    if (!isObject(d)) throw new CliError('CLI_ERR_FILE', `${where}: a workload must be an object`);
    const w = 'apiVersion' in d || (isObject(d['metadata']) && 'name' in d['metadata']) ? fromManifest(d, where) : d;
    if (typeof w['kind'] !== 'string' || !(WORKLOAD_KINDS as readonly string[]).includes(w['kind'])) {
      throw new CliError('CLI_ERR_FILE', `${where}: kind must be one of ${WORKLOAD_KINDS.join(', ')}`);
    }
    if (typeof w['name'] !== 'string' || w['name'] === '') {
      throw new CliError('CLI_ERR_FILE', `${where}: name (or metadata.name) is required`);
    }
    return w as unknown as CreateWorkloadRequest;
  });
}

/** The update body for an existing workload: the template without kind/name/namespace. */
export function toUpdateRequest(w: CreateWorkloadRequest): UpdateWorkloadRequest {
  const { kind: _kind, name: _name, namespace: _namespace, ...template } = w;
  return template;
}

export interface WorkloadRef {
  id?: string;
  kind?: WorkloadKind;
  namespace?: string;
  name: string;
}

/**
 * `web`, `default/web`, `CloneSet/default/web`, `SidecarSet/sidecar` (the kind in front of a
 * name) or the workload's id.
 */
export function parseWorkloadRef(ref: string): WorkloadRef {
  if (isUuid(ref)) return { id: ref.toLowerCase(), name: ref };
  const parts = ref.split('/');
  const isKind = (s: string): s is WorkloadKind => (WORKLOAD_KINDS as readonly string[]).includes(s);
  if (parts.some((p, i) => p === '' && !(parts.length === 3 && i === 1)) || parts.length > 3) {
    throw new CliError('CLI_ERR_USAGE', `workload "${ref}" must be NAME, NAMESPACE/NAME, KIND/NAMESPACE/NAME or an id`);
  }
  if (parts.length === 1) return { name: parts[0]! };
  if (parts.length === 2) {
    const [a, b] = parts as [string, string];
    return isKind(a) ? { kind: a, name: b } : { namespace: a, name: b };
  }
  const [kind, namespace, name] = parts as [string, string, string];
  if (!isKind(kind))
    throw new CliError('CLI_ERR_USAGE', `"${kind}" is not a workload kind (${WORKLOAD_KINDS.join(', ')})`);
  return { kind, namespace, name };
}

/** `CloneSet default/web`, `SidecarSet sidecar`. */
export function workloadTitle(w: { kind: string; namespace: string; name: string }): string {
  return `${w.kind} ${w.namespace === '' ? '' : `${w.namespace}/`}${w.name}`;
}
