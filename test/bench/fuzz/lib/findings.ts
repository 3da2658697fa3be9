/**
 * What a fuzz run found: every input is checked against its target's properties, and each
 * broken property is recorded under a signature (which property, where), keeping the count and
 * the first input that broke it. A run keeps going after a finding, so one run reports all the
 * distinct problems it met rather than stopping at the first.
 */
import { stringify } from './json.js';

/** One broken property for one input. */
export interface Violation {
  /** The property, e.g. `5xx`, `throws`, `error-shape`, `prototype-pollution`. */
  kind: string;
  /** Where: a route, a function, a drop reason; with `kind` it forms the signature. */
  where: string;
  /** What was seen (an error message, a status and body); kept for the first input only. */
  detail: string;
}

export interface Finding extends Violation {
  count: number;
  /** The first input that broke the property, as JSON (shortened when large). */
  input: string;
}

const MAX_TEXT = 4000;

/** A throw as a violation: the error and the top of its stack. */
export function thrown(where: string, err: unknown): Violation {
  const e = err instanceof Error ? err : new Error(String(err));
  const stack = e.stack?.split('\n').slice(1, 8).join('\n') ?? '';
  return { kind: 'throws', where, detail: `${e.name}: ${e.message}\n${stack}` };
}

/** JSON of any value (deep ones included), shortened to `max` characters. */
export function preview(value: unknown, max = MAX_TEXT): string {
  const text = stringify(value, max);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export class Findings {
  readonly #bySignature = new Map<string, Finding>();
  /** Inputs checked, and counters a target adds (statuses, drop reasons, …). */
  readonly counters = new Map<string, number>();
  inputs = 0;

  /** Counts one checked input and records what it broke. */
  record(input: unknown, violations: readonly Violation[]): void {
    this.inputs++;
    this.report(input, violations);
  }

  /** Records violations not tied to a generated input (e.g. a check after the run). */
  report(input: unknown, violations: readonly Violation[]): void {
    for (const v of violations) {
      const key = `${v.kind}\u0000${v.where}`;
      const seen = this.#bySignature.get(key);
      if (seen) seen.count++;
      else this.#bySignature.set(key, { ...v, detail: v.detail.slice(0, MAX_TEXT), count: 1, input: preview(input) });
    }
  }

  count(name: string, by = 1): void {
    this.counters.set(name, (this.counters.get(name) ?? 0) + by);
  }

  /** Distinct findings, most frequent first. */
  list(): Finding[] {
    return [...this.#bySignature.values()].sort((a, b) => b.count - a.count);
  }

  /** How many inputs broke a property of this kind (e.g. all `5xx`). */
  total(kind: string): number {
    return this.list()
      .filter((f) => f.kind === kind)
      .reduce((n, f) => n + f.count, 0);
  }

  /** The counters as a sorted plain object (for the results file). */
  countersObject(): Record<string, number> {
    return Object.fromEntries([...this.counters.entries()].sort(([a], [b]) => a.localeCompare(b)));
  }
}
