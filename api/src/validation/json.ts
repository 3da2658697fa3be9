/**
 * Small helpers for JSON-shaped values of unknown origin. Everything here is iterative, never
 * recursive, so a hostile or accidentally deep document cannot overflow the stack.
 */

/** A plain JSON object (not an array, not null, not a Date/Map/class instance). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.prototype.toString.call(value) === '[object Object]';
}

/**
 * Sets an own, enumerable property. Plain assignment would treat a key named `__proto__` as the
 * prototype setter; documents from users can contain that key.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Deep copy of a JSON-shaped value; non-plain objects are shared, not copied. */
export function cloneJson<T>(value: T): T {
  const copyOf = (v: unknown): unknown => (Array.isArray(v) ? new Array<unknown>(v.length) : isRecord(v) ? {} : v);
  const root = copyOf(value);
  const work: Array<[unknown, unknown]> = [[value, root]];
  for (let item = work.pop(); item !== undefined; item = work.pop()) {
    const [from, to] = item;
    if (Array.isArray(from) && Array.isArray(to)) {
      for (let i = 0; i < from.length; i++) {
        const child = copyOf(from[i]);
        to[i] = child;
        if (child !== from[i]) work.push([from[i], child]);
      }
    } else if (isRecord(from) && isRecord(to)) {
      for (const [key, v] of Object.entries(from)) {
        const child = copyOf(v);
        setOwn(to, key, child);
        if (child !== v) work.push([v, child]);
      }
    }
  }
  return root as T;
}

/** One step of a path into a JSON document: an object key or an array index. */
export type JsonPathSegment = string | number;

/** Where two documents first differ, and how (named after JSON-patch operations). */
export interface JsonDifference {
  readonly path: readonly JsonPathSegment[];
  readonly op: 'add' | 'remove' | 'replace';
}

/**
 * A place where `a` and `b` differ, or undefined when they are equal as JSON (key order does not
 * matter, array order does). Added and removed keys of a level are reported before differences
 * deeper down; among siblings the earlier one wins.
 */
export function firstDifference(a: unknown, b: unknown): JsonDifference | undefined {
  // Paths are kept as parent links and only spelled out for the answer, so deep documents cost
  // linear time.
  const work: Pair[] = [[a, b, undefined]];
  for (let item = work.pop(); item !== undefined; item = work.pop()) {
    const [x, y, at] = item;
    if (Object.is(x, y) || (typeof x === 'number' && x === y)) continue;
    const level = compareLevel(x, y, at);
    if (!Array.isArray(level)) return level;
    pushReversed(work, level);
  }
  return undefined;
}

/** Two values to compare, and where they sit. */
type Pair = [unknown, unknown, PathLink | undefined];

/**
 * One level of two unequal values: the difference found at this level (a key or an item added
 * or removed, or values of different kinds), or the pairs of children to compare next.
 */
function compareLevel(x: unknown, y: unknown, at: PathLink | undefined): JsonDifference | Pair[] {
  if (Array.isArray(x) && Array.isArray(y)) {
    const children: Pair[] = [];
    for (let i = 0; i < Math.max(x.length, y.length); i++) {
      if (i >= y.length) return { path: spell({ parent: at, segment: i }), op: 'remove' };
      if (i >= x.length) return { path: spell({ parent: at, segment: i }), op: 'add' };
      children.push([x[i], y[i], { parent: at, segment: i }]);
    }
    return children;
  }
  if (isRecord(x) && isRecord(y)) {
    const children: Pair[] = [];
    for (const key of Object.keys(x)) {
      if (!Object.hasOwn(y, key)) return { path: spell({ parent: at, segment: key }), op: 'remove' };
      children.push([x[key], y[key], { parent: at, segment: key }]);
    }
    for (const key of Object.keys(y)) {
      if (!Object.hasOwn(x, key)) return { path: spell({ parent: at, segment: key }), op: 'add' };
    }
    return children;
  }
  return { path: spell(at), op: 'replace' };
}

interface PathLink {
  readonly parent: PathLink | undefined;
  readonly segment: JsonPathSegment;
}

function spell(link: PathLink | undefined): JsonPathSegment[] {
  const path: JsonPathSegment[] = [];
  for (let at = link; at !== undefined; at = at.parent) path.push(at.segment);
  return path.reverse();
}

/** True when both values are equal as JSON documents. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return firstDifference(a, b) === undefined;
}

/** Pushes in reverse so that popping visits the items in their original order. */
function pushReversed<T>(stack: T[], items: readonly T[]): void {
  for (let i = items.length - 1; i >= 0; i--) stack.push(items[i] as T);
}
