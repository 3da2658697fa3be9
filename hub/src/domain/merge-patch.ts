/**
 * JSON merge patch (RFC 7396): how a per-cluster override changes the spec. Iterative, so a
 * deeply nested patch costs memory in proportion to its size, never stack depth.
 */
import { cloneJson, isRecord, setOwn } from '@flotilla/api';

/**
 * Applies `patch` to `target` and returns a new value; neither input is modified. Objects merge
 * key by key, `null` deletes a key, anything else (arrays included) replaces. Parts of `target`
 * the patch does not touch are shared with the result, not copied.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return cloneJson(patch);
  const root: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  // Each item: an object of the result (already a fresh copy) and the patch object merged into it.
  const work: Array<[Record<string, unknown>, Record<string, unknown>]> = [[root, patch]];
  for (let item = work.pop(); item !== undefined; item = work.pop()) {
    const [result, part] = item;
    for (const [key, value] of Object.entries(part)) {
      if (value === null) {
        delete result[key];
      } else if (isRecord(value)) {
        const existing = Object.hasOwn(result, key) ? result[key] : undefined;
        const child: Record<string, unknown> = isRecord(existing) ? { ...existing } : {};
        // setOwn keeps a `__proto__` key an ordinary property instead of a prototype change.
        setOwn(result, key, child);
        work.push([child, value]);
      } else {
        setOwn(result, key, cloneJson(value));
      }
    }
  }
  return root;
}
