/**
 * The plain-JSON shape of Kubernetes objects as the runtime caches and hands them out: exactly
 * what the apiserver sends (timestamps are RFC 3339 strings, never Date objects), with
 * apiVersion and kind always set. These types are structural, so the api package's generated
 * types (CloneSet, Pod, ...) fit them.
 */

/** metav1.OwnerReference. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** The metav1.ObjectMeta fields the runtime reads. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  /** Never read by the runtime; informers drop it before caching (transform.ts). */
  managedFields?: unknown[];
}

/** Any Kubernetes object. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/**
 * The cache key of an object: `namespace/name`, or `name` for cluster-scoped objects (client-go's
 * MetaNamespaceKeyFunc). Work queues use the same keys.
 */
export function objectKey(obj: KubeObject): string {
  const name = obj.metadata?.name ?? '';
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${name}` : name;
}

/** Builds a key from its parts; the inverse of {@link splitKey}. */
export function namespacedKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** Splits `namespace/name` (or a cluster-scoped `name`) into its parts. */
export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const slash = key.indexOf('/');
  return slash < 0
    ? { namespace: undefined, name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** The owner reference that has `controller: true`, if any. */
export function controllerRef(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((ref) => ref.controller === true);
}

/** The API group of an apiVersion: `apps.kruise.io/v1alpha1` → `apps.kruise.io`, `v1` → ``. */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * A deep copy in plain-JSON form. Typed clients deserialize timestamps into Date objects; they
 * become RFC 3339 strings as on the wire (second precision, which is what metav1.Time carries),
 * and undefined members are dropped as JSON would.
 */
export function toPlainJson<T>(value: T): T {
  return plain(value) as T;
}

function plain(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString().replace(/\.\d{3}Z$/, 'Z');
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = plain(v);
    return out;
  }
  return value;
}

/**
 * Freezes an object and everything inside it. Cached objects are shared by every reader, so a
 * mutation would silently corrupt the cache; frozen, it throws where the mistake is made.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Deep equality of plain JSON values, whatever the order of object keys; undefined members count as absent. */
export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, x]) => [k, canonical(x)]),
    );
  }
  return v;
}
