import { KubeApiError } from '../../errors.js';
import type { Lease, LeaseClient } from '../leader-election.js';

/** An in-memory Lease store with the apiserver's optimistic concurrency (409 on stale writes). */
export class FakeLeaseClient implements LeaseClient {
  readonly #leases = new Map<string, Lease>();
  #rv = 1;
  /** While true every call fails, as if the apiserver were unreachable. */
  down = false;
  /** While true every call hangs until its signal aborts, as with a stuck connection. */
  hang = false;

  stored(namespace: string, name: string): Lease | undefined {
    return this.#leases.get(`${namespace}/${name}`);
  }

  get(namespace: string, name: string, signal?: AbortSignal): Promise<Lease | undefined> {
    if (this.hang) return hangUntil(signal);
    if (this.down) return Promise.reject(new Error('apiserver unreachable'));
    const lease = this.#leases.get(`${namespace}/${name}`);
    return Promise.resolve(lease && structuredClone(lease));
  }

  create(lease: Lease, signal?: AbortSignal): Promise<Lease> {
    if (this.hang) return hangUntil(signal);
    if (this.down) return Promise.reject(new Error('apiserver unreachable'));
    const key = `${lease.metadata?.namespace}/${lease.metadata?.name}`;
    if (this.#leases.has(key))
      return Promise.reject(new KubeApiError(409, 'AlreadyExists', { reason: 'AlreadyExists' }));
    return Promise.resolve(this.#store(key, lease));
  }

  replace(lease: Lease, signal?: AbortSignal): Promise<Lease> {
    if (this.hang) return hangUntil(signal);
    if (this.down) return Promise.reject(new Error('apiserver unreachable'));
    const key = `${lease.metadata?.namespace}/${lease.metadata?.name}`;
    const current = this.#leases.get(key);
    if (!current) return Promise.reject(new KubeApiError(404, 'NotFound', { reason: 'NotFound' }));
    if (current.metadata?.resourceVersion !== lease.metadata?.resourceVersion) {
      return Promise.reject(new KubeApiError(409, 'Conflict', { reason: 'Conflict' }));
    }
    return Promise.resolve(this.#store(key, lease));
  }

  #store(key: string, lease: Lease): Lease {
    const stored = structuredClone(lease);
    stored.metadata = { ...stored.metadata, resourceVersion: String(++this.#rv) };
    this.#leases.set(key, stored);
    return structuredClone(stored);
  }
}

function hangUntil<T>(signal: AbortSignal | undefined): Promise<T> {
  return new Promise((_, reject) =>
    signal?.addEventListener('abort', () => reject(new Error('request aborted')), { once: true }),
  );
}
