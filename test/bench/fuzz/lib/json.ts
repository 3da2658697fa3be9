/**
 * JSON helpers for checking fuzz results. Everything is iterative: the inputs include values
 * nested ten thousand deep, and a recursive helper would fail where the code under test did not.
 */

type Json = unknown;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Structural equality of JSON values (own keys, any order; -0 equals 0 as in JSON). */
export function jsonEqual(a: Json, b: Json): boolean {
  const stack: [unknown, unknown][] = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop()!;
    if (x === y) continue;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) stack.push([x[i], y[i]]);
    } else if (isObj(x)) {
      if (!isObj(y)) return false;
      const kx = Object.keys(x);
      if (kx.length !== Object.keys(y).length) return false;
      for (const k of kx) {
        if (!Object.hasOwn(y, k)) return false;
        stack.push([x[k], y[k]]);
      }
    } else return false;
  }
  return true;
}

/** Nesting depth of a JSON value (a scalar is 0). */
export function depthOf(value: Json): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    max = Math.max(max, d + 1);
    for (const c of Object.values(v)) stack.push([c, d + 1]);
  }
  return max;
}

/** True when the value holds only JSON data: no functions, undefined, symbols or class instances. */
export function isPlainJson(value: Json): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v === 'string' || typeof v === 'boolean') continue;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return false;
      continue;
    }
    if (typeof v !== 'object') return false;
    const proto = Object.getPrototypeOf(v) as unknown;
    if (Array.isArray(v) ? proto !== Array.prototype : proto !== Object.prototype && proto !== null) return false;
    for (const c of Object.values(v) as unknown[]) stack.push(c);
  }
  return true;
}

const isData = (v: unknown): boolean => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';

/**
 * JSON.stringify without recursion (V8's gives up near 4,000 levels); own enumerable keys, byte
 * arrays as `{ "bytes": base64 }`. With `limit`, stops once the text is that long (the text then
 * ends in `…` and is not JSON): reports of huge inputs stay small.
 */
export function stringify(value: Json, limit = Infinity): string {
  const out: string[] = [];
  let length = 0;
  const tasks: ({ s: string } | { v: unknown })[] = [{ v: value }];
  while (tasks.length > 0) {
    if (length > limit) {
      out.push('…');
      break;
    }
    const t = tasks.pop()!;
    if ('s' in t) {
      out.push(t.s);
      length += t.s.length;
      continue;
    }
    const v = t.v instanceof Uint8Array ? { bytes: Buffer.from(t.v).toString('base64') } : t.v;
    if (Array.isArray(v)) {
      tasks.push({ s: ']' });
      for (let i = v.length - 1; i >= 0; i--) {
        tasks.push({ v: isData(v[i]) ? v[i] : null });
        if (i > 0) tasks.push({ s: ',' });
      }
      tasks.push({ s: '[' });
    } else if (typeof v === 'object' && v !== null) {
      const o = v as Record<string, unknown>;
      const keys = Object.keys(o).filter((k) => isData(o[k]));
      tasks.push({ s: '}' });
      for (let i = keys.length - 1; i >= 0; i--) {
        tasks.push({ v: o[keys[i]!] }, { s: `${JSON.stringify(keys[i])}:` });
        if (i > 0) tasks.push({ s: ',' });
      }
      tasks.push({ s: '{' });
    } else {
      const text = JSON.stringify(v) ?? 'null';
      out.push(text);
      length += text.length;
    }
  }
  return out.join('');
}

/** A deep copy of a JSON value without recursion; a `__proto__` key stays an own key. */
export function clone<T>(value: T): T {
  const wrap = { v: value as unknown };
  const stack: [Record<string | number, unknown>, string | number][] = [[wrap, 'v']];
  while (stack.length > 0) {
    const [holder, key] = stack.pop()!;
    const v = holder[key];
    if (typeof v !== 'object' || v === null) continue;
    const copy = (Array.isArray(v) ? [] : {}) as Record<string | number, unknown>;
    for (const [k, x] of Object.entries(v)) {
      Object.defineProperty(copy, k, { value: x, enumerable: true, writable: true, configurable: true });
      stack.push([copy, k]);
    }
    holder[key] = copy;
  }
  return wrap.v as T;
}
