/**
 * NodeImage validation: the schema, then OpenKruise's validating-webhook rules
 * (pkg/webhook/nodeimage/validating) on the defaulted object.
 */
import {
  childPath,
  duplicate,
  type FieldError,
  indexPath,
  invalid,
  notSupported,
  required,
  tooMany,
} from '../../validation/field-error.js';
import { parseImageReference } from '../../validation/image-ref.js';
import { IMAGE_PULL_PHASES, IMAGE_PULL_POLICIES, KruiseKind, SYNC_STATUS_PHASES } from '../constants.js';
import { validateMetadata } from '../common/metadata-validation.js';
import { type KindRules, validateObject } from '../common/validate-object.js';
import { defaultNodeImage } from './defaults.js';
import { type ImageSpec, type NodeImage, NodeImageSchema } from './schema.js';

/** OpenKruise caps the images one node keeps. */
export const MAX_IMAGES_PER_NODE = 256;

function oneOf(value: string | undefined, path: string, allowed: readonly string[]): FieldError[] {
  return value !== undefined && !allowed.includes(value) ? [notSupported(path, value, allowed)] : [];
}

/** An image key is a repository name without tag or digest, e.g. "nginx" or "docker.io/library/nginx". */
function validateImageName(name: string, path: string): FieldError[] {
  if (name === '') return [required(path, 'image name can not be empty')];
  const parsed = parseImageReference(name);
  if (!parsed.ok) return [invalid(path, name, `invalid image name: ${parsed.reason}`)];
  if (parsed.tag !== undefined || parsed.digest !== undefined) {
    return [invalid(path, name, 'must be an image name without tag or digest; tags are listed under tags')];
  }
  return [];
}

function validateImage(name: string, image: ImageSpec, path: string): FieldError[] {
  const errors = validateImageName(name, path);
  const tags = new Set<string>();
  image.tags.forEach((tag, i) => {
    const at = indexPath(childPath(path, 'tags'), i);
    if (tag.tag === '') errors.push(required(childPath(at, 'tag'), `tag for image ${name} can not be empty`));
    else if (tags.has(tag.tag)) errors.push(duplicate(childPath(at, 'tag'), tag.tag));
    tags.add(tag.tag);
    if (tag.pullPolicy?.ttlSecondsAfterFinished === undefined) {
      errors.push(required(childPath(at, 'pullPolicy.ttlSecondsAfterFinished'), `must be set for ${name}:${tag.tag}`));
    }
    errors.push(...oneOf(tag.imagePullPolicy, childPath(at, 'imagePullPolicy'), IMAGE_PULL_POLICIES));
  });
  return errors;
}

function validateStatus(nodeImage: NodeImage): FieldError[] {
  const status = nodeImage.status;
  if (!status) return [];
  const errors = oneOf(status.firstSyncStatus?.status, 'status.firstSyncStatus.status', SYNC_STATUS_PHASES);
  for (const [name, image] of Object.entries(status.imageStatuses ?? {})) {
    image.tags.forEach((tag, i) => {
      errors.push(...oneOf(tag.phase, `status.imageStatuses[${name}].tags[${i}].phase`, IMAGE_PULL_PHASES));
    });
  }
  return errors;
}

/** The semantic rules, on a NodeImage that passed the schema and was defaulted. */
export function validateDefaultedNodeImage(nodeImage: NodeImage): FieldError[] {
  const errors = validateMetadata(nodeImage.metadata);
  const images = Object.entries(nodeImage.spec.images ?? {});
  if (images.length > MAX_IMAGES_PER_NODE) errors.push(tooMany('spec.images', images.length, MAX_IMAGES_PER_NODE));
  for (const [name, image] of images) errors.push(...validateImage(name, image, indexPath('spec.images', name)));
  errors.push(...validateStatus(nodeImage));
  return errors;
}

/** How NodeImages are checked, for the shared validation pipeline. */
export const NODEIMAGE_RULES: KindRules<NodeImage> = {
  kind: KruiseKind.NodeImage,
  schema: NodeImageSchema,
  // A fixed time: defaulting only fills createdAt, which no rule reads, so validation stays pure.
  defaults: (nodeImage) => defaultNodeImage(nodeImage, new Date(0)),
  semantic: validateDefaultedNodeImage,
};

/**
 * Every problem with a NodeImage document, as field errors; empty when OpenKruise would accept
 * it. Never throws, whatever the input.
 */
export function validateNodeImage(document: unknown): FieldError[] {
  return validateObject(document, NODEIMAGE_RULES);
}
