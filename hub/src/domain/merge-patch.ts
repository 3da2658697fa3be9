/** JSON merge patch (RFC 7396): how a per-cluster override changes the spec. */

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Applies `patch` to `target` and returns a new value; neither input is modified. Objects merge
 * key by key, `null` deletes a key, anything else (arrays included) replaces.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    // defineProperty keeps a `__proto__` key an ordinary property instead of a prototype change.
    else
      Object.defineProperty(result, key, {
        value: applyMergePatch(result[key], value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return result;
}
