/**
 * What exists in the hub under fuzz, learnt from its answers: workload, rollout and token ids,
 * cluster names and their registration secrets, revisions, continue tokens. Requests name
 * existing objects by index, so most of them reach past "not found" into the code behind.
 */

/** Most recent values kept per collection. */
const KEEP = 64;

export class Pool {
  readonly #values = new Map<string, string[]>();
  readonly secrets = new Map<string, string>();
  /** Ids that must never be deleted by a fuzzed request (the fuzzer's own tokens). */
  readonly #protected = new Set<string>();

  add(collection: string, value: string): void {
    if (this.#protected.has(value)) return;
    const list = this.#values.get(collection) ?? [];
    if (list.includes(value)) return;
    list.push(value);
    if (list.length > KEEP) list.shift();
    this.#values.set(collection, list);
  }

  /** Forgets a value (an object the hub deleted) in every collection. */
  forget(value: string): void {
    for (const list of this.#values.values()) {
      const i = list.indexOf(value);
      if (i >= 0) list.splice(i, 1);
    }
  }

  protect(value: string): void {
    this.#protected.add(value);
  }

  /** The `pick`-th known value of a collection (modulo its size), or undefined when none. */
  pick(collection: string, pick: number): string | undefined {
    const list = this.#values.get(collection);
    return list && list.length > 0 ? list[pick % list.length] : undefined;
  }

  size(collection: string): number {
    return this.#values.get(collection)?.length ?? 0;
  }

  /** Learns from one JSON answer (any route). */
  harvest(body: unknown): void {
    if (typeof body !== 'object' || body === null) return;
    const b = body as Record<string, unknown>;
    if (typeof b['continue'] === 'string') this.add('continue', b['continue']);
    if (Array.isArray(b['items'])) for (const item of b['items']) this.#object(item);
    this.#object(b);
    if (typeof b['registrationSecret'] === 'string' && typeof b['cluster'] === 'object' && b['cluster'] !== null) {
      const name = (b['cluster'] as Record<string, unknown>)['name'];
      if (typeof name === 'string') this.secrets.set(name, b['registrationSecret']);
    }
    if (typeof b['cluster'] === 'object') this.#object(b['cluster']);
  }

  #object(o: unknown): void {
    if (typeof o !== 'object' || o === null) return;
    const x = o as Record<string, unknown>;
    const id = typeof x['id'] === 'string' ? x['id'] : undefined;
    if (id && 'targetRevision' in x) this.add('rollouts', id);
    else if (id && 'spec' in x && 'kind' in x) {
      this.add('workloads', id);
      if (x['updatePolicy'] === 'Rollout') this.add('rollout-workloads', id);
      if (typeof x['revision'] === 'number') this.add('revisions', String(x['revision']));
    } else if (id && 'role' in x) this.add('tokens', id);
    else if (typeof x['name'] === 'string' && 'state' in x && 'health' in x) this.add('clusters', x['name']);
  }
}
