/**
 * Reads that fail because the apiserver cannot convert objects: a CRD served through a conversion
 * webhook (SidecarSet) whose objects are stored at another version than the one read, while that
 * webhook is unreachable or broken. The apiserver then fails every read of that kind only, with
 * `conversion webhook for <group/version>, Kind=<Kind> failed: <why>`. The manager's informers
 * report list/watch failures and successes here; the `conversion` readiness check fails naming
 * each kind that cannot be read, and each kind's failure and recovery is logged once.
 */
import type { Logger } from 'pino';

/** The apiserver's conversion error, e.g. `conversion webhook for apps.kruise.io/v1alpha1, Kind=SidecarSet failed: …`. */
const CONVERSION_FAILURE = /conversion webhook for ([^\s,]+), Kind=([A-Za-z0-9]+) failed: (.*)$/s;

export interface ConversionFailure {
  /** The kind whose objects could not be converted. */
  kind: string;
  /** The version the stored object had (`group/version`). */
  from: string;
  /** The apiserver's reason, e.g. `Post "https://…/convert": dial tcp …: connect: connection refused`. */
  reason: string;
}

/** The conversion failure an error carries (a list or watch answered with one), or undefined. */
export function conversionFailureOf(err: unknown): ConversionFailure | undefined {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const m = CONVERSION_FAILURE.exec(e.message);
    if (m) return { from: m[1]!, kind: m[2]!, reason: m[3]!.trim() };
  }
  return undefined;
}

/**
 * Per reader (one informer: a resource, namespace and selectors), whether its last read failed on
 * conversion, for the readiness check and the logs.
 */
export class ConversionHealth {
  readonly #log: Logger;
  readonly #failing = new Map<string, ConversionFailure>();

  constructor(logger: Logger) {
    this.#log = logger;
  }

  /** A read by `reader` failed with `err`; only conversion failures count. */
  readFailed(reader: string, err: unknown): void {
    const failure = conversionFailureOf(err);
    if (!failure) return;
    if (!this.#failing.has(reader)) {
      this.#log.error(
        { kind: failure.kind, from: failure.from, reason: failure.reason, reader },
        `cannot read ${failure.kind}: the apiserver cannot convert its objects from ${failure.from} because its conversion webhook failed (${failure.reason}); other kinds are unaffected`,
      );
    }
    this.#failing.set(reader, failure);
  }

  /** A read by `reader` succeeded. */
  readSucceeded(reader: string): void {
    const failure = this.#failing.get(reader);
    if (!failure) return;
    this.#failing.delete(reader);
    this.#log.info({ kind: failure.kind, reader }, `${failure.kind} reads again: its conversion webhook answers`);
  }

  /** What cannot be read, one entry per kind; undefined when everything reads. */
  summary(): string | undefined {
    const kinds = new Map([...this.#failing.values()].map((f) => [f.kind, f.reason]));
    if (kinds.size === 0) return undefined;
    const each = [...kinds].map(([kind, reason]) => `${kind} (its conversion webhook failed: ${reason})`);
    return `cannot read ${each.join('; ')}`;
  }

  /** The readiness check: throws naming every kind whose reads fail on conversion. */
  check(): boolean {
    const summary = this.summary();
    if (summary) throw new Error(summary);
    return true;
  }
}
