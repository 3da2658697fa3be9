/** `k=v` sets and `k-` removals for `clusters label`, and `k=v` selectors; pure. */
import { usageError } from './errors.js';

export interface LabelChanges {
  set: Record<string, string>;
  remove: string[];
}

/** `env=prod` sets, `env-` removes; anything else is a usage error naming the argument. */
export function parseLabelChanges(args: readonly string[]): LabelChanges {
  const set: Record<string, string> = {};
  const remove: string[] = [];
  for (const a of args) {
    const eq = a.indexOf('=');
    if (eq > 0) set[a.slice(0, eq)] = a.slice(eq + 1);
    else if (a.length > 1 && a.endsWith('-') && !a.includes('=')) remove.push(a.slice(0, -1));
    else throw usageError(`label change "${a}" must be KEY=VALUE or KEY-`);
  }
  for (const k of remove) if (k in set) throw usageError(`label ${k} is both set and removed`);
  return { set, remove };
}

/** The labels after the changes (the hub replaces the whole map). */
export function applyLabelChanges(current: Record<string, string>, changes: LabelChanges): Record<string, string> {
  const next = { ...current, ...changes.set };
  for (const k of changes.remove) delete next[k];
  return next;
}
