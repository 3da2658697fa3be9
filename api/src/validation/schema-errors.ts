/**
 * Maps TypeBox validation errors (JSON pointers, JSON Schema keywords) to Kubernetes-style field
 * errors: `spec.template.spec.containers[0].image` and a message a user can act on.
 */
import type { TLocalizedValidationError } from 'typebox/error';
import {
  childPath,
  type FieldError,
  indexPath,
  invalid,
  notSupported,
  required,
  typeInvalid,
  unknownField,
} from './field-error.js';
import { isRecord } from './json.js';

type SchemaNode = Record<string, unknown>;

/** Splits a JSON pointer ('/spec/containers/0') into its unescaped segments. */
export function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Walks the schema beside the pointer so array indexes and map keys render as `[...]`. */
export function fieldPathOf(schema: unknown, pointer: string): string {
  let node: SchemaNode | undefined = isRecord(schema) ? schema : undefined;
  let path = '';
  for (const segment of pointerSegments(pointer)) {
    const properties = node && isRecord(node.properties) ? node.properties : undefined;
    if (properties && Object.hasOwn(properties, segment)) {
      path = childPath(path, segment);
      node = asNode(properties[segment]);
    } else if (node && isRecord(node.items)) {
      path = indexPath(path, segment);
      node = node.items;
    } else if (node && isRecord(node.additionalProperties)) {
      path = indexPath(path, segment);
      node = node.additionalProperties;
    } else {
      // Outside the schema (an unknown field, or inside an opaque object): guess from the shape.
      path = /^(0|[1-9][0-9]*)$/.test(segment) ? indexPath(path, segment) : childPath(path, segment);
      node = undefined;
    }
  }
  return path;
}

function asNode(value: unknown): SchemaNode | undefined {
  return isRecord(value) ? value : undefined;
}

/** The schema node a TypeBox schemaPath ('#/properties/spec/...') points at. */
function schemaAt(schema: unknown, schemaPath: string): SchemaNode | undefined {
  let node: unknown = schema;
  for (const segment of pointerSegments(schemaPath.replace(/^#/, ''))) {
    if (Array.isArray(node)) node = node[Number(segment)];
    else if (isRecord(node)) node = node[segment];
    else return undefined;
  }
  return asNode(node);
}

/** The value a JSON pointer points at in the checked document. */
function valueAt(document: unknown, pointer: string): unknown {
  let node: unknown = document;
  for (const segment of pointerSegments(pointer)) {
    if (Array.isArray(node)) node = node[Number(segment)];
    else if (isRecord(node) && Object.hasOwn(node, segment)) node = node[segment];
    else return undefined;
  }
  return node;
}

const FORMAT_HINTS: Readonly<Record<string, string>> = {
  'date-time': 'must be an RFC 3339 date-time such as "2024-01-02T15:04:05Z"',
};

/**
 * Field errors for TypeBox's errors about `document` checked against `schema`. Errors inside a
 * union are folded into one error for the union; a parent's "additional properties" summary is
 * dropped because each unknown field is reported on its own.
 */
export function toFieldErrors(
  schema: unknown,
  document: unknown,
  errors: readonly TLocalizedValidationError[],
): FieldError[] {
  const unions = errors.filter((e) => e.keyword === 'anyOf').map((e) => `${e.schemaPath}/anyOf/`);
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    if (error.keyword === 'additionalProperties') continue;
    if (unions.some((prefix) => error.schemaPath.startsWith(prefix))) continue;
    for (const mapped of mapError(schema, document, error)) {
      const key = `${mapped.path}\u0000${mapped.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(mapped);
    }
  }
  return out;
}

function mapError(schema: unknown, document: unknown, error: TLocalizedValidationError): FieldError[] {
  const path = fieldPathOf(schema, error.instancePath);
  const value = valueAt(document, error.instancePath);
  switch (error.keyword) {
    case 'boolean':
      return error.schemaPath.endsWith('/additionalProperties')
        ? [unknownField(path)]
        : [invalid(path, value, error.message)];
    case 'required':
      return error.params.requiredProperties.map((name) => required(childPath(path, name)));
    case 'type':
      return [typeInvalid(path, value, String(error.params.type))];
    case 'enum':
      return [notSupported(path, value, error.params.allowedValues.map(String))];
    case 'minimum':
      return [invalid(path, value, `must be greater than or equal to ${error.params.limit}`)];
    case 'maximum':
      return [invalid(path, value, `must be less than or equal to ${error.params.limit}`)];
    case 'format':
      return [invalid(path, value, FORMAT_HINTS[error.params.format] ?? `must be a valid ${error.params.format}`)];
    case 'anyOf':
      return [typeInvalid(path, value, describeUnion(schemaAt(schema, error.schemaPath)))];
    default:
      return [invalid(path, value, error.message)];
  }
}

/** "integer or string" for an int-or-string, else the member types joined. */
function describeUnion(node: SchemaNode | undefined): string {
  const members = node && Array.isArray(node.anyOf) ? node.anyOf : [];
  const types = members.map((m) => (isRecord(m) && typeof m.type === 'string' ? m.type : 'value'));
  return types.length > 0 ? types.join(' or ') : 'one of the allowed types';
}
