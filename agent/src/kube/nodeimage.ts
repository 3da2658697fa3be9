/**
 * The NodeImage as OpenKruise lays it out, shared by the NodeImage and ImagePullJob controllers
 * and the node daemon, which must agree on it byte for byte (or a job never finds its node's
 * status):
 *
 * - images are keyed as NormalizeImageRefToNameTag (pkg/daemon/util/util.go) keys them: the
 *   *familiar* repository name as the map key (`nginx` for `docker.io/library/nginx`,
 *   `127.0.0.1:5000/demo/tiny` stays as is) and the tag — `latest` when none is given, the digest
 *   (`sha256:…`) when one is — as the tag entry;
 * - tags are kept sorted by name, in spec and status;
 * - both controllers of one agent see the same Nodes (so NodeImages) and jobs: NodeImageScope.
 */
import { parseImageReference } from '@flotilla/api';

const DOCKER_HUB = 'docker.io';
const OFFICIAL_PREFIX = 'library/';

/** An image reference split the way NodeImage stores it. */
export interface NodeImageRef {
  /** Familiar repository name: the key of spec.images / status.imageStatuses. */
  name: string;
  /** Tag, or digest (`sha256:…`) for digest references. */
  tag: string;
}

export type ParsedNodeImageRef = ({ ok: true } & NodeImageRef) | { ok: false; reason: string };

/**
 * Splits `image` into the NodeImage key and tag. A reference with both a tag and a digest keeps
 * only the digest, as the digest is what gets pulled.
 */
export function toNodeImageRef(image: string): ParsedNodeImageRef {
  const parsed = parseImageReference(image);
  if (!parsed.ok) return { ok: false, reason: parsed.reason };
  const { domain, path } = splitDomain(parsed.name);
  const name = domain === DOCKER_HUB ? familiarDockerHubPath(path) : `${domain}/${path}`;
  return { ok: true, name, tag: parsed.digest ?? parsed.tag ?? 'latest' };
}

/**
 * The reference to pull for a NodeImage entry: `name:tag`, or `name@digest` when the tag entry is
 * a digest. Fails for keys or tags edited into something that is no image reference.
 */
export function pullReference(name: string, tag: string): { ok: true; ref: string } | { ok: false; reason: string } {
  const ref = tag.includes(':') ? `${name}@${tag}` : `${name}:${tag}`;
  const parsed = parseImageReference(ref);
  if (!parsed.ok) return { ok: false, reason: `invalid image reference ${JSON.stringify(ref)}: ${parsed.reason}` };
  return { ok: true, ref };
}

/**
 * distribution's splitDockerDomain: the first path component is a registry host only if it
 * looks like one (has a dot or a port, or is localhost); otherwise the image is on Docker Hub.
 */
function splitDomain(name: string): { domain: string; path: string } {
  const slash = name.indexOf('/');
  const first = slash < 0 ? '' : name.slice(0, slash);
  if (slash < 0 || (!first.includes('.') && !first.includes(':') && first !== 'localhost')) {
    return { domain: DOCKER_HUB, path: name };
  }
  const domain = first === 'index.docker.io' ? DOCKER_HUB : first;
  return { domain, path: name.slice(slash + 1) };
}

/** `library/nginx` → `nginx`; `library/a/b` and `user/app` stay as they are. */
function familiarDockerHubPath(path: string): string {
  const rest = path.startsWith(OFFICIAL_PREFIX) ? path.slice(OFFICIAL_PREFIX.length) : undefined;
  if (rest !== undefined && !rest.includes('/')) return rest;
  return path;
}

/** OpenKruise keeps tags sorted by name in both spec and status. */
export function sortTags<T extends { tag: string }>(tags: T[]): T[] {
  return [...tags].sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0));
}

/**
 * Label selectors restricting which Nodes (and so NodeImages, which carry the Node's labels) and
 * which ImagePullJobs a controller instance sees: for sharding, and for tests sharing a cluster.
 */
export interface NodeImageScope {
  nodeSelector?: string;
  jobSelector?: string;
}
