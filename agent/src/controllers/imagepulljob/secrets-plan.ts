/**
 * Pull secrets of ImagePullJobs, as pure decisions. The node daemon may only read secrets in one
 * config namespace (`kruise-daemon-config`), so the controller keeps a copy of each source secret
 * there: `generateName: <source>-`, labelled with the source uid, annotated with the source key
 * and the comma-separated keys of the jobs referencing it. A copy no job references is deleted.
 */
import {
  ANNOTATION_IMAGEPULLJOB_REFERENCES,
  ANNOTATION_IMAGEPULLJOB_SOURCE_KEY,
  LABEL_IMAGEPULLJOB_SOURCE_UID,
  type ImagePullJob,
} from '@flotilla/api';
import { sameJson } from '../../runtime/kube-object.js';

/** The parts of a core/v1 Secret the controller handles. */
export interface SecretLike {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    generateName?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  type?: string;
  data?: Record<string, string>;
}

/** `namespace/name` of a job or secret. */
export function keyOf(obj: { metadata?: { namespace?: string; name?: string } }): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

/** The job keys a copy's references annotation lists. */
export function referencesOf(copy: SecretLike): Set<string> {
  const value = copy.metadata?.annotations?.[ANNOTATION_IMAGEPULLJOB_REFERENCES] ?? '';
  return new Set(
    value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
}

function formatReferences(refs: Set<string>): string {
  return [...refs].sort().join(',');
}

export interface SecretPlan {
  /** For every source secret the job wants: the copy to use, or undefined to create one. */
  claim: { source: string; copy: SecretLike | undefined }[];
  /** Copies that reference the job but are no longer wanted by it. */
  release: SecretLike[];
}

/**
 * Sorts the config namespace's copies into what the job uses and what it lets go. A running job
 * wants one copy per `spec.pullSecrets` entry — preferably one that already lists it, else any
 * copy of the same source, so jobs sharing a secret share its copy; a finished or deleted job
 * wants none. Copies are visited by name so repeated passes pick the same one.
 */
export function planSecrets(job: ImagePullJob, copies: readonly SecretLike[], running: boolean): SecretPlan {
  const jobKey = keyOf(job);
  const wanted = running ? (job.spec.pullSecrets ?? []).map((n) => `${job.metadata?.namespace}/${n}`) : [];
  const chosen = new Map<string, SecretLike | undefined>(wanted.map((s) => [s, undefined]));
  const release: SecretLike[] = [];
  const sorted = [...copies].filter((c) => !c.metadata?.deletionTimestamp).sort(byName);
  for (const copy of sorted) {
    const source = copy.metadata?.annotations?.[ANNOTATION_IMAGEPULLJOB_SOURCE_KEY] ?? '';
    const mine = referencesOf(copy).has(jobKey);
    if (chosen.has(source)) {
      if (chosen.get(source) === undefined || mine) chosen.set(source, copy);
    } else if (mine) {
      release.push(copy);
    }
  }
  return { claim: [...chosen].map(([source, copy]) => ({ source, copy })), release };
}

/** A new copy of `source` in `namespace`, referenced by `jobKey`. */
export function newCopy(source: SecretLike, jobKey: string, namespace: string): SecretLike {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      generateName: `${source.metadata?.name ?? 'secret'}-`,
      namespace,
      labels: { ...source.metadata?.labels, [LABEL_IMAGEPULLJOB_SOURCE_UID]: source.metadata?.uid ?? '' },
      annotations: {
        ...source.metadata?.annotations,
        [ANNOTATION_IMAGEPULLJOB_SOURCE_KEY]: keyOf(source),
        [ANNOTATION_IMAGEPULLJOB_REFERENCES]: jobKey,
      },
    },
    ...(source.type ? { type: source.type } : {}),
    data: { ...source.data },
  };
}

/**
 * The copy brought up to date with its source and referencing `jobKey`; undefined when it
 * already is (so an unchanged copy is never rewritten).
 */
export function refreshedCopy(copy: SecretLike, source: SecretLike, jobKey: string): SecretLike | undefined {
  const refs = referencesOf(copy);
  if (sameJson(copy.data ?? {}, source.data ?? {}) && refs.has(jobKey)) return undefined;
  refs.add(jobKey);
  return {
    ...copy,
    data: { ...source.data },
    metadata: {
      ...copy.metadata,
      annotations: { ...copy.metadata?.annotations, [ANNOTATION_IMAGEPULLJOB_REFERENCES]: formatReferences(refs) },
    },
  };
}

/** Dropping `jobKey` from a copy: delete it when nobody else references it, else rewrite the list. */
export function releasedCopy(copy: SecretLike, jobKey: string): { delete: true } | { update: SecretLike } | undefined {
  const refs = referencesOf(copy);
  if (!refs.delete(jobKey)) return undefined;
  if (refs.size === 0) return { delete: true };
  return {
    update: {
      ...copy,
      metadata: {
        ...copy.metadata,
        annotations: { ...copy.metadata?.annotations, [ANNOTATION_IMAGEPULLJOB_REFERENCES]: formatReferences(refs) },
      },
    },
  };
}

function byName(a: SecretLike, b: SecretLike): number {
  const x = a.metadata?.name ?? '';
  const y = b.metadata?.name ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
}
