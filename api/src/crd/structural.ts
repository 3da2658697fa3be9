/**
 * Turns our TypeBox schemas into CRD OpenAPI schemas that kube-apiserver accepts as structural
 * (apiextensions.k8s.io/v1), and checks the result against the structural rules.
 */
import { CRD_HINT } from '../kruise/common/markers.js';

/** A JSON Schema node as the CRD API (JSONSchemaProps) spells it. */
export type CrdSchema = { [keyword: string]: unknown };

/** Keywords copied as they are; anything else in a schema is a generator bug and throws. */
const COPIED_KEYWORDS = [
  'type',
  'format',
  'description',
  'enum',
  'default',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'nullable',
];
/** Keywords we handle ourselves while converting. */
const HANDLED_KEYWORDS = ['properties', 'required', 'items', 'additionalProperties', 'anyOf', CRD_HINT];

const INT_OR_STRING = 'x-kubernetes-int-or-string';
const PRESERVE_UNKNOWN = 'x-kubernetes-preserve-unknown-fields';

function isNode(value: unknown): value is CrdSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sortedKeys(node: CrdSchema): CrdSchema {
  const out: CrdSchema = {};
  for (const key of Object.keys(node).sort()) out[key] = node[key];
  return out;
}

/**
 * Converts a schema node. `path` names the node in error messages, e.g. `.spec.template`.
 * Objects marked opaque become `{type: object, x-kubernetes-preserve-unknown-fields: true}` and keep
 * only the properties marked `keep`.
 */
export function toCrdSchema(schema: unknown, path = ''): CrdSchema {
  if (!isNode(schema)) throw new Error(`schema at '${path || '.'}' is not an object`);
  const opaque = schema[CRD_HINT] === 'opaque';
  const out = copyKeywords(schema, path);
  if (opaque) {
    out.type = 'object';
    out[PRESERVE_UNKNOWN] = true;
  }

  const properties = convertProperties(schema, path, opaque);
  if (Object.keys(properties).length > 0) out.properties = properties;
  const required = (Array.isArray(schema.required) ? (schema.required as string[]) : []).filter((p) => p in properties);
  if (required.length > 0) out.required = [...required].sort();

  if (schema.items !== undefined) out.items = toCrdSchema(schema.items, `${path}[]`);
  if (isNode(schema.additionalProperties)) {
    out.additionalProperties = toCrdSchema(schema.additionalProperties, `${path}{}`);
  }
  if (schema.anyOf !== undefined) {
    if (schema[INT_OR_STRING] !== true) throw new Error(`schema at '${path || '.'}' uses anyOf outside int-or-string`);
    out.anyOf = [{ type: 'integer' }, { type: 'string' }];
  }
  return sortedKeys(out);
}

/** The keywords a CRD takes as they are; throws on one it cannot express. */
function copyKeywords(schema: CrdSchema, path: string): CrdSchema {
  const out: CrdSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (COPIED_KEYWORDS.includes(key) || key.startsWith('x-kubernetes-')) out[key] = value;
    else if (!HANDLED_KEYWORDS.includes(key))
      throw new Error(`schema at '${path || '.'}' uses '${key}', which a CRD cannot express`);
  }
  return out;
}

function convertProperties(schema: CrdSchema, path: string, opaque: boolean): CrdSchema {
  const properties = isNode(schema.properties) ? schema.properties : {};
  const out: CrdSchema = {};
  for (const name of Object.keys(properties).sort()) {
    const property = properties[name];
    if (opaque && !(isNode(property) && property[CRD_HINT] === 'keep')) continue;
    out[name] = toCrdSchema(property, `${path}.${name}`);
  }
  return out;
}

/**
 * The schema of a whole custom resource: like toCrdSchema, but `metadata` is left to the
 * apiserver (`type: object` only), as structural schemas require at the root.
 */
export function toCrdRootSchema(schema: unknown): CrdSchema {
  const root = toCrdSchema(schema);
  const properties = isNode(root.properties) ? { ...root.properties } : {};
  if ('metadata' in properties) properties.metadata = { type: 'object' };
  // The apiserver always sets apiVersion and kind itself; only the rest is the user's to provide.
  const required = (Array.isArray(root.required) ? (root.required as string[]) : []).filter(
    (name) => !['apiVersion', 'kind', 'metadata'].includes(name),
  );
  const { required: _dropped, ...rest } = root;
  return sortedKeys({ ...rest, properties, ...(required.length > 0 ? { required } : {}) });
}

const ALLOWED_KEYWORDS = new Set([
  ...COPIED_KEYWORDS,
  'properties',
  'required',
  'items',
  'additionalProperties',
  'anyOf',
]);

/**
 * Every way the schema breaks the rules kube-apiserver applies to CRD schemas (structural schema,
 * JSONSchemaProps keywords), as messages naming the node. Empty when the schema is acceptable.
 */
export function structuralViolations(root: CrdSchema): string[] {
  const problems: string[] = [];
  const work: SchemaNode[] = [{ node: root, path: '', level: 'root' }];
  for (let item = work.pop(); item !== undefined; item = work.pop()) {
    const { node, path, level } = item;
    problems.push(...nodeViolations(node, path || '.'));
    if (level === 'root') problems.push(...rootViolations(node));
    const children = childNodes(node, path);
    work.push(...children.nodes);
    problems.push(...children.problems);
  }
  return problems;
}

/** A node of the schema being checked, and where it sits. */
interface SchemaNode {
  node: CrdSchema;
  path: string;
  level: 'root' | 'field' | 'item';
}

const isIntOrString = (node: CrdSchema): boolean => node[INT_OR_STRING] === true;
const preservesUnknown = (node: CrdSchema): boolean => node[PRESERVE_UNKNOWN] === true;

/** The rules every node follows, whatever its place: when a node breaks one, and what that is. */
const NODE_RULES: ReadonlyArray<readonly [(node: CrdSchema) => boolean, string]> = [
  [(n) => n.type === undefined && !isIntOrString(n) && !preservesUnknown(n), 'type must be set'],
  [(n) => isIntOrString(n) && preservesUnknown(n), 'int-or-string and preserve-unknown-fields are exclusive'],
  [
    (n) => n.anyOf !== undefined && !(isIntOrString(n) && isIntOrStringAnyOf(n.anyOf)),
    'anyOf is only allowed as the int-or-string pattern',
  ],
  [(n) => isIntOrString(n) && n.type !== undefined, 'int-or-string must not set type'],
  [(n) => n.type === 'array' && !isNode(n.items), 'arrays must declare items'],
  [
    (n) => n.properties !== undefined && n.additionalProperties !== undefined,
    'properties and additionalProperties are exclusive',
  ],
  [
    (n) => n.additionalProperties !== undefined && !isNode(n.additionalProperties),
    'additionalProperties must be a schema',
  ],
];

/** The keywords and NODE_RULES a node breaks. `at` names it in the messages. */
function nodeViolations(node: CrdSchema, at: string): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(node)) {
    if (!ALLOWED_KEYWORDS.has(key) && !key.startsWith('x-kubernetes-'))
      problems.push(`${at}: keyword '${key}' is not allowed`);
  }
  for (const [breaks, message] of NODE_RULES) if (breaks(node)) problems.push(`${at}: ${message}`);
  return problems;
}

/** The schemas below a node, in the order they are checked, and the properties that are no schema. */
function childNodes(node: CrdSchema, path: string): { nodes: SchemaNode[]; problems: string[] } {
  const nodes: SchemaNode[] = [];
  const problems: string[] = [];
  if (isNode(node.items)) nodes.push({ node: node.items, path: `${path}[]`, level: 'item' });
  if (isNode(node.additionalProperties)) {
    nodes.push({ node: node.additionalProperties, path: `${path}{}`, level: 'field' });
  }
  if (isNode(node.properties)) {
    for (const [name, child] of Object.entries(node.properties)) {
      if (isNode(child)) nodes.push({ node: child, path: `${path}.${name}`, level: 'field' });
      else problems.push(`${path}.${name}: must be a schema`);
    }
  }
  return { nodes, problems };
}

function isIntOrStringAnyOf(anyOf: unknown): boolean {
  return (
    Array.isArray(anyOf) &&
    anyOf.length === 2 &&
    JSON.stringify(anyOf[0]) === '{"type":"integer"}' &&
    JSON.stringify(anyOf[1]) === '{"type":"string"}'
  );
}

function rootViolations(root: CrdSchema): string[] {
  const problems: string[] = [];
  if (root.type !== 'object') problems.push('.: the root must be of type object');
  if (root.additionalProperties !== undefined) problems.push('.: additionalProperties is not allowed at the root');
  const properties = isNode(root.properties) ? root.properties : {};
  const metadata = properties.metadata;
  if (metadata !== undefined && JSON.stringify(metadata) !== '{"type":"object"}') {
    problems.push('.metadata: must be exactly {type: object}; the apiserver owns metadata');
  }
  for (const name of ['apiVersion', 'kind']) {
    const field = properties[name];
    if (field !== undefined && (!isNode(field) || field.type !== 'string'))
      problems.push(`.${name}: must be of type string`);
  }
  return problems;
}
