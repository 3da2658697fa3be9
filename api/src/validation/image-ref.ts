/**
 * Container image references in the grammar of github.com/distribution/reference, which the
 * kubelet, containerd and OpenKruise's image puller all parse with:
 *
 *   reference := name [ ":" tag ] [ "@" digest ]
 *   name      := [domain "/"] path-component ["/" path-component]*
 */

const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const REFERENCE = new RegExp(
  `^((?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*)(?::(${TAG}))?(?:@(${DIGEST}))?$`,
);

/** Hex lengths of the digest algorithms the registry client knows. */
const DIGEST_HEX_LENGTH: Readonly<Record<string, number>> = { sha256: 64, sha384: 96, sha512: 128 };

const NAME_MAX_LENGTH = 255;
/** Longer input is rejected before the pattern runs: no real reference comes close. */
const INPUT_MAX_LENGTH = 4096;

export interface ImageReference {
  /** Repository name as written, domain included when given (`docker.io/library/nginx`). */
  readonly name: string;
  readonly tag?: string;
  readonly digest?: string;
}

export type ParsedImageReference =
  ({ readonly ok: true } & ImageReference) | { readonly ok: false; readonly reason: string };

/** Parses a reference; the reason says what is wrong in terms a user can fix. */
export function parseImageReference(image: string): ParsedImageReference {
  if (image.length === 0) return { ok: false, reason: 'must not be empty' };
  if (image.length > INPUT_MAX_LENGTH) return { ok: false, reason: 'is too long to be an image reference' };
  const match = REFERENCE.exec(image);
  if (!match) {
    return image.toLowerCase() !== image && REFERENCE.test(image.toLowerCase())
      ? { ok: false, reason: 'repository name must be lowercase' }
      : { ok: false, reason: 'invalid reference format' };
  }
  const [, name = '', tag, digest] = match;
  const reason = nameProblem(name) ?? (digest === undefined ? undefined : digestProblem(digest));
  if (reason !== undefined) return { ok: false, reason };
  return { ok: true, name, ...(tag === undefined ? {} : { tag }), ...(digest === undefined ? {} : { digest }) };
}

/** What is wrong with a repository name the pattern accepted, if anything. */
function nameProblem(name: string): string | undefined {
  if (name.length > NAME_MAX_LENGTH) return `repository name must not be more than ${NAME_MAX_LENGTH} characters`;
  if (/^[a-f0-9]{64}$/.test(name)) return 'cannot specify 64-byte hexadecimal strings as a repository name';
  return undefined;
}

/** What is wrong with an `algorithm:hex` digest the pattern accepted, if anything. */
function digestProblem(digest: string): string | undefined {
  const [algorithm = '', hex = ''] = digest.split(':');
  const length = DIGEST_HEX_LENGTH[algorithm];
  if (length === undefined) return `unsupported digest algorithm ${JSON.stringify(algorithm)}`;
  if (hex.length !== length) return `invalid ${algorithm} digest length`;
  return undefined;
}

/**
 * The tag the kubelet assumes for an image (k8s parsers.ParseImageName): the written tag,
 * "latest" when neither tag nor digest is given, and '' for a digest-only or unparsable reference.
 */
export function effectiveImageTag(image: string): string {
  const parsed = parseImageReference(image);
  if (!parsed.ok) return '';
  if (parsed.tag !== undefined) return parsed.tag;
  return parsed.digest === undefined ? 'latest' : '';
}
