import { KubeApiError } from '../../errors.js';
import type { Lease, LeaseClient } from '../leader-election.js';

/** An in-memory Lease store with the apiserver's optimistic concurrency (409 on stale writes). */
export class FakeLeaseClient implements LeaseClient {
  readonly #leases = new Map<string, Lease>();
  #rv = 1;
  /** While true every call fails, as if the apiserver were unreachable. */
  down = false;

  stored(namespace: string, name: string): Lease | undefined {
    return this.#leases.get(`${namespace}/${name}`);
  }

  get(namespace: string, name: string): Promise<Lease | undefined> {
    if (this.down) return Promise.reject(new Error('apiserver unreachable'));
    const lease = this.#leases.get(`${namespace}/${name}`);
    return Promise.resolve(lease && structuredClone(lease));
  }

  create(lease: Lease): Promise<Lease> {
    if (this.down) return Promise.reject(new Error('apiserver unreachable'));
    const key = `${lease.metadata?.namespace}/${lease.metadata?.name}`;
    if (this.#leases.has(key))
      return Promise.reject(new KubeApiError(409, 'AlreadyExists', { reason: 'AlreadyExists' }));
    return Promise.resolve(this.#store(key, lease));
  }

  replace(lease: Lease): Promise<Lease> {
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
